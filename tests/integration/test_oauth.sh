#!/bin/bash
# OAuth 2.1 resource server against a real OpenID provider (npm
# oidc-provider, tests/integration/oidc/provider.mjs) on loopback:
# client_credentials JWT access tokens accepted; expired, not yet valid,
# wrong audience, wrong issuer, unknown kid, alg none, HS256 keyed with the
# public key, and tampered tokens refused with 401 and WWW-Authenticate;
# a missing scope is 403 insufficient_scope; RFC 9728 metadata names the
# provider; key rotation at the provider is picked up; groups come from
# the claim, through the issuer's groups map; static tokens still work;
# SIGHUP changes the issuers without ending a session; every decision is
# in the audit trail.  The official SDK client (v1) connects with its
# client-credentials OAuth provider.
. "$(dirname "$0")/lib.sh"

OIDC="$HERE/oidc"
OP_PID=""
trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" "$T/op.err" >&2 2>/dev/null
      [ -z "$OP_PID" ] || kill "$OP_PID" 2>/dev/null; stop_mx || true; cleanup' EXIT

command -v node >/dev/null || { echo "no node"; exit 77; }
[ -d "$OIDC/node_modules/oidc-provider" ] ||
	(cd "$OIDC" && npm ci --no-audit --no-fund --loglevel=error) ||
	fail "npm ci in $OIDC"

start_auditd
mcp_rules
PORT=$(free_port)
RES="http://127.0.0.1:$PORT/mcp"

node "$OIDC/provider.mjs" "$T/op.port" "$RES" 2>"$T/op.err" &
OP_PID=$!
for _ in $(seq 1 500); do [ -s "$T/op.port" ] && break; sleep 0.02; done
[ -s "$T/op.port" ] || fail "the OpenID provider did not start"
ISS="http://127.0.0.1:$(cat "$T/op.port")"

TOKS=stat-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
cat >"$R/principals.yaml" <<EOF
tokens:
  - sha256: $(printf %s "$TOKS" | sha256sum | cut -d' ' -f1)
    principal: "user:static"
issuers:
  - issuer: "$ISS"
    audience: "$RES"
    scopes: [mcp:tools]
    groups_claim: groups
    # Its group ops is ours as idp-ops; its analysts is nothing here.
    groups: { ops: idp-ops }
    refresh_min_s: 1
    # Tests only: the provider speaks plain http on loopback.
    insecure_http_loopback: true
# A group from the token's groups claim decides what its members may use.
groups:
  - name: idp-ops
    tools: [execute_python]
EOF
"$STOCKADE" rules check "$R" >/dev/null || fail "rules check refuses the issuers"

"$MX" -v --http "127.0.0.1:$PORT" --rules "$R" --state-dir "$T/mx-state" \
    2>>"$T/mx.err" </dev/null &
MX_PID=$!
for _ in $(seq 1 250); do
	curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break
	kill -0 "$MX_PID" 2>/dev/null || fail "mcp-exec died at start"
	sleep 0.02
done
grep -q "1 signing key from $ISS/jwks" "$T/mx.err" || fail "no JWKS fetched at load"

# The official SDK client, with its client-credentials OAuth provider: it
# finds the provider through our 401 and RFC 9728 metadata on its own.
tools=$(node "$OIDC/sdk.mjs" "$RES" 2>"$T/sdk.err") ||
	{ cat "$T/sdk.err" >&2; fail "the SDK client did not connect with OAuth"; }
echo "$tools" | grep -qw execute_python || fail "SDK client: tools $tools"
note "the official SDK client connected with client_credentials: $tools"

"$PY" - "$PORT" "$ISS" "$RES" "$TOKS" "$T" <<'EOF' || fail "OAuth cases (see above)"
import base64, http.client, json, os, sys, time, urllib.parse, urllib.request

port, iss, res, tok_static, tmp = sys.argv[1:6]
port = int(port)
MD = f'resource_metadata="http://127.0.0.1:{port}/.well-known/oauth-protected-resource"'

def op(path, data=None):
    body = urllib.parse.urlencode(data).encode() if data else None
    with urllib.request.urlopen(iss + path, body, timeout=10) as r:
        return r.read().decode()

def cc_token(scope="mcp:tools", resource=res):
    return json.loads(op("/token", {"grant_type": "client_credentials",
        "client_id": "mcp-client", "client_secret": "mcp-secret",
        "scope": scope, "resource": resource}))["access_token"]

def post(tok, msg, sid=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    h = {"Content-Type": "application/json",
         "Accept": "application/json, text/event-stream"}
    if tok is not None:
        h["Authorization"] = "Bearer " + tok
    if sid:
        h["Mcp-Session-Id"] = sid
    c.request("POST", "/mcp", json.dumps(msg), h)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r, body

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "oauth-test", "version": "1"}}}

def init(tok):
    r, body = post(tok, INIT)
    return r

def expect(name, tok, status, *header_parts):
    if status != 200:
        time.sleep(0.2)     # at most 5 refusals a second are audited
    r = init(tok)
    www = r.getheader("WWW-Authenticate") or ""
    if r.status != status or any(p not in www for p in header_parts):
        sys.exit(f"FAIL: {name}: {r.status} {www!r}, wanted {status} {header_parts}")
    print(f"  {name}: {status}")
    return r

# RFC 9728: the metadata names the provider, its scopes and our resource.
c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
c.request("GET", "/.well-known/oauth-protected-resource")
md = json.loads(c.getresponse().read())
assert md["authorization_servers"] == [iss], md
assert md["resource"] == res and "mcp:tools" in md["scopes_supported"], md

expect("no token", None, 401, MD)
good = cc_token()
r = expect("client_credentials token", good, 200)
sid = r.getheader("Mcp-Session-Id")
r, _ = post(good, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
assert r.status == 202, r.status
r, body = post(good, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, sid)
assert r.status == 200 and b"execute_python" in body, (r.status, body[:200])
expect("static bearer token", tok_static, 200)

bad = 'error="invalid_token"'
expect("wrong audience (from the provider)", cc_token(resource="http://127.0.0.1:1/mcp"), 401, MD, bad)
expect("scope missing", cc_token(scope="other"), 403, 'error="insufficient_scope"', 'scope="mcp:tools"', MD)
for kind in ["expired", "notyet", "issuer", "audience", "kid", "none", "hs256"]:
    expect(kind, op(f"/_test/mint?kind={kind}"), 401, MD, bad)
h, p, s = good.split(".")
claims = json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))
claims["sub"] = "admin"
p2 = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
expect("tampered payload", f"{h}.{p2}.{s}", 401, MD, bad)
expect("minted by the test with the provider's key", op("/_test/mint?kind=good"), 200)
expect("groups claim", op("/_test/mint?kind=groups"), 200)
# Its group ops (ours: idp-ops) may use execute_python alone.
gtok = op("/_test/mint?kind=groups")
r = init(gtok)
gsid = r.getheader("Mcp-Session-Id")
post(gtok, {"jsonrpc": "2.0", "method": "notifications/initialized"}, gsid)
r, body = post(gtok, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, gsid)
assert r.status == 200 and b"execute_python" in body, (r.status, body[:200])
assert b"run_command" not in body, "the groups claim's ops did not limit the tools"
print("  the token's groups claim chose the tools (its ops, our idp-ops: execute_python)")

# The provider rotates its key: the new kid is fetched on first sight.
time.sleep(1.1)     # refresh_min_s: the unknown kid above refreshed once
op("/_test/rotate")
rotated = cc_token()
expect("token signed with the rotated key", rotated, 200)
time.sleep(1.1)
expect("token signed with the key rotated away", good, 401, bad)

# A session that must outlive the SIGHUP below (its token has both scopes).
both = cc_token(scope="mcp:tools other")
r = init(both)
sid = r.getheader("Mcp-Session-Id")
post(both, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
open(tmp + "/session", "w").write(sid + "\n" + both)
EOF

# SIGHUP: the issuer now requires a second scope; the live session goes
# on, and a new session with a token lacking that scope gets 403.
sed -i 's/scopes: \[mcp:tools\]/scopes: [mcp:tools, other]/' "$R/principals.yaml"
kill -HUP "$MX_PID"
for _ in $(seq 1 250); do grep -q "reloaded:" "$T/mx.err" && break; sleep 0.02; done
grep -q "reloaded:" "$T/mx.err" || fail "no reload"
"$PY" - "$PORT" "$T/session" "$ISS" "$RES" <<'EOF' || fail "after SIGHUP (see above)"
import http.client, json, sys, urllib.parse, urllib.request
port, f, iss, res = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
sid, both = open(f).read().split("\n")
def post(tok, msg, sid=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    h = {"Content-Type": "application/json", "Accept": "application/json",
         "Authorization": "Bearer " + tok, "MCP-Protocol-Version": "2025-11-25"}
    if sid:
        h["Mcp-Session-Id"] = sid
    c.request("POST", "/mcp", json.dumps(msg), h)
    r = c.getresponse()
    return r, r.read(), r.getheader("WWW-Authenticate") or ""
r, body, www = post(both, {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}, sid)
assert r.status == 200 and b"execute_python" in body, (r.status, body[:300])
print("  the session made before SIGHUP goes on")
data = urllib.parse.urlencode({"grant_type": "client_credentials",
    "client_id": "mcp-client", "client_secret": "mcp-secret",
    "scope": "mcp:tools", "resource": res}).encode()
one = json.loads(urllib.request.urlopen(iss + "/token", data).read())["access_token"]
r, body, www = post(one, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"}}})
assert r.status == 403 and 'scope="other"' in www, (r.status, www)
print('  after SIGHUP: a token without the added scope gets 403 scope="other"')
EOF

# The provider goes away, then SIGHUP: the keys fetched before are kept,
# so tokens already issued still work.
kill "$OP_PID"; wait "$OP_PID" 2>/dev/null || true; OP_PID=""
kill -HUP "$MX_PID"
for _ in $(seq 1 250); do [ "$(grep -c "reloaded:" "$T/mx.err")" = 2 ] && break; sleep 0.02; done
# The refetch runs beside the loop: its failure comes after the reload.
for _ in $(seq 1 500); do grep -q "keeping the 1 keys fetched before" "$T/mx.err" && break; sleep 0.02; done
grep -q "keeping the 1 keys fetched before" "$T/mx.err" || fail "keys not kept across SIGHUP"
SID=$(head -1 "$T/session"); TOK=$(tail -1 "$T/session")
st=$(curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $TOK" \
    -H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-11-25' \
    -H 'Content-Type: application/json' -H 'Accept: application/json' \
    -d '{"jsonrpc":"2.0","id":11,"method":"tools/list"}' "$RES")
[ "$st" = 200 ] || fail "with the provider gone, a SIGHUP locked the token out: $st"
note "provider down at SIGHUP: the keys fetched before are kept"

# The audit trail: each refusal with its reason, each session's proof.
stop_mx || fail "mcp-exec did not stop cleanly"
verify
for why in "expired" "not valid before" "issuer http://127.0.0.1:1/other is not trusted" \
    "audience is not $RES" "no RS256 key with kid k-unknown" "alg none is not accepted" \
    "alg HS256 is not accepted" "signature does not verify" "scope mcp:tools not granted"; do
	grep -ah '"event":"call_refused"' "$LOG"/audit-*.log | grep -q "$why" ||
	    { grep -ah call_refused "$LOG"/audit-*.log | cut -c1-400 >&2; fail "no call_refused record saying: $why"; }
done
grep -ah '"event":"auth_accepted"' "$LOG"/audit-*.log | grep '"principal":"oidc:mcp-client"' |
    grep "\"issuer\":\"$ISS\"" | grep '"client_id":"mcp-client"' |
    grep -q '"jti_sha256":"[0-9a-f]\{64\}"' ||
    fail "no auth_accepted record with issuer, client and jti hash"
grep -ah '"event":"auth_accepted"' "$LOG"/audit-*.log | grep -q '"groups":\["idp-ops"\]' ||
    fail "no auth_accepted record with the token's groups, as ours"
grep -ah '"event":"auth_accepted"' "$LOG"/audit-*.log | grep -q '"auth":"bearer"' ||
    fail "no auth_accepted record for the static token"
note "refusals and acceptances audited with issuer, client_id, jti hash, groups"
