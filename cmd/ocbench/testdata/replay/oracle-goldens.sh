#!/bin/sh
# Regenerates the openclaw golden files (NAME.openclaw.json) with OpenClaw
# 2026.9.6 itself: the replay oracle (openclaw-replay.mjs, batch mode) runs
# every openclaw case of TestReplayGolden and its final messages become the
# expectation. Tests only read the files this writes.
#
#   ORACLE=/path/to/openclaw-replay.mjs NODE=/path/to/node cmd/ocbench/testdata/replay/oracle-goldens.sh
#
# (run from the repository root; OCPEER_DIR is passed through to the oracle)
set -eu
: "${ORACLE:?set ORACLE to openclaw-replay.mjs}"
NODE=${NODE:-node}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test ./cmd/ocbench -run '^TestReplayGolden$' -count=1 -oracle-batch "$tmp/in" >/dev/null
"$NODE" "$ORACLE" --batch "$tmp/in" --out "$tmp/out"
n=0
for f in "$tmp"/out/*.json; do
  cp "$f" "cmd/ocbench/testdata/replay/$(basename "$f")"
  n=$((n + 1))
done
echo "oracle-goldens: $n openclaw golden files written"
