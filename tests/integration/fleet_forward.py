"""The client side of test_fleet_forward.sh: a sandbox made on node 2,
reached through node 3, which forwards to 2 (fleet.peer).  Phases:
serve (both eras, a body over 64 KiB, an SSE reply, another principal's
token) and gone (node 2 killed: node 3 answers -31001).

usage: fleet_forward.py PHASE STATE URL_2 URL_3 TOKEN_A TOKEN_B
       fleet_forward.py impostor ADDR PORT OUT [CERT KEY]
An impostor listens where node 2's peer listener was: with CERT, a TLS
server writing to OUT whatever a client sends it once shaken hands (a
token, if node 3 did not check whom it talks to); without, one that takes
connections and never answers.
"""
import json
import socket
import ssl
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from fleetclient import Legacy, Modern

LOST = -31001


def fail(msg):
    sys.exit("FAIL: " + msg)


def note(msg):
    print("  " + msg, flush=True)


def text(st, msg, what):
    """The stdout of a tool result that is not an error."""
    if st != 200 or not msg or "result" not in msg or \
            msg["result"].get("isError"):
        fail("%s: %s %s" % (what, st, json.dumps(msg)[:300]))
    return json.dumps(msg["result"])


def serve(state, url2, url3, toka, tokb):
    a2 = Modern(url2, toka)
    st, m = a2.tool("execute_python", {"code": "w = 7\nprint('made')"})
    sid = json.loads(text(st, m, "a session on node 2"))[
        "structuredContent"]["session_id"]
    if not sid.endswith(".2"):
        fail("session %s is not node 2's" % sid)
    json.dump({"sid": sid}, open(state, "w"))

    # A 2025 client that lost its MCP session and made one on node 3.
    c = Legacy(url3, toka)
    c.initialize()
    if not c.sid.endswith(".3"):
        fail("MCP session %s is not node 3's" % c.sid)
    st, m = c.tool("execute_python", {"code": "print(w * 6)",
                                      "session_id": sid})
    if "42" not in text(st, m, "2025 call through node 3"):
        fail("2025 call through node 3: no 42 in %s" % json.dumps(m)[:300])
    note("a 2025 tools/call in node 3's MCP session ran in node 2's sandbox")

    big = "# " + "x" * (70 * 1024) + "\nprint(w + 1)"
    st, m = c.tool("execute_python", {"code": big, "session_id": sid})
    if '"8' not in text(st, m, "70 KiB body through node 3") and \
            "8\\n" not in json.dumps(m):
        fail("70 KiB body: no 8 in %s" % json.dumps(m)[:300])
    note("the same with a body of %d bytes (past the router's 64 KiB)"
         % len(big))

    a3 = Modern(url3, toka)
    st, m = a3.tool("execute_python", {"code": "print(w - 2)",
                                       "session_id": sid})
    if "5" not in text(st, m, "2026-07-28 through node 3"):
        fail("2026-07-28 call: %s" % json.dumps(m)[:300])
    st, m = a3.tool("execute_python", {"code": "print('sse', w)",
                                       "session_id": sid},
                    headers={"Accept": "text/event-stream"})
    if "sse 7" not in text(st, m, "SSE reply through node 3"):
        fail("SSE reply: %s" % json.dumps(m)[:300])
    note("2026-07-28 requests naming node 2's session, JSON and SSE, "
         "answered by node 2 through node 3")

    # No router: a 2025 client whose MCP session is node 2's, sending to
    # node 3 a request that names nothing else (it goes by Mcp-Session-Id).
    c2 = Legacy(url2, toka)
    c2.initialize()
    c2.url = url3
    st, m = c2.rpc("tools/list")
    if st != 200 or not m or "tools" not in m.get("result", {}):
        fail("tools/list in node 2's MCP session, sent to node 3: %s %s"
             % (st, json.dumps(m)[:300]))
    note("a request in node 2's MCP session sent to node 3 is served by "
         "node 2")

    # Another principal's token: node 2 knows the handle only as alice's.
    b3 = Modern(url3, tokb)
    st, m = b3.tool("execute_python", {"code": "print(w)",
                                       "session_id": sid})
    body = json.dumps(m)
    if st == 200 and m and "result" in m and not m["result"].get("isError"):
        fail("bob reached alice's session through node 3: %s" % body[:300])
    if "not found" not in body or "31003" in body:
        fail("bob's call: wanted node 2's not found, got %s %s"
             % (st, body[:300]))
    note("another principal's token, forwarded: node 2 answers not found")


def impostor(addr, port, out, cert=None, key=None):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, int(port)))
    ls.listen(8)
    open(out + ".up", "w").close()
    held = []
    while True:
        c, _ = ls.accept()
        if cert is None:
            held.append(c)
            continue
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        try:
            t = ctx.wrap_socket(c, server_side=True)
            t.settimeout(5)
            data = t.recv(65536)
            with open(out, "ab") as f:
                f.write(data)
            t.close()
        except (OSError, ssl.SSLError):
            c.close()


def leave(state, url3, toka):
    """A 2026-07-28 call through node 3 whose caller hangs up while it
    runs: node 3 drops the forward, which node 2 takes as a cancel."""
    sid = json.load(open(state))["sid"]
    a3 = Modern(url3, toka)
    code = "import time\nprint('long', flush=True)\ntime.sleep(60)"
    try:
        st, m = a3.tool("execute_python", {"code": code, "session_id": sid},
                        timeout=2)
    except (socket.timeout, TimeoutError):
        note("the caller of a long call through node 3 hung up after 2 s")
        return
    fail("a 60 s call answered in 2 s: %s %s" % (st, json.dumps(m)[:300]))


def share(state, url2, url3, toka):
    """Node 3 lets a principal 2 open requests (max_requests_per_principal):
    forwarded ones count."""
    sid = json.load(open(state))["sid"]
    st, m = Modern(url2, toka).tool("execute_python", {"code": "print(0)"})
    sid2 = json.loads(text(st, m, "a second session on node 2"))[
        "structuredContent"]["session_id"]
    a3 = Modern(url3, toka)
    code = "import time\ntime.sleep(4)\nprint('slow')"
    with ThreadPoolExecutor(2) as pool:
        slow = [pool.submit(a3.tool, "execute_python",
                            {"code": code, "session_id": s})
                for s in (sid, sid2)]
        time.sleep(1.5)
        st, m = a3.tool("execute_python", {"code": "print(1)",
                                           "session_id": sid})
        if st != 429 or "forwarded ones too" not in json.dumps(m):
            fail("a third forward of the principal: %s %s"
                 % (st, json.dumps(m)[:300]))
        for fu in slow:
            st, m = fu.result()
            text(st, m, "a slow forwarded call")
    note("a principal's forwards count against its open requests (429)")


def gone(state, url3, toka, why="node 2 killed", within=None):
    sid = json.load(open(state))["sid"]
    c = Legacy(url3, toka)
    c.initialize()
    t0 = time.monotonic()
    st, m = c.tool("execute_python", {"code": "print(w)", "session_id": sid})
    took = time.monotonic() - t0
    if st != 200 or not m or "error" not in m or m["error"]["code"] != LOST \
            or m["error"]["data"]["reason"] != "node_gone" \
            or m["error"]["data"]["node"] != "2" or m.get("id") is None:
        fail("%s: wanted -31001 node_gone, got %s %s"
             % (why, st, json.dumps(m)[:300]))
    if within is not None and took > float(within):
        fail("%s: -31001 after %.1f s" % (why, took))
    note("%s: node 3 answers -31001 node_gone with the id (%.1f s)"
         % (why, took))


if __name__ == "__main__":
    phase, state = sys.argv[1], sys.argv[2]
    if phase == "impostor":
        impostor(*sys.argv[2:])
    elif phase == "serve":
        serve(state, *sys.argv[3:7])
    elif phase == "share":
        share(state, *sys.argv[3:6])
    elif phase == "leave":
        leave(state, sys.argv[4], sys.argv[5])
    elif phase == "gone":
        gone(state, sys.argv[4], sys.argv[5], *sys.argv[7:])
