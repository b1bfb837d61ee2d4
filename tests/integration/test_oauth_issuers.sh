#!/bin/bash
# Three OAuth issuers and a static token, each speaking only for its own
# users (issue 39).  Issuer A is a real OpenID provider (oidc-provider),
# B and C issuers of the test's own (provider.mjs --bare), all over HTTPS
# with a CA made here; tokens are signed here with the issuers' keys.
# Proven: stockade rules check refuses issuers whose principals or groups
# could meet; B's alice is not A's alice (nor its session); B cannot
# assert A's group or the static tokens'; identities that are not clean
# names are refused, never rewritten (müller and mäller stay apart); crit
# is refused; ES256 signatures of 65 and 66 bytes are refused; a JWKS
# key's alg, key_ops and size bind it; exp = INT64_MAX is refused; and a
# refetch after an unknown kid runs beside the loop: another client is
# answered at once while a slow JWKS is fetched, the token that waited is
# answered when it comes, and only 64 may wait.  The official SDK client
# connects with client credentials over HTTPS.
. "$(dirname "$0")/lib.sh"

OIDC="$HERE/oidc"
PIDS=""
trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" "$T"/op-*.err >&2 2>/dev/null
      for p in $PIDS; do kill "$p" 2>/dev/null; done; stop_mx || true; cleanup' EXIT

command -v node >/dev/null || { echo "no node"; exit 77; }
[ -d "$OIDC/node_modules/oidc-provider" ] ||
	(cd "$OIDC" && npm ci --no-audit --no-fund --loglevel=error) ||
	fail "npm ci in $OIDC"

# A CA of this test's own, and a certificate for 127.0.0.1 from it.
TLS="$T/tls"
mkdir -p "$TLS"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
    -subj /CN=issuers-test-ca -keyout "$TLS/ca.key" -out "$TLS/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
    -keyout "$TLS/server.key" -out "$TLS/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' >"$TLS/ext"
openssl x509 -req -in "$TLS/server.csr" -CA "$TLS/ca.pem" -CAkey "$TLS/ca.key" \
    -CAcreateserial -days 1 -extfile "$TLS/ext" -out "$TLS/server.pem" 2>/dev/null ||
	fail "no server certificate"

start_auditd
mcp_rules
PORT=$(free_port)
RES="http://127.0.0.1:$PORT/mcp"
for who in a b c; do
	node "$OIDC/provider.mjs" "$T/op-$who.port" "$RES" --tls "$TLS" \
	    $([ $who = a ] || echo --bare) 2>"$T/op-$who.err" &
	PIDS="$PIDS $!"
done
for who in a b c; do
	for _ in $(seq 1 500); do [ -s "$T/op-$who.port" ] && break; sleep 0.02; done
	[ -s "$T/op-$who.port" ] || fail "issuer $who did not start"
done
A="https://127.0.0.1:$(cat "$T/op-a.port")"
B="https://127.0.0.1:$(cat "$T/op-b.port")"
C="https://127.0.0.1:$(cat "$T/op-c.port")"

# issuer URL PREFIX-LINE GROUPS-LINES: one issuers entry.
issuer() {
	printf '  - issuer: "%s"\n    audience: "%s"\n    scopes: [mcp:tools]\n' "$1" "$RES"
	printf '    ca_file: %s\n    refresh_min_s: 1\n' "$TLS/ca.pem"
	[ -z "${2:-}" ] || printf '    %s\n' "$2"
	[ -z "${3:-}" ] || printf '    groups_claim: groups\n    groups: %s\n' "$3"
}
TOKS=stat-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
STATIC="tokens:
  - sha256: $(printf %s "$TOKS" | sha256sum | cut -d' ' -f1)
    principal: \"user:static\"
    groups: [analysts]"

# stockade rules check refuses every file where two could make one name.
mkdir -p "$T/bad"
cp -R "$R/." "$T/bad/"
refused() {
	{ echo "$STATIC"; echo "issuers:"; cat; } >"$T/bad/principals.yaml"
	out=$("$STOCKADE" rules check "$T/bad" 2>&1) && fail "rules check took $1"
	echo "$out" | grep -q "$2" || fail "rules check on $1 said: $out"
	note "rules check refuses $1"
}
{ issuer "$A"; issuer "$B"; } | refused "two issuers without principal_prefix" \
    "principal_prefix is required beside another issuer"
{ issuer "$A" 'principal_prefix: "idp:"'; issuer "$B" 'principal_prefix: "idp:"'; } |
    refused "two issuers with one prefix" 'issuer 1.s is "idp:"'
{ issuer "$A" 'principal_prefix: "a:"'; issuer "$B" 'principal_prefix: "a:b:"'; } |
    refused "a prefix that starts another" 'issuer 1.s is "a:"'
{ issuer "$A" 'principal_prefix: ""'; } | refused "an empty prefix" "principal_prefix: 1 to"
{ issuer "$A" 'principal_prefix: "user:"'; } |
    refused "a prefix that makes a static token's principal" "issuer 1's tokens can make this name"
{ issuer "$A" 'principal_prefix: "a:"' "{admins: admins}"
  issuer "$B" 'principal_prefix: "b:"' "{root: admins}"; } |
    refused "one group from two issuers" "admins is issuer 1's already"
{ issuer "$A" 'principal_prefix: "a:"' "{analysts: analysts}"; } |
    refused "an issuer asserting the static tokens' group" "analysts is given by static tokens"
{ issuer "$A" 'principal_prefix: "a:"'; printf '    groups_claim: groups\n'; } |
    refused "groups_claim without its groups map" "say which of its groups count here"

cat >"$R/principals.yaml" <<EOF
$STATIC
issuers:
$(issuer "$A" 'principal_prefix: "a:"' "{admins: admins}")
$(issuer "$B" 'principal_prefix: "b:"' "{ops: b-ops}")
$(issuer "$C" 'principal_prefix: "c:"')
principals:
  - name: "a:alice"
    tools: [execute_python, run_command]
groups:
  - name: admins
    tools: [execute_python, run_command, close_session, list_files, read_file]
  - name: analysts
    tools: [execute_python, run_command]
  - name: b-ops
    tools: [execute_python, list_files]
unlisted:
  tools: [execute_python]
EOF
"$STOCKADE" rules check "$R" >/dev/null || fail "rules check refuses three issuers apart"

"$MX" -v --http "127.0.0.1:$PORT" --rules "$R" --state-dir "$T/mx-state" \
    2>>"$T/mx.err" </dev/null &
MX_PID=$!
for _ in $(seq 1 500); do
	curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break
	kill -0 "$MX_PID" 2>/dev/null || fail "mcp-exec died at start"
	sleep 0.02
done
for k in "$A/jwks" "$B/jwks" "$C/jwks"; do
	grep -q "signing keys\? from $k" "$T/mx.err" || fail "no keys fetched from $k"
done
grep -q "key small: RSA of 1024 bits, under 2048: left out" "$T/mx.err" ||
	fail "the 1024-bit key was not left out"

# The official SDK client over HTTPS, against the first issuer (A).
tools=$(NODE_EXTRA_CA_CERTS="$TLS/ca.pem" node "$OIDC/sdk.mjs" "$RES" 2>"$T/sdk.err") ||
	{ cat "$T/sdk.err" >&2; fail "the SDK client did not connect with OAuth over HTTPS"; }
echo "$tools" | grep -qw execute_python || fail "SDK client: tools $tools"
note "the official SDK client connected with client_credentials over HTTPS: $tools"

"$PY" - "$PORT" "$RES" "$TOKS" "$TLS/ca.pem" "$A" "$B" "$C" <<'EOF' || fail "issuer cases (see above)"
import base64, http.client, json, socket, ssl, sys, threading, time, urllib.request

port, res, tok_static, ca, A, B, C = sys.argv[1:8]
port = int(port)
ctx = ssl.create_default_context(cafile=ca)
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "issuers-test", "version": "1"}}}

def op(iss, path, data=None):
    with urllib.request.urlopen(iss + path, data, context=ctx, timeout=10) as r:
        return r.read().decode()

def sign(iss, name, claims, alg="RS256", header=None):
    return op(iss, "/_test/sign", json.dumps({"name": name, "alg": alg,
        "header": header or {}, "claims": claims}).encode())

def claims(iss, sub, **kw):
    now = int(time.time())
    c = {"iss": iss, "sub": sub, "aud": res, "scope": "mcp:tools",
         "iat": now, "exp": now + 300, "jti": f"j-{time.time()}"}
    c.update(kw)
    return c

def post(tok, msg, sid=None, timeout=30):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    h = {"Content-Type": "application/json",
         "Accept": "application/json, text/event-stream",
         "Authorization": "Bearer " + tok}
    if sid:
        h["Mcp-Session-Id"] = sid
        h["MCP-Protocol-Version"] = "2025-11-25"
    c.request("POST", "/mcp", json.dumps(msg), h)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r, body

def status(tok):
    return post(tok, INIT)[0].status

def expect(name, tok, want):
    got = status(tok)
    if got != want:
        sys.exit(f"FAIL: {name}: {got}, wanted {want}")
    print(f"  {name}: {want}")

def tools(tok):
    r, _ = post(tok, INIT)
    assert r.status == 200, r.status
    sid = r.getheader("Mcp-Session-Id")
    post(tok, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    r, body = post(tok, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, sid)
    assert r.status == 200, (r.status, body[:200])
    if body.startswith(b"event:") or body.startswith(b"data:"):
        body = body.split(b"data: ", 1)[1]
    return sid, sorted(t["name"] for t in json.loads(body)["result"]["tools"])

# 1. One sub, three issuers: three principals, each with its own grants.
sid_a, ta = tools(sign(A, "op", claims(A, "alice")))
_, tb = tools(sign(B, "rs", claims(B, "alice")))
_, tc = tools(sign(C, "rs", claims(C, "alice")))
assert "run_command" in ta, ta
assert tb == ["execute_python"] and tc == ["execute_python"], (tb, tc)
print(f"  a:alice gets {ta}; B's and C's alice get {tb} (unlisted)")
r, _ = post(sign(B, "rs", claims(B, "alice")),
            {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, sid_a)
assert r.status == 403, r.status
print("  B's alice is refused A's alice's session: 403")

# 2. Groups: only through the issuer's own map.
_, t = tools(sign(A, "op", claims(A, "root", groups=["admins"])))
assert "run_command" in t and "read_file" in t, t
_, t = tools(sign(A, "op", claims(A, "root2", groups="admins")))
assert "run_command" in t, t
for g in (["admins"], ["analysts"], ["b-ops", "admins"], "admins"):
    _, t = tools(sign(B, "rs", claims(B, "mallory", groups=g)))
    assert t == ["execute_python"], (g, t)
_, t = tools(sign(B, "rs", claims(B, "opsy", groups=["ops"])))
assert t == ["execute_python", "list_files"], t
print("  A's admins and B's ops count as mapped; B claiming admins, analysts or b-ops gets nothing")

# 3. Identities: taken exactly or refused.
for sub in ["alice\nadmin", "al\x1bice", "\u0430lice", "m\u00fcller",
            "m\u00e4ller", "alice\u202e", "", "alice admin"]:
    expect(f"sub {sub!r}", sign(B, "rs", claims(B, sub)), 401)
expect("sub mueller (ASCII)", sign(B, "rs", claims(B, "mueller")), 200)
for g in ["adm\nins", ["ops", "o\x00ps"], ["ops", 7], {"ops": 1}, ["\u202eops"]]:
    expect(f"groups {g!r}", sign(B, "rs", claims(B, "gina", groups=g)), 401)
expect("client_id with a control byte", sign(B, "rs", claims(B, "carl", client_id="c\x07")), 401)
# As text: JSON numbers past 2^53 do not survive the issuer's JavaScript.
expect("exp = INT64_MAX", sign(B, "rs", json.dumps(claims(B, "eve", exp=2**63 - 1))), 401)

# 4. crit: only an empty list passes.
expect("crit [x-must]", sign(B, "rs", claims(B, "crit"), header={"crit": ["x-must"], "x-must": 1}), 401)
expect("crit [b64]", sign(B, "rs", claims(B, "crit"), header={"crit": ["b64"], "b64": True}), 401)
expect("crit []", sign(B, "rs", claims(B, "crit"), header={"crit": []}), 200)

# 5. ES256: exactly 64 bytes.
es = sign(C, "es", claims(C, "ecdsa"), alg="ES256")
expect("ES256, 64 bytes", es, 200)
head, sig = es.rsplit(".", 1)
raw = base64.urlsafe_b64decode(sig + "==")
enc = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
for name, s in [("65 bytes", raw + b"\0"), ("66 bytes", raw + b"\0\0"),
                ("66 bytes, zeros before r and s", b"\0" + raw[:32] + b"\0" + raw[32:])]:
    expect(f"ES256, {name}", f"{head}.{enc(s)}", 401)

# 6. The JWKS's own restrictions.
expect("PS256 by the key whose alg is PS256", sign(B, "ps", claims(B, "k1"), alg="PS256"), 200)
expect("RS256 by the key whose alg is PS256", sign(B, "ps", claims(B, "k2")), 401)
expect("RS256 by the key whose alg is RS256", sign(B, "rsalg", claims(B, "k3")), 200)
expect("PS256 by the key whose alg is RS256", sign(B, "rsalg", claims(B, "k4"), alg="PS256"), 401)
expect("a key whose key_ops lack verify", sign(B, "enc", claims(B, "k5")), 401)
expect("a 1024-bit RSA key", sign(B, "small", claims(B, "k6")), 401)

# 7. A refetch runs beside the loop.  B's JWKS now answers after 1.5 s;
# a token signed with a key B has just published waits for it, alone.
late = sign(B, "late", claims(B, "rotated"))
# Past the 64 that may wait, a token that would wait gets 503 at once.
flood = [sign(B, "late", claims(B, f"f{i}"), header={"kid": "nope"}) for i in range(70)]
time.sleep(1.1)     # refresh_min_s since the unknown kids above
op(B, "/_test/slow?ms=1500")
op(B, "/_test/publish?kid=late")
hits = int(op(B, "/_test/hits"))
out = {}
def waiter():
    t0 = time.monotonic()
    out["status"] = status(late)
    out["s"] = time.monotonic() - t0
w = threading.Thread(target=waiter)
w.start()
time.sleep(0.3)
# One that waits and then goes: it keeps its place until the fetch ends,
# then its answer goes nowhere (ASan at the stop below says nothing leaked).
gone = socket.create_connection(("127.0.0.1", port))
msg = json.dumps(INIT).encode()
gone.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: "
    b"application/json\r\nAccept: application/json, text/event-stream\r\n"
    b"Authorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s" %
    (port, sign(B, "late", claims(B, "gone")).encode(), len(msg), msg))
time.sleep(0.1)
gone.close()
codes = []
def one(tok):
    codes.append(status(tok))
fl = [threading.Thread(target=one, args=(t,)) for t in flood]
for t in fl:
    t.start()
time.sleep(0.2)
t0 = time.monotonic()
st = status(tok_static)
fast = time.monotonic() - t0
w.join()
for t in fl:
    t.join()
assert st == 200, st
assert fast < 1.0, f"another client waited {fast:.2f} s for the fetch"
assert out["status"] == 200, out
assert out["s"] >= 1.2, f"the waiting token was answered after {out['s']:.2f} s: before the fetch?"
assert int(op(B, "/_test/hits")) > hits, "no refetch reached B"
assert codes.count(503) >= 1 and codes.count(503) + codes.count(401) == 70, sorted(codes)
print(f"  while B's JWKS took 1.5 s: a static token answered in {fast * 1000:.0f} ms; "
      f"the token that waited got 200 after {out['s']:.2f} s; "
      f"{codes.count(503)} of 70 more waiting got 503, the rest 401")
op(B, "/_test/slow?ms=0")
EOF

# The audit trail: each issuer's alice is its own principal.
stop_mx || fail "mcp-exec did not stop cleanly"
verify >/dev/null || fail "audit log does not verify"
for who in "a:alice|$A" "b:alice|$B" "c:alice|$C"; do
	grep -ah '"event":"auth_accepted"' "$LOG"/audit-*.log |
	    grep "\"principal\":\"${who%%|*}\"" | grep -q "\"issuer\":\"${who#*|}\"" ||
	    fail "no auth_accepted for ${who%%|*} from ${who#*|}"
done
note "auth_accepted names a:alice, b:alice and c:alice, each with its issuer"
