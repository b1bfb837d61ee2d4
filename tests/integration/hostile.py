"""A hostile MCP client, over stdio and HTTP: malformed and oversize
frames, every tool argument of the wrong type or size, pipelined and
concurrent requests, slow and stalled clients, too many connections,
cross-principal access, and a principal at its limits.  After each group a
normal client must still be served correctly.  Loopback only; every loop
is bounded.

usage: hostile.py stdio MCP_EXEC RULES STATE
       hostile.py http PORT TOKEN_A TOKEN_B
"""
import json
import socket
import subprocess
import sys
import threading
import time

from httpraw import INIT, exchange, initialize, post, statuses

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def call(name, args, id_=None):
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call",
            "params": {"name": name, "arguments": args}}


BIG = "x" * (1024 * 1024 + 10)
# (tool, arguments) that must each get an error or an isError result.
BAD_CALLS = [
    ("execute_python", {}),
    ("execute_python", {"code": 1}),
    ("execute_python", {"code": None}),
    ("execute_python", {"code": ["print(1)"]}),
    ("execute_python", {"code": {"a": 1}}),
    ("execute_python", {"code": "#" + BIG}),
    ("execute_python", {"code": "print(1)", "timeout_ms": "x"}),
    ("execute_python", {"code": "print(1)", "timeout_ms": -1}),
    ("execute_python", {"code": "print(1)", "timeout_ms": 0}),
    ("execute_python", {"code": "print(1)", "timeout_ms": 1e300}),
    ("execute_python", {"code": "print(1)", "timeout_ms": 2 ** 62}),
    ("execute_python", {"code": "print(1)", "session_id": 5}),
    ("execute_python", {"code": "print(1)", "session_id": "../../etc"}),
    ("execute_python", {"code": "print(1)", "session_id": "s" * 10000}),
    ("execute_python", {"code": "print(1)", "files": "a"}),
    ("execute_python", {"code": "print(1)", "files": [1]}),
    ("execute_python", {"code": "print(1)", "files": ["../../etc/shadow"]}),
    ("execute_python", {"code": "print(1)", "files": ["/etc/shadow"]}),
    ("execute_python", {"code": "print(1)", "files": ["a"] * 1000}),
    ("execute_python", {"code": "print(1)", "extra": 1}),
    ("run_command", {}),
    ("run_command", {"command": 5}),
    ("run_command", {"command": "no-such-command"}),
    ("run_command", {"command": "wc", "args": "x"}),
    ("run_command", {"command": "wc", "args": [1]}),
    ("run_command", {"command": "wc", "args": ["x" * 100000]}),
    ("run_command", {"command": "wc", "args": ["-l"] * 10000}),
    ("run_command", {"command": "wc", "timeout_ms": "1"}),
    ("close_session", {}),
    ("close_session", {"session_id": 1}),
    ("close_session", {"session_id": "no-such-session"}),
    ("no_such_tool", {}),
]
BAD_PARAMS = [
    {"name": 5, "arguments": {}},
    {"name": "execute_python", "arguments": "print(1)"},
    {"name": "execute_python", "arguments": []},
    {"name": "execute_python"},
    [],
    "x",
]
BAD_RESOURCES = [{}, {"uri": 5}, {"uri": ""}, {"uri": "file:///etc/passwd"},
                 {"uri": "stockade://session/../../etc/artifacts/x"},
                 {"uri": "stockade://session/" + "a" * 5000 + "/artifacts/x"}]


def is_refusal(reply):
    """A JSON-RPC error, or a tool result with isError."""
    if not isinstance(reply, dict):
        return False
    if "error" in reply:
        return True
    return bool(reply.get("result", {}).get("isError"))


# ---------------------------------------------------------------- stdio

class Stdio:
    def __init__(self, mx, rules, state):
        self.p = subprocess.Popen(
            [mx, "--stdio", "--rules", rules, "--state-dir", state],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=open(state + ".err", "ab"))
        self.replies = {}
        self.lock = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.p.stdout:
            try:
                m = json.loads(line)
            except ValueError:
                m = {"unparsable": line[:200].decode(errors="replace")}
            with self.lock:
                key = json.dumps(m.get("id")) if isinstance(m, dict) else "?"
                if isinstance(m, dict) and "method" in m:
                    continue    # notifications
                self.replies.setdefault(key, []).append(m)
                self.lock.notify_all()

    def send_raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, msg):
        self.send_raw(json.dumps(msg).encode() + b"\n")

    def wait(self, id_, timeout=60):
        key = json.dumps(id_)
        end = time.time() + timeout
        with self.lock:
            while not self.replies.get(key) and time.time() < end:
                self.lock.wait(end - time.time())
            lst = self.replies.get(key)
            return lst.pop(0) if lst else None

    def rpc(self, msg, timeout=60):
        self.send(msg)
        return self.wait(msg.get("id"), timeout)

    def healthy(self, after, n=[1000]):
        n[0] += 1
        r = self.rpc(call("execute_python", {"code": "print(6*7)"}, n[0]))
        ok = (r is not None and not is_refusal(r) and
              "42" in r["result"]["structuredContent"]["stdout"])
        check(ok, "stdio: normal call served after " + after)
        if ok:
            sid = r["result"]["structuredContent"].get("session_id")
            if sid:
                self.rpc(call("close_session", {"session_id": sid}, n[0] + 500))


def stdio_suite(mx, rules, state):
    c = Stdio(mx, rules, state)
    r = c.rpc(dict(INIT, id=0))
    check(r is not None and "result" in r, "stdio: initialize")
    c.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    # Frames: none may kill or wedge the server.
    for i, raw in enumerate([
            b"{not json\n", b"[]\n", b"[{\"jsonrpc\":\"2.0\",\"id\":1,"
            b"\"method\":\"ping\"}]\n", b"42\n", b"\"str\"\n", b"null\n",
            b"{\"id\":1}\n", b"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":"
            b"\"ping\"}\n", b"\xff\xfe\xfd\n", b"{\"a\":\"\x00\"}\n",
            b"[" * 100000 + b"\n", b"{\"jsonrpc\":\"2.0\",\"id\":{},"
            b"\"method\":\"ping\"}\n", b"\r\n", b"\n" * 1000]):
        c.send_raw(raw)
    c.send_raw(b"{\"pad\":\"" + b"y" * (5 * 1024 * 1024) + b"\"}\n")
    # An integer past int64 cannot be parsed: a parse error, id null.
    c.send(call("execute_python", {"code": "print(1)", "timeout_ms":
                2 ** 64}, 49))
    r = c.wait(None, 30)
    while r is not None and r.get("error", {}).get("code") != -32700:
        r = c.wait(None, 5)
    check(r is not None, "stdio: integer past int64: parse error")
    r = c.rpc({"jsonrpc": "2.0", "id": 50, "method": "ping"})
    check(r == {"jsonrpc": "2.0", "id": 50, "result": {}},
          "stdio: ping answered after malformed and oversize frames")
    c.healthy("malformed frames")

    # Every argument of the wrong type or size.
    for i, (tool, args) in enumerate(BAD_CALLS):
        r = c.rpc(call(tool, args, 100 + i))
        check(is_refusal(r), "stdio: %s %s refused" %
              (tool, json.dumps(args)[:60]))
    for i, params in enumerate(BAD_PARAMS):
        r = c.rpc({"jsonrpc": "2.0", "id": 200 + i, "method": "tools/call",
                   "params": params})
        check(is_refusal(r), "stdio: tools/call params %s refused" %
              json.dumps(params)[:60])
    for i, params in enumerate(BAD_RESOURCES):
        r = c.rpc({"jsonrpc": "2.0", "id": 300 + i,
                   "method": "resources/read", "params": params})
        check(r is not None and "error" in r, "stdio: resources/read %s "
              "refused" % json.dumps(params)[:60])
    c.healthy("wrong-typed arguments")

    # Pipelined: 200 pings in one write, each answered once.
    c.send_raw(b"".join(json.dumps({"jsonrpc": "2.0", "id": 400 + i,
               "method": "ping"}).encode() + b"\n" for i in range(200)))
    got = sum(1 for i in range(200) if c.wait(400 + i, 30) is not None)
    check(got == 200, "stdio: 200 pipelined pings, %d answered" % got)
    c.healthy("pipelining")
    c.p.stdin.close()
    c.p.wait(timeout=60)
    check(c.p.returncode == 0, "stdio: exit status %s at EOF" %
          c.p.returncode)


# ---------------------------------------------------------------- http

def rpc(port, token, sid, msg):
    st, h, body = post(port, msg, token, sid)
    try:
        return st, json.loads(body) if body else None
    except ValueError:
        # SSE: the last data line.
        lines = [l[6:] for l in body.decode().split("\n")
                 if l.startswith("data: ")]
        return st, json.loads(lines[-1]) if lines else None


def session(port, token):
    st, sid = initialize(port, token)
    assert st == 200 and sid, "initialize: %s" % st
    post(port, {"jsonrpc": "2.0", "method": "notifications/initialized"},
         token, sid)
    return sid


def end(port, token, sid):
    """DELETE: a client that is done says so (sessions in use count)."""
    exchange(port, b"DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
             b"Authorization: Bearer %s\r\nMcp-Session-Id: %s\r\n"
             b"Connection: close\r\n\r\n" % (port, token.encode(),
                                             sid.encode()), quiet=5)


def http_healthy(port, token, after, n=[5000]):
    n[0] += 1
    sid = session(port, token)
    st, r = rpc(port, token, sid, call("execute_python",
                {"code": "print(6*7)"}, n[0]))
    ok = (st == 200 and r is not None and not is_refusal(r) and
          "42" in r["result"]["structuredContent"]["stdout"])
    check(ok, "http: normal call served after " + after)
    if ok:
        s = r["result"]["structuredContent"].get("session_id")
        rpc(port, token, sid, call("close_session", {"session_id": s}, 1))
    end(port, token, sid)


def http_suite(port, ta, tb):
    H = b"Host: 127.0.0.1:%d\r\n" % port

    # Cross-principal: A's sandbox session, artifact and MCP session are
    # A's alone.
    sa = session(port, ta)
    st, r = rpc(port, ta, sa, call("execute_python", {"code":
                "open('/workspace/a.txt','w').write('secret')"}, 1))
    sc = r["result"]["structuredContent"]
    a_sess = sc["session_id"]
    a_uri = [a["uri"] for a in sc.get("artifacts", [])]
    check(bool(a_uri), "http: A has an artifact")
    sb = session(port, tb)
    st, r = rpc(port, tb, sb, call("execute_python", {"code": "print(1)",
                "session_id": a_sess}, 2))
    check(is_refusal(r), "http: B cannot resume A's sandbox session")
    st, r = rpc(port, tb, sb, call("close_session", {"session_id": a_sess}, 3))
    check(is_refusal(r), "http: B cannot close A's sandbox session")
    for u in a_uri:
        st, r = rpc(port, tb, sb, {"jsonrpc": "2.0", "id": 4,
                    "method": "resources/read", "params": {"uri": u}})
        check(r is not None and "error" in r and b"secret" not in
              json.dumps(r).encode(), "http: B cannot read A's artifact")
    st, _, _ = post(port, {"jsonrpc": "2.0", "id": 5, "method": "ping"},
                    tb, sa)
    check(st == 403, "http: B's token on A's MCP session: %d" % st)
    st, r = rpc(port, ta, sa, call("execute_python", {"code":
                "print(open('/workspace/a.txt').read())", "session_id":
                a_sess}, 6))
    check("secret" in r["result"]["structuredContent"]["stdout"],
          "http: A still has its session after B's attempts")
    rpc(port, ta, sa, call("close_session", {"session_id": a_sess}, 7))

    # Wrong-typed arguments over HTTP too.
    for i, (tool, args) in enumerate(BAD_CALLS):
        st, r = rpc(port, ta, sa, call(tool, args, 100 + i))
        check(st in (200, 413) and (st == 413 or is_refusal(r)),
              "http: %s %s refused" % (tool, json.dumps(args)[:60]))
    http_healthy(port, ta, "wrong-typed arguments")

    # Concurrent: 24 clients at once, each initialize + ping.
    res = []

    def one(i):
        # With max_requests_per_principal at 2 and max_connections at 16,
        # a client may be told so (429 or 503 naming the setting): served
        # or clearly refused, nothing else.
        tok = ta if i % 2 else tb
        try:
            st, h, body = post(port, INIT, tok)
            if st in (429, 503) and b"server.http." in body:
                res.append("refused")
                return
            s = h.get("mcp-session-id")
            st, r = rpc(port, tok, s, {"jsonrpc": "2.0", "id": i,
                                      "method": "ping"})
            body = json.dumps(r).encode()
            if st in (429, 503) and b"server.http." in body:
                res.append("refused")
            elif st == 200 and r == {"jsonrpc": "2.0", "id": i,
                                     "result": {}}:
                res.append("served")
            else:
                print("  client %d: %d %r" % (i, st, body[:100]))
                res.append("wrong")
            end(port, tok, s)
        except Exception as e:
            print("  client %d: %s" % (i, e))
            res.append("wrong")
    ts = [threading.Thread(target=one, args=(i,)) for i in range(24)]
    [t.start() for t in ts]
    [t.join(120) for t in ts]
    check(len(res) == 24 and "wrong" not in res and "served" in res,
          "http: 24 concurrent clients, %d served, %d told the limit" %
          (res.count("served"), res.count("refused")))

    # Slow clients: a head trickled a byte at a time does not hold up
    # others, and a stalled one is closed by the server (bounded wait).
    slow = socket.create_connection(("127.0.0.1", port))
    stalled = socket.create_connection(("127.0.0.1", port))
    stalled.sendall(b"POST /mcp HTTP/1.1\r\n" + H)
    t0 = time.time()
    for b in b"GET /mcp HTTP/1.1\r\n"[:10]:
        slow.sendall(bytes([b]))
        time.sleep(0.05)
    st, _ = initialize(port, ta)
    check(st == 200 and time.time() - t0 < 10,
          "http: served while two clients dawdle")
    stalled.settimeout(45)
    try:
        gone = stalled.recv(100) == b""
    except (socket.timeout, ConnectionResetError):
        gone = False
    check(gone, "http: stalled head closed by the server within 45 s "
          "(%.0f s)" % (time.time() - t0))
    slow.close()
    stalled.close()
    http_healthy(port, ta, "slow clients")

    # A slow reader still gets all of a large reply: a 6 MB artifact read
    # back through a small receive buffer, a little at a time, with
    # Connection: close (the reply must not be cut when the server closes).
    sid = session(port, ta)
    st, r = rpc(port, ta, sid, call("execute_python", {"code":
                "open('/workspace/big.txt','w').write('0123456789' * 600000)"},
                20))
    sc = r["result"]["structuredContent"]
    uri = [a["uri"] for a in sc.get("artifacts", [])][0]
    msg = json.dumps({"jsonrpc": "2.0", "id": 21, "method": "resources/read",
                      "params": {"uri": uri}}).encode()
    rd = socket.socket()
    rd.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    rd.connect(("127.0.0.1", port))
    rd.sendall(b"POST /mcp HTTP/1.1\r\n" + H + b"Authorization: Bearer " +
               ta.encode() + b"\r\nMcp-Session-Id: " + sid.encode() +
               b"\r\nAccept: application/json\r\nContent-Type: "
               b"application/json\r\nConnection: close\r\n"
               b"Content-Length: %d\r\n\r\n" % len(msg) + msg)
    time.sleep(1)
    got = b""
    rd.settimeout(20)
    while True:
        try:
            b = rd.recv(65536)
        except socket.timeout:
            break
        if not b:
            break
        got += b
        if len(got) < 1024 * 1024:
            time.sleep(0.01)
    rd.close()
    head, _, body = got.partition(b"\r\n\r\n")
    clen = [int(l.split(b":")[1]) for l in head.split(b"\r\n")
            if l.lower().startswith(b"content-length:")]
    check(clen and len(body) == clen[0] and len(body) > 6000000,
          "http: slow reader got the whole %d-byte reply (%d)" %
          (clen[0] if clen else -1, len(body)))
    rpc(port, ta, sid, call("close_session", {"session_id":
        sc["session_id"]}, 22))
    end(port, ta, sid)

    # Too many connections: server.http.max_connections is 16 here.
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(16)]
    time.sleep(0.3)
    resp = exchange(port, b"GET /mcp HTTP/1.1\r\n" + H +
                    b"Connection: close\r\n\r\n")
    check(statuses(resp) == [503] and b"max_connections" in resp,
          "http: past max_connections: %s" % statuses(resp))
    for s in idle:
        s.close()
    time.sleep(0.3)
    http_healthy(port, ta, "too many connections")

    # Open requests per principal (max_requests_per_principal is 2 here):
    # A's third concurrent call is refused with 429, B is served.
    long_done = []

    def long_call(i):
        s = session(port, ta)
        st, r = rpc(port, ta, s, call("execute_python",
                    {"code": "import time; time.sleep(3)"}, 900 + i))
        long_done.append(st)
        if r and "result" in r:
            sid = r["result"]["structuredContent"].get("session_id")
            rpc(port, ta, s, call("close_session", {"session_id": sid}, 1))
        end(port, ta, s)
    # (initialize is an open request too: this session is made first.)
    s = session(port, ta)
    ts = [threading.Thread(target=long_call, args=(i,)) for i in range(2)]
    [t.start() for t in ts]
    time.sleep(1.5)
    st, h, body = post(port, call("execute_python", {"code": "print(1)"}, 1),
                       ta, s)
    check(st == 429 and b"max_requests_per_principal" in body,
          "http: A's third open request: %d %s" % (st, body[:100]))
    end(port, ta, s)
    http_healthy(port, tb, "A at its open-request limit (B served)")
    [t.join(60) for t in ts]
    check(long_done == [200, 200], "http: A's two calls finished: %s" %
          long_done)

    # Sandbox sessions: A holding its max_per_principal (4) idle ones makes
    # room with its own least recently used (issue 11: only busy sessions
    # refuse); B's are never touched, and B still runs.
    s = session(port, ta)
    held = []
    for i in range(4):
        st, r = rpc(port, ta, s, call("execute_python", {"code": "x=1"},
                    950 + i))
        if r and not is_refusal(r):
            held.append(r["result"]["structuredContent"]["session_id"])
    st, r = rpc(port, ta, s, call("execute_python", {"code": "x=1"}, 960))
    check(r is not None and not is_refusal(r),
          "http: A's fifth sandbox session runs, evicting A's oldest idle one")
    if r is not None and not is_refusal(r):
        held.append(r["result"]["structuredContent"]["session_id"])
    st, r = rpc(port, ta, s, call("execute_python", {"code": "x",
                "session_id": held[0]}, 961))
    check(is_refusal(r) and "session not found" in json.dumps(r),
          "http: A's least recently used session is the one that went")
    http_healthy(port, tb, "A at its sandbox-session limit (B served)")
    for i, sid in enumerate(held):
        rpc(port, ta, s, call("close_session", {"session_id": sid}, 970 + i))
    end(port, ta, s)
    http_healthy(port, ta, "A's sessions closed")


def main():
    if sys.argv[1] == "stdio":
        stdio_suite(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        http_suite(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    if failures:
        print("%d failed:\n  %s" % (len(failures), "\n  ".join(failures)))
        sys.exit(1)


main()
