#!/bin/bash
# MCP tasks outlive their server: mcp-exec (node-7) acknowledges two
# tasks, one finishes, the other is still running when the process is
# killed (SIGKILL: no clean stop).  The next mcp-exec on the same state
# and node answers tasks/get and tasks/result for both: the finished
# one's result, and for the one that was running a typed failure
# (-31004, data.reason lost_with_node, data.node), never "not found".
# The records live in server.tasks.dir, outside the state dir.
. "$(dirname "$0")/lib.sh"

start_auditd
mcp_rules
TD="$T/durable/tasks"
sed -i "s|^  tasks:\$|  tasks:\n    dir: $TD|" "$R/mcp-exec.yaml"
grep -q "dir: $TD" "$R/mcp-exec.yaml" || fail "sed missed server.tasks"

"$PY" - "$MX" "$R" "$S" "$TD" "$LOG" <<'PY' || fail "tasks across a restart: $(tail -5 "$T/mx.err")"
import json, os, signal, subprocess, sys, time, glob
mx, rules, state, td, log = sys.argv[1:6]

class Server:
    def __init__(self):
        self.p = subprocess.Popen([mx, "--stdio", "--rules", rules, "--state-dir",
            state, "--node-id", "node-7"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=open(os.path.dirname(log) + "/mx.err", "a"))
        self.id = 0
        r = self.rpc("initialize", {"protocolVersion": "2025-11-25",
            "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
        assert "result" in r, r
        self.send({"method": "notifications/initialized"})
    def send(self, m):
        m["jsonrpc"] = "2.0"
        self.p.stdin.write((json.dumps(m) + "\n").encode())
        self.p.stdin.flush()
    def rpc(self, method, params):
        self.id += 1
        self.send({"id": self.id, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                sys.exit("mcp-exec closed its output during " + method)
            m = json.loads(line)
            if m.get("id") == self.id and "method" not in m:
                return m

def task(s, code):
    r = s.rpc("tools/call", {"name": "execute_python", "arguments": {"code": code},
        "task": {}})
    return r["result"]["task"]["taskId"]

def records(tid, event):
    for _ in range(400):
        for f in glob.glob(log + "/audit-*.log"):
            for l in open(f):
                if '"event":"%s"' % event in l and tid in l:
                    return
        time.sleep(0.05)
    sys.exit("no %s for %s" % (event, tid))

one = Server()
# Its published status names the node (stockade status, fleet status).
st = [json.load(open(f)) for f in glob.glob(state + "/sessions-*.json")]
assert [s.get("node") for s in st] == ["node-7"], st
done = task(one, "print(6 * 7)")
for _ in range(400):
    t = one.rpc("tasks/get", {"taskId": done})["result"]
    if t["status"] != "working":
        break
    time.sleep(0.05)
assert t["status"] == "completed", t
running = task(one, "import time\ntime.sleep(120)")
assert running.endswith(".node-7"), running
records(running, "execution_started")
assert os.path.exists(os.path.join(td, running)), os.listdir(td)
assert not os.path.exists(os.path.join(state, "tasks", running))
one.p.send_signal(signal.SIGKILL)
one.p.wait()
print("  acknowledged 2 tasks (records in server.tasks.dir), one done; SIGKILL while the other runs")

two = Server()
t = two.rpc("tasks/get", {"taskId": done})
assert t["result"]["status"] == "completed", t
r = two.rpc("tasks/result", {"taskId": done})
assert "42" in json.dumps(r["result"]["content"]), r
print("  after the restart: the finished task's result, from tasks/result")

t = two.rpc("tasks/get", {"taskId": running})
assert t["result"]["status"] == "failed", t
assert "restarted" in t["result"]["statusMessage"], t
r = two.rpc("tasks/result", {"taskId": running})
e = r["error"]
assert e["code"] == -31004, e
assert e["data"] == {"reason": "lost_with_node", "node": "node-7"}, e
print("  the task that was running: failed, -31004 lost_with_node (node-7), never not found")

# Something never acknowledged is still "not found".
r = two.rpc("tasks/get", {"taskId": "0" * 32 + ".node-7"})
assert r["error"]["code"] == -32602, r
two.p.stdin.close()
assert two.p.wait(timeout=30) == 0
PY
echo "PASS test_task_restart"
