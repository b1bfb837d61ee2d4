"""Every path that ends a session while a call runs in it (issue 32,
finding 1), against one mcp-exec: each ends the session exactly once, the
call in flight is answered (or, cancelled, dropped) and the server lives
on to serve the next client.  Run by test_mcp_teardown.sh, which checks
the server's sanitizer output and the audit trail afterwards.

usage: teardown.py http PORT TOKEN   |   teardown.py stdio MX RULES STATE"""
import json
import subprocess
import sys
import threading
import time

from mcpclient import Http, McpError, Stdio, structured

SLEEP = "import time; time.sleep(%d)"
# The code kills its own driver: the session's Python process ends.
DRIVER_DIES = "import os, time; time.sleep(0.5); os._exit(3)"


def start(fn):
    """fn() in a thread; join() gives its result or raises its error."""
    box = {}

    def run():
        try:
            box["r"] = fn()
        except Exception as e:  # noqa: BLE001 - handed to the joiner
            box["e"] = e
    t = threading.Thread(target=run)
    t.start()

    def join(timeout=60):
        t.join(timeout)
        if t.is_alive():
            raise AssertionError("the call in flight was never answered")
        if "e" in box:
            raise box["e"]
        return box["r"]
    return join


def new_session(c):
    return structured(c.tool("execute_python", {"code": "v = 1"}))["session_id"]


def alive(c, what):
    """The server still serves: a fresh call runs."""
    s = structured(c.tool("execute_python", {"code": "print(6 * 7)"}))
    assert s["stdout"] == "42\n", (what, s)


def ended(c, sid, what):
    r = c.tool("execute_python", {"code": "print(v)", "session_id": sid})
    assert r["isError"] and "session not found" in r["content"][0]["text"], \
        (what, r)


# ------------------------------------------------------------------ HTTP
def http_paths(port, token):
    url = "http://127.0.0.1:%s/mcp" % port

    def client():
        c = Http(url, token)
        c.initialize()
        return c

    def busy(seconds):
        """A session of its own with a call running seconds in it, 1 s in."""
        c = client()
        sid = new_session(c)
        join = start(lambda: c.tool("execute_python", {
            "code": SLEEP % seconds, "session_id": sid}))
        time.sleep(1)
        return c, sid, join

    def busy_task(seconds, ttl):
        """The same as a task, its ttl ms; the task is returned."""
        c = client()
        sid = new_session(c)
        t = c.call("tools/call", {"name": "execute_python", "arguments":
                   {"code": SLEEP % seconds, "session_id": sid},
                   "task": {"ttl": ttl}})["task"]
        return c, sid, t

    # close_session on its own busy session, the call direct.
    c, sid, join = busy(3)
    r = client().tool("close_session", {"session_id": sid})
    assert not r.get("isError"), r
    s = structured(join())
    assert s["session_lost"] and s["exit_code"] != 0, s
    ended(c, sid, "close_session")
    alive(c, "close_session")
    print("  http: close_session of a busy session: the call answered "
          "'session lost', the close answered, the server lives")

    # close_session while the call waits as a task.
    c, sid, t = busy_task(3, 60000)
    time.sleep(1)
    r = c.tool("close_session", {"session_id": sid})
    assert not r.get("isError"), r
    done = task_end(c, t["taskId"])
    assert done in ("completed", "failed", "cancelled"), done
    alive(c, "close_session, task")
    print("  http: close_session under a running task: task ended (%s)"
          % done)

    # The task's own TTL runs out while its code sleeps.
    c, sid, t = busy_task(20, 1000)
    time.sleep(2.5)
    c = client()        # the MCP session may have gone idle meanwhile
    try:
        got = c.call("tasks/get", {"taskId": t["taskId"]})
        assert got["status"] != "working", got
    except McpError:
        pass            # swept: not found
    alive(c, "task ttl")
    print("  http: a task's TTL ends while its code runs; the server lives")

    # tasks/cancel of a running task.
    c, sid, t = busy_task(20, 60000)
    time.sleep(1)
    c.call("tasks/cancel", {"taskId": t["taskId"]})
    assert task_end(c, t["taskId"]) == "cancelled"
    alive(c, "tasks/cancel")
    print("  http: tasks/cancel of a running task")

    # notifications/cancelled of a direct call.
    c, sid, join = busy(20)
    cid = c.next_id - 1         # the running call's
    c.notify("notifications/cancelled", {"requestId": cid})
    try:
        join(30)
    except McpError:
        pass
    alive(client(), "notifications/cancelled")
    print("  http: notifications/cancelled of a running call")

    # DELETE of the MCP session that carries the call.
    c, sid, join = busy(3)
    delete(c)
    try:
        join(30)
    except McpError:
        pass            # the MCP session went: no answer on it
    alive(client(), "DELETE")
    print("  http: DELETE of the MCP session carrying a running call")

    # The driver dies under its own call.
    c = client()
    sid = new_session(c)
    s = structured(c.tool("execute_python",
                          {"code": DRIVER_DIES, "session_id": sid}))
    assert s["session_lost"], s
    ended(c, sid, "driver died")
    alive(c, "driver died")
    print("  http: the session's driver dies under its call")

    # Two closes race the call: the second finds nothing, nothing breaks.
    c, sid, join = busy(3)
    j2 = start(lambda: client().tool("close_session", {"session_id": sid}))
    j3 = start(lambda: client().tool("close_session", {"session_id": sid}))
    errs = [r.get("isError", False) for r in (j2(), j3())]
    assert sorted(errs) == [False, True], errs
    structured(join())
    alive(c, "double close")
    print("  http: two close_session calls race a running call: one "
          "closes, one finds nothing")


def task_end(c, task_id, within=30):
    deadline = time.time() + within
    while time.time() < deadline:
        try:
            st = c.call("tasks/get", {"taskId": task_id})["status"]
        except McpError:
            return "gone"
        if st not in ("working", "input_required"):
            return st
        time.sleep(0.1)
    raise AssertionError("task %s still working" % task_id)


def delete(c):
    import http.client
    h = http.client.HTTPConnection(c.host, c.port, timeout=30)
    hd = dict(c.headers)
    hd["Mcp-Session-Id"] = c.sid
    hd["MCP-Protocol-Version"] = "2025-11-25"
    h.request("DELETE", c.path, headers=hd)
    r = h.getresponse()
    r.read()
    h.close()
    assert r.status in (200, 204), r.status


# ----------------------------------------------------------------- stdio
class Pipe(Stdio):
    """Stdio with requests outstanding together: replies by id."""

    def __init__(self, argv, stderr):
        super().__init__(argv, stderr)
        self.replies = {}
        self.lock = threading.Condition()
        threading.Thread(target=self.reader, daemon=True).start()

    def reader(self):
        for line in self.p.stdout:
            m = json.loads(line)
            if "id" in m:
                with self.lock:
                    self.replies[m["id"]] = m
                    self.lock.notify_all()
        with self.lock:
            self.replies[None] = "eof"
            self.lock.notify_all()

    def send(self, method, params):
        i = self.next_id
        self.next_id += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i,
                                       "method": method,
                                       "params": params}) + "\n")
        self.p.stdin.flush()
        return i

    def wait(self, i, timeout=60):
        with self.lock:
            ok = self.lock.wait_for(lambda: i in self.replies or
                                    None in self.replies, timeout)
            if not ok or i not in self.replies:
                raise AssertionError("no reply to %d (server gone?)" % i)
            return self.replies.pop(i)

    def exchange(self, msg):
        return self.wait(self.send(msg["method"], msg.get("params")))


def stdio_paths(mx, rules, state):
    err = open(state + ".err", "a")
    c = Pipe([mx, "--stdio", "--rules", rules, "--state-dir", state], err)
    c.initialize()
    sid = new_session(c)
    a = c.send("tools/call", {"name": "execute_python", "arguments":
                              {"code": SLEEP % 3, "session_id": sid}})
    time.sleep(1)
    b = c.send("tools/call", {"name": "close_session",
                              "arguments": {"session_id": sid}})
    rb, ra = c.wait(b), c.wait(a)
    assert "result" in rb and not rb["result"].get("isError"), rb
    assert ra["result"]["structuredContent"]["session_lost"], ra
    ended(c, sid, "stdio close_session")
    alive(c, "stdio close_session")
    print("  stdio: close_session of a busy session: both answered, "
          "the server lives")

    # As a task.
    sid = new_session(c)
    t = c.call("tools/call", {"name": "execute_python", "arguments":
               {"code": SLEEP % 3, "session_id": sid},
               "task": {"ttl": 60000}})["task"]
    time.sleep(1)
    r = c.tool("close_session", {"session_id": sid})
    assert not r.get("isError"), r
    task_end(c, t["taskId"])
    alive(c, "stdio task")
    print("  stdio: close_session under a running task")

    # The client leaves with a call running: the server ends, cleanly.
    sid = new_session(c)
    c.send("tools/call", {"name": "execute_python", "arguments":
                          {"code": SLEEP % 20, "session_id": sid}})
    time.sleep(1)
    c.p.stdin.close()
    st = c.p.wait(timeout=30)
    assert st == 0, "mcp-exec --stdio exited %d" % st
    print("  stdio: the client leaves with a call running: exit 0")


if __name__ == "__main__":
    if sys.argv[1] == "http":
        http_paths(sys.argv[2], sys.argv[3])
    else:
        stdio_paths(sys.argv[2], sys.argv[3], sys.argv[4])
