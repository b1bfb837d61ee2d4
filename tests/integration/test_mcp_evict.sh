#!/bin/bash
# The global cap across principals (issue 11): with server.sessions
# max_total 2, B's call evicts A's least recently used idle session
# rather than being refused, the eviction is audited, and nothing of A's
# reaches B: B's reply names no other session or principal, and A only
# learns that its session is gone ("session not found").
. "$(dirname "$0")/lib.sh"

trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" >&2; stop_mx || true; cleanup' EXIT
start_auditd
mcp_rules
sed -i -e 's/^    max_total: .*/    max_total: 2/' -e 's/^    max_per_principal: .*/    max_per_principal: 2/' \
    "$R/mcp-exec.yaml"
grep -q '^    max_total: 2$' "$R/mcp-exec.yaml" || fail "sed missed max_total"
mcp_tokens "user:alice" "user:bob"
start_mx
"$PY" - "$PORT" "$TOKA" "$TOKB" "$HERE" <<'PYEOF' || fail "cross-principal eviction (see above)"
import json, sys
sys.path.insert(0, sys.argv[4])
from mcpclient import Http, structured
url = "http://127.0.0.1:%s/mcp" % sys.argv[1]
a, b = Http(url, sys.argv[2]), Http(url, sys.argv[3])
a.initialize(); b.initialize()
old = structured(a.tool("execute_python", {"code": "x = 1"}))["session_id"]
new = structured(a.tool("execute_python", {"code": "y = 2"}))["session_id"]
r = b.tool("execute_python", {"code": "print('b ran')"})
s = structured(r)
assert s["stdout"] == "b ran\n", r
text = json.dumps(r)
assert old not in text and new not in text and "alice" not in text, text
gone = a.tool("execute_python", {"code": "print(x)", "session_id": old})
assert gone["isError"] and gone["content"][0]["text"] == "session not found", gone
kept = structured(a.tool("execute_python", {"code": "print(y)", "session_id": new}))
assert kept["stdout"] == "2\n", kept
print("  B at the global cap evicts A's oldest idle session; B hears nothing of A, A only 'session not found'")
PYEOF
stop_mx || fail "mcp-exec exit status $?"
stop_auditd
grep -a '"event":"session_evicted"' "$LOG"/audit-*.log | grep -q '"principal":"user:alice"' ||
    fail "no session_evicted record for alice's session"
verify >/dev/null || fail "audit verify"
note "the eviction is in the trail (session_evicted, alice); the log verifies"
