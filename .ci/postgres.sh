#!/usr/bin/env bash
# Sourced by .ci/run: starts a throwaway PostgreSQL cluster for the tests
# (loopback only, in a temporary directory, as an unprivileged user) and
# exports OCBENCH_TEST_POSTGRES_URL; the cluster is stopped and removed on
# exit. Installs the system's postgresql package when no server is found.
pg_bindir() {
	local d
	if command -v pg_config >/dev/null 2>&1; then
		d=$(pg_config --bindir 2>/dev/null)
		[ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { echo "$d"; return; }
	fi
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		[ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { echo "$d"; return; }
	done
	if command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; fi
	return 0 # nothing found is not an error under set -e
}

start_test_postgres() {
	local bindir
	bindir=$(pg_bindir)
	if [ -z "$bindir" ]; then
		echo "postgres: not installed; installing the system package"
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
		bindir=$(pg_bindir)
	fi
	if [ -z "$bindir" ]; then
		echo "postgres: unavailable; tests that need it will skip"
		return 0
	fi
	PG_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ocbench-pg.XXXXXX")
	chmod 755 "$PG_TMP"
	local run=()
	if [ "$(id -u)" = 0 ]; then
		# The server refuses to run as root.
		chown nobody "$PG_TMP"
		local ru
		for ru in "$(command -v runuser 2>/dev/null || true)" /usr/sbin/runuser /sbin/runuser; do
			[ -n "$ru" ] && [ -x "$ru" ] && break
		done
		if [ -n "$ru" ] && [ -x "$ru" ]; then
			run=("$ru" -u nobody --)
		else
			run=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
		fi
	fi
	local port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()' 2>/dev/null || echo 55432)
	"${run[@]}" "$bindir/initdb" -D "$PG_TMP/data" -U ocbench -A trust --no-sync -E UTF8 >"$PG_TMP/initdb.log" 2>&1 || {
		cat "$PG_TMP/initdb.log"; echo "postgres: initdb failed; tests that need it will skip"; rm -rf "$PG_TMP"; return 0; }
	"${run[@]}" "$bindir/pg_ctl" -D "$PG_TMP/data" -l "$PG_TMP/server.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $port -k $PG_TMP -c fsync=on -c max_connections=200" start >/dev/null || {
		cat "$PG_TMP/server.log"; echo "postgres: start failed; tests that need it will skip"; return 0; }
	export OCBENCH_TEST_POSTGRES_URL="postgres://ocbench@127.0.0.1:$port/postgres?sslmode=disable"
	PG_STOP=("${run[@]}" "$bindir/pg_ctl" -D "$PG_TMP/data" -m immediate stop)
	trap 'stop_test_postgres' EXIT
	echo "postgres: test cluster on 127.0.0.1:$port ($bindir)"
}

stop_test_postgres() {
	[ -n "${PG_TMP:-}" ] || return 0
	"${PG_STOP[@]}" >/dev/null 2>&1 || true
	rm -rf "$PG_TMP"
}
