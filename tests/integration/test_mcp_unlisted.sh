#!/bin/bash
# The shipped rules/principals.yaml denies by default: a caller whose
# principal (and groups) it names nowhere, here a bearer token's, sees no
# tool and runs nothing, and the refusal is audited; server.local_principal
# (a stdio client; every HTTP client of `make run`, which lists no token)
# is listed and has every tool.  Nothing here starts a sandbox.
. "$(dirname "$0")/lib.sh"

trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" >&2; stop_mx || true; cleanup' EXIT

start_auditd
mcp_rules
"$STOCKADE" rules check "$R" >/dev/null || fail "rules check refuses the shipped rules"

# The shipped file with one token added, for a principal it does not name.
TOK=tok-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
sed -i "s|^tokens: \[\]|tokens:\n  - sha256: $(printf %s "$TOK" | sha256sum | cut -d' ' -f1)\n    principal: \"user:mallory\"|" \
    "$R/principals.yaml"
grep -q 'principal: "user:mallory"' "$R/principals.yaml" || fail "sed missed tokens: []"
start_mx

"$PY" - "$MX" "$R" "$S" "http://127.0.0.1:$PORT/mcp" "$TOK" "$T/stdio.err" <<'EOF' || fail "the shipped principals (see above)"
import sys
sys.path.insert(0, "tests/integration")
from mcpclient import Stdio, Http

mx, rules, state, url, tok, err = sys.argv[1:7]
local = Stdio([mx, "--stdio", "--rules", rules, "--state-dir", state],
              stderr=open(err, "w"))
local.initialize()
names = {t["name"] for t in local.call("tools/list")["tools"]}
assert {"execute_python", "run_command", "close_session"} <= names, names
assert local.close() == 0
print("  server.local_principal (stdio, make run): every tool, %d" % len(names))

m = Http(url, tok)
m.initialize()
assert m.call("tools/list")["tools"] == [], "an unlisted caller sees tools"
r = m.tool("execute_python", {"code": "print(1)"})
assert r.get("isError") and "stdout" not in r.get("structuredContent", {}), r
print("  a token's principal listed nowhere: no tool, nothing runs")
EOF
stop_mx || fail "mcp-exec did not stop cleanly"
grep -a '"event":"call_refused"' "$LOG"/audit-*.log | grep '"principal":"user:mallory"' |
    grep -q '"rule_id":"authz:tools"' || fail "the refusal of user:mallory is not audited"
note "refused as authz:tools, audited"
