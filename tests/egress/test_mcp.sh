#!/bin/bash
# mcp-exec and netguard together: a session whose profile names an L2
# policy gets it attached before its code runs, fetches from the allowed
# host by name, is refused the metadata address, and one audit tail of its
# session id shows all of it in order; closing the session detaches the
# policy; with netguard gone, no such session starts.
. "$(dirname "$0")/lib.sh"

need_netguard
topo_up
start_auditd
mcp_rules
policy web L2 "$L2_ALLOW"
sed -i "s|^\(  netguard_socket:\).*|\1 $NG_SOCK|" "$R/mcp-exec.yaml"
sed -i "s|^network:.*|network: web|" "$R/profiles/default.yaml"
start_netguard

cat >"$T/fetch.py" <<'PY'
import socket, urllib.request
print(urllib.request.urlopen("http://allowed.test/", timeout=5).read().decode().strip())
# Built at run time: the pattern scanner would refuse the literal, and
# netguard must hold even when code gets past the scanner.
meta = ".".join(str(b) for b in (169, 254, 169, 254))
s = socket.socket()
s.settimeout(2)
try:
    s.connect((meta, 80))
    print("metadata reached")
except OSError as e:
    print("metadata blocked")
PY
args=$("$PY" -c 'import json,sys; print(json.dumps({"code": open(sys.argv[1]).read()}))' "$T/fetch.py")
mcp_serve a
out=$(mcp_call a 1 "$args")
echo "$out" | grep -q 'world 203.0.113.10' || fail "no fetch by name: $out"
echo "$out" | grep -q 'metadata blocked' || fail "metadata not blocked: $out"
sid=$(echo "$out" | sed -n 's/.*"session_id":"\(sess_[0-9a-f]*\)".*/\1/p' | head -1)
[ -n "$sid" ] || fail "no session id: $out"
expect_event egress_attached "session_id=$sid" policy=web level=L2 principal=user:local
expect_event dns_query decision=allow "session_id=$sid" name=allowed.test pinned~203.0.113.10
expect_event egress_denied "session_id=$sid" rule=metadata dst_ip=169.254.169.254 dst_port=80
note "L2 session: allowed.test fetched by name, 169.254.169.254 blocked and audited"
"$STOCKADE" status --audit-socket "$SOCK" --netguard-socket "$NG_SOCK" \
    --mcp-state "$S" >"$T/status" ||
    fail "stockade status: $(cat "$T/status")"
grep -q "^stockade-auditd  running" "$T/status" || fail "status: $(cat "$T/status")"
grep -qE "session $sid  user:local  web L2  10.231.0.2  denied [1-9]" "$T/status" ||
    fail "status lacks the session's sandbox: $(cat "$T/status")"
grep -qE "^mcp-exec         pid $PID_a, profile default, 1 live sessions" "$T/status" ||
    fail "status lacks the MCP server: $(cat "$T/status")"
grep -qE "^  session        $sid  user:local  sandbox [0-9a-f]{16}  network web  since " "$T/status" ||
    fail "status lacks the live session: $(cat "$T/status")"
"$STOCKADE" status --audit-socket "$SOCK" --netguard-socket "$T/nowhere" >/dev/null &&
    fail "status exits 0 with netguard unreachable"
note "stockade status: the audit head, the live session, its sandbox under web (L2)"

# Closing the session takes the policy away.
printf '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"close_session","arguments":{"session_id":"%s"}}}\n' "$sid" >&"$IN_a"
expect_event egress_detached "session_id=$sid" reason="detach requested"
[ "$(net status --socket "$NG_SOCK" | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)["attached"]))')" = 0 ] ||
    fail "still attached after close_session"
"$STOCKADE" audit tail "$LOG" -n 100 --session "$sid" >"$T/tail" 2>&1 || true
order=$(sed -n 's/.*"event":"\([a-z_]*\)".*/\1/p' "$T/tail" | tr '\n' ' ')
for e in session_created egress_attached execution_started dns_query \
    egress_denied code_execution session_closed egress_detached; do
	echo " $order" | grep -q " $e " || fail "audit tail --session lacks $e: $order"
done
echo "$order" | grep -q 'egress_attached.*execution_started.*dns_query.*egress_denied.*code_execution' ||
    fail "out of order: $order"
note "one audit tail --session: created, attached, started, dns, denied, execution, closed, detached"

# Without netguard a session that needs it does not start.
stop_netguard || true
NG_PID=""
out=$(mcp_call a 3 '{"code":"print(1)"}')
echo "$out" | grep -q "network policy 'web' not attached" ||
    fail "a session started without netguard: $out"
echo "$out" | grep -q '"isError":true' || fail "not a tool error: $out"
expect_event call_refused principal=user:local "reason~network policy 'web' not attached"
note "netguard down: the session is refused (tool error), nothing ran"

eval "exec $IN_a>&-"
wait "$PID_a" || fail "mcp-exec did not stop cleanly"
ls "$S"/sessions-*.json >/dev/null 2>&1 && fail "the session list outlived mcp-exec"
egress_finish
note "mcp: audit log verifies"
