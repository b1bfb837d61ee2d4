#!/bin/bash
# `mcp-exec run` on a busy host.  The sandbox's network namespace is made
# ahead on a thread (sandbox/netns_ahead.c) that may get no CPU before the
# namespace is needed; the run then clones one itself, and must never
# hang: a clone while that thread still starts or exits copies the locks
# it holds into init, whose setup then times out.  Runs beside two CPU
# hogs, each within 5 s and exit 0; at L0 and L1 both.
. "$(dirname "$0")/lib.sh"

# Sandbox uids walk down to their directories.
chmod 0711 "$T"
"$PY" "$ROOT/tests/escape/run.py" --prepare "$T/esc"
R="$T/esc/rules"
S="$T/mx-state"
RUNS=${BUSY_RUNS:-100}
( while :; do :; done ) & H1=$!
( while :; do :; done ) & H2=$!
hogs_stop() {
	kill "$H1" "$H2" 2>/dev/null || true
	wait "$H1" "$H2" 2>/dev/null || true
}
trap 'hogs_stop; cleanup' EXIT
bad=0
for i in $(seq 1 "$RUNS"); do
	p=escape
	[ $((i % 4)) -ne 0 ] || p=loopback
	if ! timeout 5 "$MX" run --rules "$R" --state-dir "$S" --profile "$p" \
	    -- /bin/true >"$T/out" 2>"$T/err"; then
		bad=$((bad + 1))
		[ "$bad" -gt 3 ] || echo "  run $i ($p): $(head -c 300 "$T/err")"
	fi
done
hogs_stop
[ "$bad" -eq 0 ] || fail "$bad of $RUNS one-shots failed or hung beside CPU hogs"
# Nothing of the runs is left: no sandbox directory.
[ -z "$(ls -A "$S/sandboxes")" ] || fail "sandboxes left in $S/sandboxes"
note "$RUNS one-shots beside two CPU hogs, L0 and L1: none hung, nothing left"
