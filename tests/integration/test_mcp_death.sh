#!/bin/bash
# A SIGKILLed mcp-exec takes its sandboxes with it (issue 33): one second
# after the kill nothing of them runs, whether a session's call was in
# flight, the sandbox was pooled for the next session, or it was an
# `mcp-exec run`; and a server started right after removes what they left
# (directories, workspace mounts, cgroups).  gVisor: test_mcp_gvisor_death.sh.
. "$(dirname "$0")/lib.sh"

start_auditd
mcp_rules
. "$HERE/death_lib.sh"

# A session's call in flight: the code has started, and sleeps on.
mcp_serve a
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_python","arguments":{"timeout_ms":60000,"code":"open(\"started\", \"w\").close()\nimport time\ntime.sleep(60)"}}}' >&"$IN_a"
box=$(one_box)
wait_for "the call's code did not start" test -e "$S/sandboxes/$box/workspace/started"
dies_with "$PID_a" "$box"
eval "exec $IN_a>&-"
note "session, call in flight: nothing runs ${DIED_MS} ms after the kill"

# A pooled sandbox, its driver waiting for a session.
printf '\npool:\n  size: 1\n' >>"$R/profiles/default.yaml"
mcp_serve b
pooled=$(one_box "$box")
wait_for "the pool did not get ready" pool_ready "$PID_b"
dies_with "$PID_b" "$pooled"
eval "exec $IN_b>&-"
note "pooled sandbox: nothing runs ${DIED_MS} ms after the kill"
sed -i '/^pool:$/,/^  size: 1$/d' "$R/profiles/default.yaml"

# `mcp-exec run`, its command sleeping.
"$MX" run --rules "$R" --state-dir "$S" --timeout-ms 60000 -- /usr/bin/python3 -I -c \
    'open("/workspace/started", "w").close(); import time; time.sleep(60)' \
    >/dev/null 2>>"$T/mx.err" &
run_pid=$!
ran=$(one_box "$box" "$pooled")
wait_for "mcp-exec run's command did not start" test -e "$S/sandboxes/$ran/workspace/started"
dies_with "$run_pid" "$ran"
note "mcp-exec run: nothing runs ${DIED_MS} ms after the kill"

# A server started at once (as systemd's Restart= does) removes the remains.
"$MX" --stdio --rules "$R" --state-dir "$S" </dev/null >/dev/null 2>>"$T/mx.err"
gone "$box" "$pooled" "$ran"
note "a server started at once removed their directories, mounts and cgroups"
