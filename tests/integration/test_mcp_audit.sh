#!/bin/bash
# mcp-exec and a restarting audit daemon: while stockade-auditd is down no
# code runs (the call is a tool error); once it is back, the next call
# reconnects and runs; the trail of the whole story verifies.
. "$(dirname "$0")/lib.sh"

start_auditd
mcp_rules
mcp_serve a
mcp_call a 1 '{"code":"open(\"one\",\"w\").write(\"1\")"}' | grep -q '"isError":false' ||
	fail "a call with the daemon up did not run"
sid=$(sed -n 's/.*"session_id":"\(sess_[0-9a-f]*\)".*/\1/p' "$T/a.out" | head -1)
box=$(ls "$S/sandboxes")

stop_auditd
mcp_call a 2 "{\"code\":\"open('two','w').write('2')\",\"session_id\":\"$sid\"}" |
	grep -q 'not run: the audit trail is unavailable' ||
	fail "a call ran with the audit daemon down: $(tail -1 "$T/a.out")"
[ ! -e "$S/sandboxes/$box/workspace/two" ] || fail "the refused code ran"
note "daemon down: refused, the code did not run"

start_auditd
mcp_call a 3 "{\"code\":\"print(open('one').read())\",\"session_id\":\"$sid\"}" |
	grep -q '"stdout":"1\\n"' || fail "no reconnect after the daemon came back"
note "daemon back: the next call reconnects and runs"

eval "exec $IN_a>&-"
wait "$PID_a" || fail "mcp-exec did not stop cleanly"
stop_auditd
verify >/dev/null
n=$(cat "$LOG"/audit-*.log | grep -c '"event":"code_execution"')
[ "$n" = 2 ] || fail "$n code_execution records, want 2"
grep -q '"event":"session_closed"' "$LOG"/audit-*.log || fail "no session_closed"
note "trail verifies: 2 executions, the session's close"
