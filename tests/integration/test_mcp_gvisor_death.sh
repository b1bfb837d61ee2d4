#!/bin/bash
# test_mcp_death.sh on gVisor: a SIGKILLed mcp-exec takes runsc, its gofer
# and sentry with it.  One second after the kill nothing of the sandbox
# runs, for a session's call in flight in a sandbox the warm pool built
# and for an `mcp-exec run`; a server started right after removes what
# they left.  Skipped where runsc cannot run.
. "$(dirname "$0")/lib.sh"

start_auditd
mcp_rules
. "$HERE/death_lib.sh"
printf 'runtime: gvisor\n\npool:\n  size: 1\n' >>"$R/profiles/default.yaml"
gvisor_or_skip

# The pool's sandbox, taken by a session whose code then sleeps.
mcp_serve a
box=$(one_box)
wait_for "the pool did not get ready" pool_ready "$PID_a"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_python","arguments":{"timeout_ms":60000,"code":"open(\"started\", \"w\").close()\nimport time\ntime.sleep(60)"}}}' >&"$IN_a"
wait_for "the call's code did not start" test -e "$S/sandboxes/$box/workspace/started"
dies_with "$PID_a" "$box"
eval "exec $IN_a>&-"
note "pooled sandbox, call in flight: nothing of runsc runs ${DIED_MS} ms after the kill"

"$MX" run --rules "$R" --state-dir "$S" --timeout-ms 60000 -- /usr/bin/python3 -I -c \
    'open("/workspace/started", "w").close(); import time; time.sleep(60)' \
    >/dev/null 2>>"$T/mx.err" &
run_pid=$!
ran=$(one_box "$box")
wait_for "mcp-exec run's command did not start" test -e "$S/sandboxes/$ran/workspace/started"
dies_with "$run_pid" "$ran"
note "mcp-exec run: nothing of runsc runs ${DIED_MS} ms after the kill"

sed -i '/^pool:$/,/^  size: 1$/d' "$R/profiles/default.yaml"
"$MX" --stdio --rules "$R" --state-dir "$S" </dev/null >/dev/null 2>>"$T/mx.err"
gone "$box" "$ran"
note "a server started at once removed their directories, mounts and cgroups"
