#!/bin/bash
# Per-principal fairness over HTTP: one principal filling its share of
# MCP sessions (server.http.max_sessions_per_principal) leaves room for
# another; its own never-used sessions make way for its new ones; past its
# share, with all in use, it gets a 429 that names the setting; open
# requests are capped per principal too.  Then a normal client is served
# and the audit log verifies.
. "$(dirname "$0")/lib.sh"

trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" >&2; stop_mx || true; cleanup' EXIT

start_auditd
mcp_rules
mcp_tokens "user:a" "user:b"
start_mx

PYTHONPATH="$HERE" "$PY" - "$PORT" "$TOKA" "$TOKB" <<'EOF' || fail "fairness (see above)"
import sys
from httpraw import initialize, post

port, ta, tb = int(sys.argv[1]), sys.argv[2], sys.argv[3]
# Finding 3: A opens 300 bare sessions (more than the whole table).
codes = [initialize(port, ta)[0] for _ in range(300)]
print("A: %d x 200, others %s" % (codes.count(200),
      sorted(set(c for c in codes if c != 200))))
st, sid_b = initialize(port, tb)
assert st == 200 and sid_b, "B locked out after A's 300 initializes: %s" % st
# B's session works.
st, _, body = post(port, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                   tb, sid_b)
assert st == 200 and b"execute_python" in body, (st, body[:200])

# A fills its share with sessions in use: then 429, naming the limit.
used = []
for i in range(40):
    st, sid = initialize(port, ta)
    if st != 200:
        break
    st2, _, _ = post(port, {"jsonrpc": "2.0", "id": 3, "method": "ping"}, ta, sid)
    assert st2 == 200, st2
    used.append(sid)
st, h, body = post(port, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "x", "version": "1"}}}, ta)
print("A with %d sessions in use: %d %s" % (len(used), st, body[:160]))
assert st == 429 and b"max_sessions_per_principal" in body, (st, body)
# B still gets in.
st, sid_b2 = initialize(port, tb)
assert st == 200 and sid_b2, "B refused while A is at its share: %s" % st
EOF
note "300 bare initializes of A leave room for B; A's unused sessions make way; A in use past its share: 429 naming the setting"

stop_mx || fail "mcp-exec exit status $? at SIGTERM"
verify >/dev/null || fail "audit log does not verify"
