"""Load for the fault battery (test_faults.sh): THREADS clients call
mcp-exec over HTTP until STOPFILE exists, each call a fresh sandbox on the
networked profile that fetches allowed.test, or a call in a session of its
own; errors are expected while daemons are down, hangs are not (every
request is bounded).  `leave N` instead starts N calls and drops each
connection mid-call.  Prints what it saw.

usage: faults.py load PORT TOKEN THREADS STOPFILE | faults.py leave PORT TOKEN N"""
import http.client
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from mcpclient import ACCEPT, PROTOCOL, Http  # noqa: E402

FETCH = ("import urllib.request\n"
         "print(urllib.request.urlopen('http://allowed.test/', timeout=3)"
         ".read().decode().strip())")
SLOW = "import time; time.sleep(2); print('late')"


def client(port, token):
    c = Http("http://127.0.0.1:%s/mcp" % port, token)
    c.initialize()
    return c


def load(port, token, threads, stopfile):
    seen = {"ok": 0, "error": 0, "failed": 0}
    lock = threading.Lock()

    def run():
        c, sid = None, None
        while not os.path.exists(stopfile):
            try:
                if c is None:
                    c, sid = client(port, token), None
                args = {"code": FETCH, "timeout_ms": 8000}
                if sid is not None:
                    args["session_id"] = sid
                r = c.tool("execute_python", args)
                s = r.get("structuredContent", {})
                with lock:
                    seen["error" if r.get("isError") else "ok"] += 1
                # Every other call keeps its session for the next one.
                sid = s.get("session_id") if sid is None and \
                    not r.get("isError") else None
            except Exception:  # noqa: BLE001 - a daemon is down: counted
                with lock:
                    seen["failed"] += 1
                c = None
                time.sleep(0.2)
    ts = [threading.Thread(target=run) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
        if t.is_alive():
            print("  load: a client hung")
            sys.exit(1)
    print("  load: %(ok)d calls answered, %(error)d tool errors, "
          "%(failed)d requests failed while daemons were down" % seen)


def leave(port, token, n):
    """n calls whose clients go away 0.3 s into them."""
    for _ in range(n):
        c = client(port, token)
        h = http.client.HTTPConnection("127.0.0.1", int(port), timeout=10)
        hd = dict(c.headers)
        hd["Mcp-Session-Id"] = c.sid
        hd["MCP-Protocol-Version"] = PROTOCOL
        hd["Accept"] = ACCEPT
        h.request("POST", "/mcp", json.dumps({
            "jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
                "name": "execute_python", "arguments": {"code": SLOW}}}), hd)
        time.sleep(0.3)
        h.close()
    print("  %d clients left mid-call" % n)


if __name__ == "__main__":
    if sys.argv[1] == "load":
        load(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    else:
        leave(sys.argv[2], sys.argv[3], int(sys.argv[4]))
