#!/bin/sh
# `make reload`: the daemons `make run` started read their rules again
# (SIGHUP): each parses every file, keeps its running policy if anything
# is wrong, and records the load (policy_load) either way; their logs,
# on make run's terminal, say what changed.
# STOCKADE_RULES and STOCKADE_STATE as for dist/run.sh.
set -eu
cd "$(dirname "$0")/.."
S=${STOCKADE_STATE:-$PWD/state}
RULES=${STOCKADE_RULES:-$PWD/rules}
: "${BUILD:=build}"
[ -d "$S/run" ] || { echo "reload: no $S/run: is make run running?" >&2; exit 1; }
"$BUILD/stockade" rules check "$RULES" || {
	echo "reload: $RULES does not check; nothing was reloaded" >&2; exit 1; }
dist/audit-conf.sh "$RULES" "$S" >/dev/null
n=0
for d in stockade-auditd netguard mcp-exec; do
	f="$S/run/$d.pid"
	[ -f "$f" ] || continue
	if kill -HUP "$(cat "$f")" 2>/dev/null; then
		echo "reload: $d (pid $(cat "$f")) rereads $RULES"
		n=$((n + 1))
	fi
done
[ $n -gt 0 ] || { echo "reload: no daemon of make run is running" >&2; exit 1; }
