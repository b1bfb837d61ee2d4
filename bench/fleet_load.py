"""Capacity of one fleet node (bench/run.sh fleet): what an operator sizes
a fleet with, measured over HTTP as 2026-07-28 clients call (each request
on its own, session_id mirrored into Mcp-Param-Session-Id), each client
on one kept-alive connection.

  existing  `1+1` in an existing session, through the router and straight
            to the node, interleaved on one session: p50 and p99 of each
  new       new sessions per second, sustained for SECONDS by WORKERS
            clients through the router (each: a call that makes a session,
            then close_session, so the node holds a steady number), and
            the p50 and p99 of those calls: time to a first command
  first     a new session's first call through the router, one client,
            after a pause for the pool's refill: time to a first command
  idle      IDLE sessions opened and left idle; prints their session ids'
            count, for run.sh to weigh their sandboxes

Prints "name value..." lines (latencies in ns); run.sh turns them into
ratios and milliseconds.
usage: fleet_load.py ROUTER_URL DIRECT_URL TOKEN CALLS SECONDS WORKERS IDLE
"""
import http.client
import json
import socket
import sys
import threading
import time
import urllib.parse

PROTO = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": PROTO,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"}}


class Conn:
    """One kept-alive HTTP connection speaking 2026-07-28."""

    def __init__(self, url, token):
        u = urllib.parse.urlsplit(url)
        self.path, self.token = u.path, token
        self.c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        self.c.connect()
        # As the SDKs' HTTP stacks do: the request's head and body go out
        # in two writes.
        self.c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.rid = 0

    def call(self, name, arguments):
        self.rid += 1
        h = {"Content-Type": "application/json",
             "Accept": "application/json, text/event-stream",
             "MCP-Protocol-Version": PROTO, "Mcp-Method": "tools/call",
             "Mcp-Name": name, "Authorization": "Bearer " + self.token}
        if "session_id" in arguments:
            h["Mcp-Param-Session-Id"] = arguments["session_id"]
        body = json.dumps({"jsonrpc": "2.0", "id": self.rid,
                           "method": "tools/call", "params": {
                               "name": name, "arguments": arguments,
                               "_meta": META}})
        self.c.request("POST", self.path, body, h)
        r = self.c.getresponse()
        data = r.read().decode()
        if r.getheader("Content-Type", "").startswith("text/event-stream"):
            data = [l[6:] for l in data.split("\n") if l.startswith("data: ")][-1]
        msg = json.loads(data)
        res = msg.get("result")
        if r.status != 200 or res is None or res.get("isError"):
            sys.exit("fleet_load: %s: %d %s" % (name, r.status, data[:300]))
        return res.get("structuredContent") or {}


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * p))]


def main():
    router, direct, token = sys.argv[1:4]
    calls, seconds, workers, idle = map(int, sys.argv[4:8])
    r, d = Conn(router, token), Conn(direct, token)
    sid = r.call("execute_python", {"code": "1+1"})["session_id"]
    lat = {"router": [], "direct": []}
    for i in range(calls + calls // 10):
        for name, c in (("router", r), ("direct", d)) if i % 2 else \
                (("direct", d), ("router", r)):
            t = time.monotonic_ns()
            c.call("execute_python", {"code": "1+1", "session_id": sid})
            if i >= calls // 10:	# the first tenth warms up
                lat[name].append(time.monotonic_ns() - t)
    for name in ("direct", "router"):
        print("existing_%s %d %d" % (name, pct(lat[name], 0.5),
                                     pct(lat[name], 0.99)))
    r.call("close_session", {"session_id": sid})

    # Time to first command, one client: a new session's first call,
    # each after a pause in which the warm pool refills (untimed).
    alone = []
    for _ in range(max(10, calls // 40)):
        time.sleep(0.5)
        t = time.monotonic_ns()
        s = r.call("execute_python", {"code": "1+1"})["session_id"]
        alone.append(time.monotonic_ns() - t)
        r.call("close_session", {"session_id": s})
    print("first_alone %d %d" % (pct(alone, 0.5), pct(alone, 0.99)))

    made = [0] * workers
    first = []
    stop = time.monotonic() + seconds

    def churn(w):
        c = Conn(router, token)
        while time.monotonic() < stop:
            t = time.monotonic_ns()
            s = c.call("execute_python", {"code": "1+1"})["session_id"]
            first.append(time.monotonic_ns() - t)
            made[w] += 1
            c.call("close_session", {"session_id": s})

    t0 = time.monotonic()
    th = [threading.Thread(target=churn, args=(w,)) for w in range(workers)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    print("new_per_sec %.1f %d" % (sum(made) / (time.monotonic() - t0), workers))
    # Time to first command: a new session's first call, under that load.
    print("first_cmd %d %d" % (pct(first, 0.5), pct(first, 0.99)))

    for _ in range(idle):
        r.call("execute_python", {"code": "1+1"})
    print("idle %d" % idle)
    sys.stdout.flush()
    # run.sh weighs the idle sessions, then ends this process.
    sys.stdin.read()


main()
