"""The client side of test_fleet_route.sh, in phases that share a state
file: route (sessions of both eras, a task and an artifact through the
router; headers and forged node parts), kill (a node's clients after
SIGKILL), drain (a node's clients during and after SIGTERM).

usage: fleet_route.py PHASE STATE ROUTER_URL TOKEN_A TOKEN_B NODE=PORT:PID...
"""
import json
import os
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from fleetclient import Legacy, Modern, b64

LOST, DRAINING, WRONG = -31001, -31002, -31003
SESSIONS = 30


def fail(msg):
    sys.exit("FAIL: " + msg)


def note(msg):
    print("  " + msg, flush=True)


def node_of(handle):
    return handle.rsplit(".", 1)[1]


def result(st, msg, what):
    """The tool result of a 200 reply that is not an error."""
    if st != 200 or "result" not in msg or msg["result"].get("isError"):
        fail("%s: %s %s" % (what, st, json.dumps(msg)[:300]))
    return msg["result"]


def error(st, msg, code, what, statuses=(200,)):
    if st not in statuses or "error" not in msg or msg["error"]["code"] != code:
        fail("%s: wanted %d, got %s %s" % (what, code, st,
                                           json.dumps(msg)[:300]))
    return msg["error"]


def gone(pid):
    """The process has exited (a zombie of the shell's counts)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ", 1)[1].startswith("Z")
    except OSError:
        return True


def started(a, sid):
    """Waits until the call running in sid has written /workspace/started
    (list_files serves while a call runs): it is on its node, running."""
    for _ in range(200):
        s, m = a.tool("list_files", {"session_id": sid})
        if any(f["name"] == "started" for f in
               result(s, m, "list_files")["structuredContent"]["files"]):
            return
        time.sleep(0.05)
    fail("the call in %s did not start" % sid)


RUNNING = "open('/workspace/started', 'w').close()\nimport time\ntime.sleep(%d)\n"


def route(st, url, toka, tokb, nodes):
    a = Modern(url, toka)
    names = list(nodes)

    def open_one(i):
        s, m = a.tool("execute_python", {"code": "tag = 'k%d'\nprint('ok')" % i})
        return result(s, m, "new session %d" % i)["structuredContent"]["session_id"]

    t0 = time.monotonic()
    with ThreadPoolExecutor(6) as ex:
        sids = list(ex.map(open_one, range(SESSIONS)))
    st["made"] = SESSIONS
    per = {n: [s for s in sids if node_of(s) == n] for n in nodes}
    if len(set(sids)) != SESSIONS or sum(map(len, per.values())) != SESSIONS:
        fail("sessions name no node of the fleet: %s" % sids)
    if min(map(len, per.values())) < 3:
        fail("the router did not spread new sessions: %s" %
             {n: len(v) for n, v in per.items()})
    note("%d sessions through the router in %.1f s, per node %s" % (
        SESSIONS, time.monotonic() - t0, {n: len(v) for n, v in per.items()}))

    def again(i):
        s, m = a.tool("execute_python", {"code": "print(tag)",
                                         "session_id": sids[i]})
        out = result(s, m, "call %d" % i)["structuredContent"]["stdout"]
        if out != "k%d\n" % i:
            fail("session %s forgot its variable: %r" % (sids[i], out))

    with ThreadPoolExecutor(6) as ex:
        list(ex.map(again, range(SESSIONS)))
    note("each session's second call (Mcp-Param-Session-Id) found its variable on its node")

    # 2025-11-25 through the router: the MCP session's node holds its
    # sandboxes.  One on every node, for the kill and the drain.
    legacy = {}
    for _ in range(20):
        c = Legacy(url, toka)
        n = node_of(c.initialize())
        if n in legacy:
            continue
        s, m = c.tool("execute_python", {"code": "w = 7"})
        sid = result(s, m, "legacy call")["structuredContent"]["session_id"]
        if node_of(sid) != n:
            fail("a 2025 session's sandbox %s is not on its node %s" % (sid, n))
        s, m = c.tool("execute_python", {"code": "print(w * 6)", "session_id": sid})
        if result(s, m, "legacy again")["structuredContent"]["stdout"] != "42\n":
            fail("legacy session lost its state")
        legacy[n] = {"mcp": c.sid, "sid": sid}
        st["made"] += 1
        if len(legacy) == len(nodes):
            break
    if len(legacy) != len(nodes):
        fail("2025 MCP sessions did not reach every node: %s" % legacy)
    note("2025-11-25 MCP sessions (Mcp-Session-Id) keep their sandboxes on their node")
    # A 2025 client whose MCP session is now on another node than its
    # sandbox (a new MCP session, after a restart): the router sends the
    # call by the body's session_id, and the sandbox's node serves it.
    for here, there in zip(names, names[1:] + names[:1]):
        c = Legacy(url, toka)
        c.sid = legacy[here]["mcp"]
        s, m = c.tool("execute_python", {"code": "print(w)",
                                         "session_id": legacy[there]["sid"]})
        if result(s, m, "a sandbox of another MCP session's node")[
                "structuredContent"]["stdout"] != "7\n":
            fail("cross-node 2025 call: %s" % m)
    note("a 2025 MCP session reaches its principal's sandbox on another node")

    # A task (2026-07-28 extension): tasks/get carries its id in Mcp-Name.
    t = Modern(url, toka, tasks=True)
    s, m = t.tool("execute_python", {"code": "print(5 * 5)"})
    task = result(s, m, "task")["taskId"]
    st["made"] += 1
    for _ in range(100):
        s, m = t.rpc("tasks/get", {"taskId": task})
        if result(s, m, "tasks/get")["status"] != "working":
            break
        time.sleep(0.1)
    if m["result"]["status"] != "completed" or \
            m["result"]["result"]["structuredContent"]["stdout"] != "25\n":
        fail("task %s through the router: %s" % (task, m))
    note("task %s polled through the router to its result" % task)

    # An artifact: resources/read finds it by the session in its URI.
    s, m = a.tool("execute_python", {"session_id": sids[0], "code":
                                     "open('/workspace/out.txt', 'w').write(tag)"})
    uri = [c["uri"] for c in result(s, m, "artifact")["content"]
           if c["type"] == "resource_link"][0]
    s, m = a.rpc("resources/read", {"uri": uri})
    if result(s, m, "resources/read")["contents"][0].get("text") != "k0":
        fail("resources/read %s: %s" % (uri, m))
    note("resources/read of %s routed by the session in its URI" % uri.split("/")[3])

    # Headers that do not say what the body says: refused by the node
    # the header reached (400, -32020), whatever the router did with it.
    s1, s2 = per[names[0]][0], per[names[1]][0]
    for what, args, hdrs in [
            ("header of another session", {"code": "1", "session_id": s2},
             {"Mcp-Param-Session-Id": s1}),
            ("no header with a session_id", {"code": "1", "session_id": s1},
             {"Mcp-Param-Session-Id": None}),
            ("a header without session_id", {"code": "1"},
             {"Mcp-Param-Session-Id": s1}),
            ("another session in base64", {"code": "1", "session_id": s2},
             {"Mcp-Param-Session-Id": b64(s1)}),
            ("broken base64", {"code": "1", "session_id": s1},
             {"Mcp-Param-Session-Id": "=?base64?%%%%?="})]:
        s, m = a.tool("execute_python", args, headers=hdrs)
        error(s, m, -32020, what, statuses=(400,))
    s, m = a.tool("execute_python", {"code": "print(tag)", "session_id": s1},
                  headers={"Mcp-Param-Session-Id": b64(s1)})
    result(s, m, "matching base64 header")
    note("Mcp-Param-Session-Id must be the body's session_id (400, -32020); base64 decoded")

    # A node part is a routing hint, never a key: another node's suffix
    # on a session's random part reaches nothing; an unknown node is lost.
    forged = s1.rsplit(".", 1)[0] + "." + names[1]
    s, m = a.tool("execute_python", {"code": "print(tag)", "session_id": forged})
    r = m.get("result", {})
    if s != 200 or not r.get("isError") or \
            "session not found" not in r["content"][0]["text"]:
        fail("forged node part: %s %s" % (s, m))
    s, m = a.tool("execute_python", {"code": "1",
                                     "session_id": s1.rsplit(".", 1)[0] + ".node-9"})
    e = error(s, m, LOST, "a node the fleet does not have")
    if e["data"] != {"reason": "node_gone", "node": "node-9",
                     "handle": s1.rsplit(".", 1)[0] + ".node-9"} or m["id"] is None:
        fail("node_gone data: %s" % m)
    s, m = Modern(url, tokb).tool("execute_python", {"code": "print(tag)",
                                                     "session_id": s1})
    if s != 200 or not m["result"].get("isError"):
        fail("another principal reached a session: %s" % m)
    note("a forged node part reaches nothing, an unknown node is -31001, "
         "a session stays its principal's")

    # Past the router: a node answers another node's handle as such.
    direct = "http://127.0.0.1:%d/mcp" % nodes[names[0]][0]
    s, m = Modern(direct, toka).tool("execute_python", {"code": "1",
                                                        "session_id": s2})
    e = error(s, m, WRONG, "another node's session, direct")
    if e["data"]["node"] != names[1] or e["data"]["reason"] != "wrong_node":
        fail("wrong_node data: %s" % m)
    c = Legacy(direct, toka)
    c.sid = legacy[names[1]]["mcp"]
    s, m = c.tool("execute_python", {"code": "1"})
    error(s, m, WRONG, "another node's MCP session, direct", statuses=(404,))
    s, m = Modern(direct, toka, tasks=True).rpc("tasks/get", {
        "taskId": task.rsplit(".", 1)[0] + "." + names[1]})
    error(s, m, WRONG, "another node's task, direct")
    note("a node answers another node's handle with -31003 (404 for an MCP session)")
    st.update(sessions=sids, legacy=legacy, task=task)


def kill(st, url, toka, tokb, nodes):
    a = Modern(url, toka)
    victim = list(nodes)[2]
    os.kill(nodes[victim][1], signal.SIGKILL)
    mine = [s for s in st["sessions"] if node_of(s) == victim]
    # At once, before a check has seen it: the connection fails or is
    # cut (HAProxy's 503 or 502, with the same body).
    s, m = a.tool("execute_python", {"code": "print(tag)", "session_id": mine[0]})
    error(s, m, LOST, "a call as the node dies", statuses=(200, 502, 503))
    time.sleep(1.5)	# two checks
    for sid in mine:
        s, m = a.tool("execute_python", {"code": "print(tag)", "session_id": sid})
        e = error(s, m, LOST, "a session of the killed node")
        if e["message"] != "session lost: node %s is gone" % victim or \
                e["data"] != {"reason": "node_gone", "node": victim,
                              "handle": sid}:
            fail("session lost: %s" % m)
    c = Legacy(url, toka)
    c.sid = st["legacy"][victim]["mcp"]
    s, m = c.tool("execute_python", {"code": "1"})
    error(s, m, LOST, "the killed node's MCP session", statuses=(404,))
    note("%d sessions of killed %s: -31001 'session lost: node %s is gone', "
         "never a new sandbox; its MCP session 404" % (len(mine), victim, victim))
    for sid in st["sessions"]:
        if node_of(sid) == victim:
            continue
        s, m = a.tool("execute_python", {"code": "print(tag)", "session_id": sid})
        result(s, m, "a live node's session after the kill")
    fresh = []
    for i in range(6):
        s, m = a.tool("execute_python", {"code": "tag = 'n%d'" % i})
        fresh.append(result(s, m, "a new session after the kill")
                     ["structuredContent"]["session_id"])
        st["made"] += 1
    if any(node_of(s) == victim for s in fresh):
        fail("a new session went to the dead node: %s" % fresh)
    note("the other nodes' sessions go on; new sessions go to live nodes")
    st["victim"] = victim
    st["sessions"] += fresh


def drain(st, url, toka, tokb, nodes):
    a = Modern(url, toka)
    node = [n for n in nodes if n != st["victim"]][1]
    pid = nodes[node][1]
    mine = [s for s in st["sessions"] if node_of(s) == node]
    out = {}

    def running():
        out["reply"] = a.tool("execute_python", {"session_id": mine[0], "code":
                              RUNNING % 4 + "print(tag)"})

    th = threading.Thread(target=running)
    th.start()
    started(a, mine[0])
    t0 = time.monotonic()
    os.kill(pid, signal.SIGTERM)
    # Until the signal is seen, such a call still runs (and is harmless).
    for _ in range(100):
        s, m = a.tool("execute_python", {"code": "print(tag)",
                                         "session_id": mine[1]})
        if "error" in m:
            break
        time.sleep(0.05)
    e = error(s, m, LOST, "new code in a draining node's session")
    if e["data"]["reason"] != "node_draining" or e["data"]["node"] != node:
        fail("draining data: %s" % m)
    s, m = a.tool("list_files", {"session_id": mine[1]})
    result(s, m, "list_files while draining")
    for i in range(4):
        s, m = a.tool("execute_python", {"code": "tag = 'd%d'" % i})
        sid = result(s, m, "a new session while %s drains" % node)[
            "structuredContent"]["session_id"]
        if node_of(sid) == node:
            fail("a draining node took a new session: %s" % sid)
        st["made"] += 1
    for _ in range(4):
        if node_of(Legacy(url, toka).initialize()) == node:
            fail("a draining node took a new MCP session")
    note("draining %s: new code in its sessions -31001 (node_draining), files "
         "still served, new sessions and MCP sessions go elsewhere" % node)
    th.join()
    s, m = out["reply"]
    r = result(s, m, "the call running at SIGTERM")["structuredContent"]
    if r["stdout"] != "k%d\n" % st["sessions"].index(mine[0]) or r["exit_code"] != 0:
        fail("the running call did not finish: %s" % r)
    for _ in range(100):
        if gone(pid):
            break
        time.sleep(0.1)
    else:
        fail("%s did not stop after its last call" % node)
    note("the call running at SIGTERM finished (exit 0); %s stopped %.1f s "
         "after SIGTERM" % (node, time.monotonic() - t0))
    time.sleep(1.0)	# two checks
    s, m = a.tool("execute_python", {"code": "1", "session_id": mine[1]})
    error(s, m, LOST, "a drained node's session")
    c = Legacy(url, toka)
    c.sid = st["legacy"][node]["mcp"]
    s, m = c.tool("execute_python", {"code": "1"})
    error(s, m, LOST, "the drained node's MCP session", statuses=(404,))
    note("once it is gone, its sessions are -31001 at the router")
    st["drained"] = node


def cut(st, url, toka, tokb, nodes):
    """The last node drains with a call longer than its grace (1 s)."""
    a = Modern(url, toka)
    node = [n for n in nodes if n not in (st["victim"], st["drained"])][0]
    sid = [s for s in st["sessions"] if node_of(s) == node][0]
    out = {}

    def running():
        out["reply"] = a.tool("execute_python", {"session_id": sid, "code":
                              RUNNING % 30})

    th = threading.Thread(target=running)
    th.start()
    started(a, sid)
    t0 = time.monotonic()
    os.kill(nodes[node][1], signal.SIGTERM)
    th.join(15)
    if th.is_alive():
        fail("the call outliving the grace got no answer")
    s, m = out["reply"]
    r = m.get("result", {})
    text = r.get("content", [{}])[0].get("text", "")
    if s != 200 or not r.get("isError") or \
            not r["structuredContent"]["session_lost"] or \
            "drain grace ran out" not in text:
        fail("a call the grace ended: %s %s" % (s, json.dumps(m)[:400]))
    note("draining %s with 1 s of grace: its call ended after %.1f s, the "
         "client told its sandbox went with the drain" % (
             node, time.monotonic() - t0))


def main():
    phase, state, url, toka, tokb = sys.argv[1:6]
    nodes = {}
    for n in sys.argv[6:]:
        name, rest = n.split("=")
        port, pid = rest.split(":")
        nodes[name] = (int(port), int(pid))
    st = json.load(open(state)) if os.path.exists(state) else {}
    {"route": route, "kill": kill, "drain": drain, "cut": cut}[phase](
        st, url, toka, tokb, nodes)
    json.dump(st, open(state, "w"))


main()
