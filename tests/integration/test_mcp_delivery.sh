#!/bin/bash
# Where each artifact went (issue 20) and who asked (issue 14): over HTTP
# with two principals, an inline image and resources/read each leave an
# artifact_delivered record naming the client (clientInfo, address, how it
# authenticated) and the request; refused reads (another principal's
# session, an unknown session, a path outside the store, no such artifact)
# leave artifact_refused, rate-limited with a count of what was left out.
. "$(dirname "$0")/lib.sh"

start_auditd
mcp_rules
mcp_tokens "user:alice@example.com" "user:bob@example.com"
start_mx
"$PY" - "$PORT" "$TOKA" "$TOKB" "$T" <<'EOF' || fail "deliveries over HTTP (see above)"
import base64, hashlib, http.client, json, sys, time

port, toka, tokb, tmp = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
# A 1x1 PNG: small enough to be inlined.
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
       "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")

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

def init(token, name):
    r, m = post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                 "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": {"name": name, "version": "3.2"}}},
                token)
    assert r.status == 200 and "result" in m, (r.status, m)
    return r.getheader("Mcp-Session-Id")

def read(uri, token, mcp, rid):
    r, m = post({"jsonrpc": "2.0", "id": rid, "method": "resources/read",
                 "params": {"uri": uri}}, token, mcp)
    assert r.status == 200, (r.status, m)
    return m

a, b = init(toka, "delivery-test"), init(tokb, "prober")
code = ("import base64\nopen('/workspace/dot.png', 'wb').write(base64."
        "b64decode(%r))\nopen('/workspace/notes.txt', 'w').write('hello')\n"
        % PNG)
r, m = post({"jsonrpc": "2.0", "id": "call-1", "method": "tools/call",
             "params": {"name": "execute_python", "arguments": {"code": code}}},
            toka, a)
assert r.status == 200, (r.status, m)
res = m["result"]
assert [c for c in res["content"] if c["type"] == "image"], res["content"]
sid = res["structuredContent"]["session_id"]
uris = {x["name"]: x["uri"] for x in res["structuredContent"]["artifacts"]}
m = read(uris["notes.txt"], toka, a, 2)
assert m["result"]["contents"][0]["text"] == "hello", m
# Refusals: every one answers "not found" to the client.
for rid, (uri, tok, mcp) in enumerate([
        (uris["notes.txt"], tokb, b),
        ("stockade://sessions/sess_nosuch/artifacts/notes.txt", toka, a),
        ("stockade://sessions/%s/artifacts/..%%2Fstate" % sid, toka, a),
        ("stockade://sessions/%s/artifacts/absent.txt" % sid, toka, a),
        ("file:///etc/passwd", toka, a)], start=10):
    m = read(uri, tok, mcp, rid)
    assert m["error"]["code"] == -32002, m
# A burst of probes is recorded at a bounded rate, the rest counted.
time.sleep(1.1)
for i in range(30):
    m = read(uris["notes.txt"], tokb, b, 100 + i)
    assert m["error"]["code"] == -32002, m
time.sleep(1.1)
read(uris["notes.txt"], tokb, b, 200)
open(tmp + "/sid", "w").write(sid)
open(tmp + "/png.sha", "w").write(hashlib.sha256(base64.b64decode(PNG)).hexdigest())
EOF
stop_mx || fail "mcp-exec exit status $?"
stop_auditd
sid=$(cat "$T/sid")
"$PY" - "$LOG" "$sid" "$(cat "$T/png.sha")" <<'EOF' || fail "delivery records (see above)"
import glob, hashlib, json, sys
log, sid, pngsha = sys.argv[1], sys.argv[2], sys.argv[3]
recs = [json.loads(l) for f in sorted(glob.glob(log + "/audit-*.log"))
        for l in open(f).read().split("\0", 1)[0].splitlines()]
def client_ok(r, name, auth="bearer"):
    c = r.get("client")
    assert c and c["name"] == name and c["version"] == "3.2", r
    assert c["transport"] == "http" and c["auth"] == auth, r
    assert c["remote_addr"] == "127.0.0.1" and 0 < c["remote_port"] < 65536, r
for ev in ("session_created", "execution_started", "code_execution"):
    rs = [r for r in recs if r["event"] == ev and r.get("session_id") == sid]
    assert len(rs) == 1, (ev, rs)
    client_ok(rs[0], "delivery-test")
    if ev != "session_created":
        assert rs[0]["request"] == "call-1", rs[0]
    else:	# which seccomp filter confines it (evidence bundles)
        import re
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", rs[0]["seccomp_sha256"]), rs[0]
got = [r for r in recs if r["event"] == "artifact_delivered"]
inline = [r for r in got if r["how"] == "inline"]
assert len(inline) == 1, got
r = inline[0]
assert r["artifact"] == "dot.png" and r["mime"] == "image/png", r
assert r["sha256"] == "sha256:" + pngsha and r["size"] == 70, r
assert r["session_id"] == sid and r["principal"] == "user:alice@example.com", r
assert r["request"] == "call-1", r
client_ok(r, "delivery-test")
rr = [r for r in got if r["how"] == "resources/read"]
assert len(rr) == 1, got
r = rr[0]
assert r["artifact"] == "notes.txt" and r["size"] == 5, r
assert r["sha256"] == "sha256:" + hashlib.sha256(b"hello").hexdigest(), r
assert r["request"] == "2" and r["mime"].startswith("text/plain"), r
client_ok(r, "delivery-test")
ref = [r for r in recs if r["event"] == "artifact_refused"]
first = {r["request"]: r for r in ref if int(r["request"]) < 100}
want = {"10": "session of another principal", "11": "unknown session",
        "12": "path outside the artifact store", "13": "no such artifact",
        "14": "malformed artifact uri"}
assert {k: v["reason"] for k, v in first.items()} == want, first
client_ok(first["10"], "prober")
assert first["10"]["principal"] == "user:bob@example.com", first["10"]
burst = [r for r in ref if int(r["request"]) >= 100]
# 31 refusals: every one is recorded or counted in a later record.
assert len(burst) < 31, len(burst)
assert len(burst) + sum(r["unaudited_before"] for r in burst) == 31, burst
print("  inline and resources/read delivered with client and request;",
      "5 refusal reasons; %d of 31 probes recorded, the rest counted" %
      len(burst))
EOF
# A session's story, creation to delivery, in `audit tail --session`.
tail=$("$STOCKADE" audit tail "$LOG" --session "$sid" -n 100)
for ev in session_created execution_started code_execution artifact_delivered; do
	echo "$tail" | grep -q "\"event\":\"$ev\"" || fail "tail --session lacks $ev"
done
note "audit tail --session shows the session from creation to delivery"
verify >/dev/null || fail "audit verify"
