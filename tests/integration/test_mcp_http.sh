#!/bin/bash
# mcp-exec over Streamable HTTP: MCP sessions (initialize, Mcp-Session-Id,
# DELETE), replies as JSON and as SSE with progress, 202 for notifications,
# the HTTP refusals (400, 403 for a foreign Host or Origin, 404, 405, 406,
# 413), then bearer tokens from principals.yaml: 401 without, principals
# kept apart, refused tokens audited.
. "$(dirname "$0")/lib.sh"

# On failure, mcp-exec's last words help more than the assertion.
trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" >&2; stop_mx || true; cleanup' EXIT

start_auditd
mcp_rules

# Without tokens, a non-loopback address is refused before anything runs.
st=0; msg=$("$MX" --http "0.0.0.0:$(free_port)" --rules "$R" 2>&1) || st=$?
[ $st = 1 ] || fail "non-loopback without tokens: exit $st"
echo "$msg" | grep -q "not a loopback address" || fail "message: $msg"
st=0; "$MX" --stdio --http 8080 --rules "$R" 2>/dev/null || st=$?
[ $st = 2 ] || fail "--stdio with --http: exit $st"

start_mx
URL="http://127.0.0.1:$PORT/mcp"

# curl: the plain HTTP refusals.
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code "$URL")" = 405 ] || fail "GET /mcp is not 405"
[ "$(code -X PUT "$URL")" = 405 ] || fail "PUT /mcp is not 405"
[ "$(code "http://127.0.0.1:$PORT/other")" = 404 ] || fail "other path is not 404"
[ "$(code -H 'Host: evil.example:80' "$URL")" = 403 ] || fail "foreign Host is not 403"
[ "$(code -H "Origin: http://evil.example" -X POST -d '{}' "$URL")" = 403 ] ||
    fail "foreign Origin is not 403"
[ "$(code -H "Host: localhost:$PORT" "$URL")" = 405 ] || fail "localhost:PORT refused"
note "GET 405, other paths 404, foreign Host and Origin 403"

"$PY" - "$PORT" "$T" <<'EOF' || fail "MCP over HTTP (see above)"
import http.client, json, sys

port, tmp = int(sys.argv[1]), sys.argv[2]
ACCEPT_BOTH = "application/json, text/event-stream"

def post(msg, sid=None, accept=ACCEPT_BOTH, headers=None, raw=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    h = {"Content-Type": "application/json", "Accept": accept}
    if sid:
        h["Mcp-Session-Id"] = sid
    h.update(headers or {})
    c.request("POST", "/mcp", raw if raw is not None else json.dumps(msg), h)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r, body

def sse_events(body):
    out = []
    for block in body.decode().split("\n\n"):
        data = [l[6:] for l in block.split("\n") if l.startswith("data: ")]
        if data:
            out.append(json.loads("".join(data)))
    return out

def reply(r, body):
    assert r.status == 200, (r.status, body)
    if r.getheader("Content-Type") == "text/event-stream":
        ev = sse_events(body)
        return ev[-1], ev[:-1]
    assert r.getheader("Content-Type") == "application/json", r.getheader("Content-Type")
    return json.loads(body), []

def init(accept=ACCEPT_BOTH, headers=None):
    r, body = post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                               "clientInfo": {"name": "t", "version": "1"}}},
                   accept=accept, headers=headers)
    msg, _ = reply(r, body)
    assert msg["result"]["protocolVersion"] == "2025-11-25", msg
    sid = r.getheader("Mcp-Session-Id")
    assert sid and len(sid) >= 32 and all(33 <= ord(ch) <= 126 for ch in sid), sid
    r, body = post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid,
                   headers=headers)
    assert r.status == 202 and body == b"", (r.status, body)
    return sid

sid = init()
sid2 = init(accept="application/json")
assert sid != sid2

# tools/list: JSON for a JSON-only client, SSE for one that takes both.
r, body = post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, sid2,
               accept="application/json")
msg, _ = reply(r, body)
assert r.getheader("Content-Type") == "application/json"
names = [t["name"] for t in msg["result"]["tools"]]
assert "execute_python" in names, names
r, body = post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, sid)
assert r.getheader("Content-Type") == "text/event-stream", r.getheader("Content-Type")
msg, _ = reply(r, body)
assert msg["id"] == 1 and msg["result"]["tools"], msg

# execute_python as JSON.
call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "execute_python",
                   "arguments": {"code": "print(6 * 7)"}}}
r, body = post(call, sid2, accept="application/json")
msg, _ = reply(r, body)
sc = msg["result"]["structuredContent"]
assert sc["stdout"] == "42\n" and sc["exit_code"] == 0, msg
sandbox2 = sc["session_id"]

# execute_python over SSE, with progress events before the response.
call = {"jsonrpc": "2.0", "id": "py-3", "method": "tools/call",
        "params": {"name": "execute_python", "_meta": {"progressToken": "tok-1"},
                   "arguments": {"code": "import time\nfor i in range(3):\n"
                                 "    print('line', i, flush=True)\n"
                                 "    time.sleep(0.3)\n"
                                 "n = open('/workspace/out.txt', 'w').write('secret')\n"}}}
r, body = post(call, sid)
msg, notes = reply(r, body)
assert msg["id"] == "py-3", msg
sc = msg["result"]["structuredContent"]
assert sc["stdout"] == "line 0\nline 1\nline 2\n", sc
prog = [n for n in notes if n["method"] == "notifications/progress"]
assert prog and all(n["params"]["progressToken"] == "tok-1" for n in prog), notes
assert "line" in "".join(n["params"].get("message", "") for n in prog), prog
sandbox1 = sc["session_id"]
arts = [a["uri"] for a in sc["artifacts"] if a["name"] == "out.txt"]
assert arts, sc
open(tmp + "/artifact-uri", "w").write(arts[0])

# 202 for a notification and for a response; ids are per MCP session.
r, body = post({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 999}}, sid)
assert r.status == 202 and body == b"", (r.status, body)
r, body = post({"jsonrpc": "2.0", "id": 7, "result": {}}, sid)
assert r.status == 202 and body == b"", (r.status, body)
r, body = post({"jsonrpc": "2.0", "id": 2, "method": "ping"}, sid)
assert reply(r, body)[0]["result"] == {}, body

# The refusals.
ping = {"jsonrpc": "2.0", "id": 50, "method": "ping"}
r, _ = post(ping)
assert r.status == 400, ("no session id", r.status)
r, _ = post(ping, "0" * 48)
assert r.status == 404, ("unknown session", r.status)
r, _ = post(ping, sid, headers={"MCP-Protocol-Version": "1999-01-01"})
assert r.status == 400, ("bad protocol version", r.status)
r, _ = post(ping, sid, headers={"MCP-Protocol-Version": "2025-06-18"})
assert r.status == 200, ("good protocol version", r.status)
r, _ = post(ping, sid, accept="text/html")
assert r.status == 406, ("Accept", r.status)
r, _ = post(None, sid, raw="{not json")
assert r.status == 400, ("parse error", r.status)
r, _ = post(None, sid, raw="[]")
assert r.status == 400, ("batch", r.status)
# A body over max_message_bytes (4M) is refused on its Content-Length,
# before it is read: send the head only, read the answer.
import socket
s = socket.create_connection(("127.0.0.1", port))
s.sendall(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: application/json\r\n"
           "Content-Type: application/json\r\nMcp-Session-Id: %s\r\n"
           "Content-Length: %d\r\n\r\n{" % (port, sid, 5 << 20)).encode())
head = s.recv(200).decode()
s.close()
assert head.startswith("HTTP/1.1 413"), ("huge body", head)

# DELETE ends the MCP session: 404 afterwards.
c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
c.request("DELETE", "/mcp", headers={"Mcp-Session-Id": sid2})
r = c.getresponse(); r.read()
assert r.status == 200, ("DELETE", r.status)
c.request("DELETE", "/mcp", headers={"Mcp-Session-Id": sid2})
r = c.getresponse(); r.read()
assert r.status == 404, ("DELETE twice", r.status)
r, _ = post(ping, sid2)
assert r.status == 404, ("after DELETE", r.status)

# A client that hangs up mid-call: the call runs on, its reply is dropped,
# and the server keeps serving.
import socket
s = socket.create_connection(("127.0.0.1", port))
payload = json.dumps({"jsonrpc": "2.0", "id": 60, "method": "tools/call",
                      "params": {"name": "execute_python", "_meta": {"progressToken": 5},
                                 "arguments": {"session_id": sandbox1,
                                               "code": "import time; print(1, flush=True); time.sleep(1); print(2)"}}})
s.sendall(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
           "Accept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\n"
           "Content-Length: %d\r\n\r\n%s" % (port, sid, len(payload), payload)).encode())
s.recv(100)     # the stream's headers
s.close()
s = socket.create_connection(("127.0.0.1", port))
payload = json.dumps({"jsonrpc": "2.0", "id": 61, "method": "tools/call",
                      "params": {"name": "execute_python",
                                 "arguments": {"session_id": sandbox2,
                                               "code": "import time; time.sleep(1)"}}})
s.sendall(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
           "Accept: application/json\r\nMcp-Session-Id: %s\r\n"
           "Content-Length: %d\r\n\r\n%s" % (port, sid, len(payload), payload)).encode())
s.close()
import time
time.sleep(2.5)
r, body = post({"jsonrpc": "2.0", "id": 62, "method": "ping"}, sid)
assert reply(r, body)[0]["result"] == {}, body
open(tmp + "/sid", "w").write(sid)
EOF
note "initialize, tools/list, execute_python (JSON, SSE with progress), 202, 400/404/406/413, DELETE, dropped connections"

stop_mx || fail "mcp-exec exit status $? at SIGTERM"

# Bearer tokens: two principals, each token known only by its hash.
mcp_tokens "user:alice@example.com" "user:bob@example.com"
# And a browser app allowed by its Origin.
sed -i 's|^  allowed_origins: .*|  allowed_origins: ["https://app.example.com"]|' \
    "$R/mcp-exec.yaml"
grep -q 'app.example.com' "$R/mcp-exec.yaml" || fail "sed missed allowed_origins"
"$MX" -n --http 127.0.0.1:1 --rules "$R" 2>&1 | grep -q "configuration OK" ||
    fail "mcp-exec -n with principals.yaml"
start_mx
URL="http://127.0.0.1:$PORT/mcp"
grep -q "2 bearer tokens" "$T/mx.err" || fail "tokens not announced"

hdrs=$(curl -s -D - -o "$T/401.json" -X POST -H 'Accept: application/json' -d '{}' "$URL")
echo "$hdrs" | grep -q "^HTTP/1.1 401" || fail "no token: $hdrs"
# Static tokens only, no issuer: nothing for an OAuth client to discover.
# A resource_metadata whose document names no authorization_servers (the
# MCP spec: at least one) sends mcp-remote into a dynamic client
# registration that 404s, and the Inspector into an OAuth flow, for a
# mistyped token.  A plain Bearer challenge, and no metadata.
echo "$hdrs" | tr -d '\r' | grep -qix "WWW-Authenticate: Bearer realm=\"stockade\"" ||
    fail "WWW-Authenticate without issuers: $hdrs"
"$PY" -c 'import json, sys; assert json.load(open(sys.argv[1]))["error"]' "$T/401.json" ||
    fail "401 body is not a JSON error"
curl -s -D - -o /dev/null -H 'Authorization: Bearer wrong' -X POST -H 'Accept: application/json' \
    -d '{}' "$URL" | tr -d '\r' | grep -qix 'WWW-Authenticate: Bearer realm="stockade", error="invalid_token"' ||
    fail "a wrong token's challenge without issuers"
for p in /.well-known/oauth-protected-resource /.well-known/oauth-protected-resource/mcp; do
	[ "$(code "http://127.0.0.1:$PORT$p")" = 404 ] || fail "metadata without issuers at $p: not 404"
done

"$PY" - "$PORT" "$TOKA" "$TOKB" <<'EOF' || fail "principals over HTTP (see above)"
import http.client, json, sys

port, toka, tokb = int(sys.argv[1]), sys.argv[2], sys.argv[3]

def post(msg, token, sid=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    h = {"Content-Type": "application/json", "Accept": "application/json",
         "Authorization": "Bearer " + token}
    if sid:
        h["Mcp-Session-Id"] = sid
    c.request("POST", "/mcp", json.dumps(msg), h)
    r = c.getresponse()
    body = r.read()
    return r, json.loads(body) if body else None

def init(token):
    r, m = post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "t", "version": "1"}}}, token)
    assert r.status == 200 and "result" in m, (r.status, m)
    return r.getheader("Mcp-Session-Id")

a, b = init(toka), init(tokb)
r, m = post({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
             "params": {"name": "execute_python", "arguments": {
                 "code": "open('/workspace/alice.txt', 'w').write('only alice')"}}},
            toka, a)
assert r.status == 200, (r.status, m)
uri = [x["uri"] for x in m["result"]["structuredContent"]["artifacts"]][0]
r, m = post({"jsonrpc": "2.0", "id": 2, "method": "resources/read",
             "params": {"uri": uri}}, toka, a)
assert m["result"]["contents"][0]["text"] == "only alice", m
# Bob cannot read it, and cannot use Alice's MCP session.
r, m = post({"jsonrpc": "2.0", "id": 2, "method": "resources/read",
             "params": {"uri": uri}}, tokb, b)
assert r.status == 200 and m["error"]["code"] == -32002, m
r, m = post({"jsonrpc": "2.0", "id": 3, "method": "ping"}, tokb, a)
assert r.status == 403, (r.status, m)
EOF
[ "$(code -H "Authorization: Bearer $TOKA" -H 'Origin: https://app.example.com' "$URL")" = 405 ] ||
    fail "configured Origin refused"
[ "$(code -H "Authorization: Bearer $TOKA" -H 'Origin: https://app.example.org' "$URL")" = 403 ] ||
    fail "unconfigured Origin accepted"
note "bearer tokens: 401 + a plain Bearer challenge, no RFC 9728 metadata without issuers, principals kept apart, 403 across principals; allowed_origins"
[ "$(code -H 'Authorization: Bearer wrong' "$URL")" = 401 ] || fail "wrong token is not 401"
# A burst of guesses: refused, and audited at a bounded rate.
t0=$(date +%s)
for _ in $(seq 1 40); do code -H 'Authorization: Bearer guess' "$URL" >/dev/null; done
t1=$(date +%s)

stop_mx || fail "mcp-exec exit status $? at SIGTERM"
stop_auditd
# Refused tokens are audited, rate-limited (41 refusals sent in a burst).
n=$(cat "$LOG"/audit-*.log | grep -a '"event":"call_refused"' | grep -c '"reason":"bad token"' || true)
[ "$n" -ge 3 ] || fail "refused tokens not audited ($n)"
# At most 5 a second (plus the two refusals before the burst).  The
# limiter's one-second windows follow the monotonic clock, not date's
# seconds: a burst inside one wall-clock second may span two windows.
[ "$n" -le $(( (t1 - t0 + 2) * 5 + 2 )) ] && [ "$n" -lt 42 ] ||
    fail "refused tokens not rate-limited ($n records in $((t1 - t0 + 1)) s)"
grep -ah '"event":"call_refused"' "$LOG"/audit-*.log | grep -q '"principal":"user:bob@example.com"' ||
    fail "403 across principals not audited with the claimed principal"
verify >/dev/null || fail "audit log does not verify"
note "refused tokens audited (rate-limited: $n records), log verifies"
