#!/bin/bash
# The warm pool of a runtime: gvisor profile (issue 15): runsc's sandbox is
# started ahead with its driver waiting (and pool.preimport done), as a
# native one is.  A new session
# is a pool hit; two pooled sessions differ in random state; each sees an
# empty /workspace and the inputs staged for its call (a file made on the
# host after runsc started); the result says gvisor; stopping leaves no
# sandbox and no runsc behind.  Skipped where runsc cannot run.
. "$(dirname "$0")/lib.sh"

trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" >&2; stop_mx || true; cleanup' EXIT
start_auditd
mcp_rules
printf 'runtime: gvisor\n\npool:\n  size: 1\n  preimport: [decimal]\n' >>"$R/profiles/default.yaml"
gvisor_or_skip
start_mx

"$PY" "$HERE/pool_runtime.py" "$PORT" gvisor || fail "the gvisor pool (see above)"
stop_mx || fail "mcp-exec exit status $?"
[ -z "$(ls "$T/mx-state/sandboxes" 2>/dev/null)" ] || fail "sandboxes left at stop: $(ls "$T/mx-state/sandboxes")"
left=$(pgrep -f -- "--root=$T/mx-state/sandboxes|--root $T/mx-state/sandboxes" || true)
[ -z "$left" ] || fail "runsc processes left behind: $(ps -o pid,args -p $left | cut -c1-200)"
note "stop: the pooled gvisor sandbox torn down, nothing of runsc left"
stop_auditd
verify >/dev/null || fail "audit verify"
