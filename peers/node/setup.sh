#!/usr/bin/env bash
# Installs the Node peer of `ocbench bench`: Node 24 and openclaw@2026.9.6, so that
# the bench can time OpenClaw's own stream-wrapper chain in process (chain.mjs) on the
# bytes of ocbench's decode+chain scenarios. Idempotent: re-running is cheap.
#
#   $OCBENCH_NODE_DIR/node/package/bin/node   Node 24.22.3, from the npm package
#                                            node-linux-<arch> (openclaw@2026.9.6 needs >= 24.16)
#   $OCBENCH_NODE_DIR/oc/node_modules         openclaw@2026.9.6 (with @openclaw/ai@2026.9.6),
#                                            installed with --ignore-scripts from lock/
#
#   $OCBENCH_NODE_DIR/ready                  written last, once both are checked: `ocbench bench`
#                                            takes the peer as installed only then, so a run
#                                            beside an install in progress skips it
#
# OCBENCH_NODE_DIR defaults to ${XDG_CACHE_HOME:-$HOME/.cache}/ocbench/node, where
# `ocbench bench` looks for it. Needs npm (any version) and the npm registry; about
# 200 MB and a minute.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DIR=${OCBENCH_NODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ocbench/node}
NODE_VERSION=24.22.3
OPENCLAW_VERSION=2026.9.6
# The openclaw@2026.9.6 bundle chunk that holds the stream wrappers chain.mjs calls.
CHUNK=builtin-openclaw-q1hiFm14.mjs

READY="$DIR/ready"
rm -f "$READY"
command -v npm >/dev/null || { echo "peers/node/setup.sh: npm is required (apt-get install npm)" >&2; exit 1; }
case "$(uname -m)" in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "peers/node/setup.sh: unsupported machine $(uname -m)" >&2; exit 1 ;;
esac

# 1. Node 24: the npm package node-linux-<arch> ships the binary.
node="$DIR/node/package/bin/node"
if [ -x "$node" ] && [ "$("$node" --version 2>/dev/null)" = "v$NODE_VERSION" ]; then
  echo "node $NODE_VERSION: present at $node"
else
  mkdir -p "$DIR/node"
  (
    cd "$DIR/node"
    rm -rf package "node-linux-$arch-$NODE_VERSION.tgz"
    npm pack --silent "node-linux-$arch@$NODE_VERSION" >/dev/null
    tar xzf "node-linux-$arch-$NODE_VERSION.tgz"
    rm -f "node-linux-$arch-$NODE_VERSION.tgz"
  )
  [ "$("$node" --version)" = "v$NODE_VERSION" ] || { echo "peers/node/setup.sh: node install failed" >&2; exit 1; }
  echo "node $NODE_VERSION: installed at $node"
fi

# 2. openclaw, from the locked tree.
version_of() { # the version in an installed package's package.json, or nothing
  sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$DIR/oc/node_modules/$1/package.json" 2>/dev/null | head -n 1
}
if [ "$(version_of openclaw)" = "$OPENCLAW_VERSION" ] && [ -f "$DIR/oc/node_modules/openclaw/dist/$CHUNK" ]; then
  echo "openclaw $OPENCLAW_VERSION: present in $DIR/oc"
else
  mkdir -p "$DIR/oc"
  cp "$HERE/lock/package.json" "$HERE/lock/package-lock.json" "$DIR/oc/"
  (
    cd "$DIR/oc"
    if ! npm ci --ignore-scripts --no-audit --no-fund --loglevel=error; then
      echo "peers/node/setup.sh: npm ci failed; falling back to npm install of the pinned package" >&2
      npm install --ignore-scripts --no-audit --no-fund --loglevel=error "openclaw@$OPENCLAW_VERSION"
    fi
  )
  [ "$(version_of openclaw)" = "$OPENCLAW_VERSION" ] || { echo "peers/node/setup.sh: openclaw install failed" >&2; exit 1; }
  [ -f "$DIR/oc/node_modules/openclaw/dist/$CHUNK" ] ||
    { echo "peers/node/setup.sh: $CHUNK missing: chain.mjs targets openclaw@$OPENCLAW_VERSION only" >&2; exit 1; }
  echo "openclaw $OPENCLAW_VERSION: installed in $DIR/oc"
fi

printf 'node %s\nopenclaw %s\n' "$NODE_VERSION" "$OPENCLAW_VERSION" > "$READY.tmp"
mv "$READY.tmp" "$READY"
