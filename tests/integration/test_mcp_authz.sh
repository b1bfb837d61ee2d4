#!/bin/bash
# Principals and groups over HTTP (rules/principals.yaml): two principals
# with different profiles in one mcp-exec (none vs loopback network, and
# different limits), profile choice inside and outside the allowed set,
# tools not allowed refused and hidden from tools/list, every quota
# reached and reset (the quota clock is a file: STOCKADE_QUOTA_TEST_CLOCK),
# usage surviving a restart, `stockade status` and /metrics showing it,
# SIGHUP adding a principal while sessions live, and `unlisted:` denying
# a caller no entry names.
. "$(dirname "$0")/lib.sh"

trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" >&2; stop_mx || true; cleanup' EXIT

start_auditd
mcp_rules
# lab: loopback up, a smaller memory limit and a longer timeout.
sed -e 's/^network: none.*/network: loopback/' -e 's/^  memory: 512M.*/  memory: 256M/' \
    -e 's/^  max_ms: 60000/  max_ms: 30000/' "$R/profiles/default.yaml" >"$R/profiles/lab.yaml"
grep -q '^network: loopback' "$R/profiles/lab.yaml" || fail "sed missed network"
hash() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
TOKA=tokA-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
TOKB=tokB-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
TOKC=tokC-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
TOKE=tokE-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
principals() {
	cat <<EOF
tokens:
  - sha256: $(hash "$TOKA")
    principal: "user:alice"
    groups: [analysts]
  - sha256: $(hash "$TOKB")
    principal: "user:bob"
$1
principals:
  - name: "user:alice"
    profiles: [default, lab]
    default_profile: default
    choose_profile: true
    quotas:
      sessions: 2
      calls_per_minute: 3
  - name: "user:bob"
    tools: [execute_python]
    default_profile: lab
    quotas:
      wall_seconds_per_hour: 2
      cpu_seconds_per_day: 1
      artifact_bytes_per_day: 100
$2
groups:
  - name: analysts
    quotas:
      concurrent_calls: 1
EOF
}
principals "" "" >"$R/principals.yaml"
"$STOCKADE" rules check "$R" >/dev/null || fail "rules check refuses the test's rules"

# The same loader as mcp-exec: errors by file:line:column.
cp -R "$R" "$T/bad"
cat >>"$T/bad/principals.yaml" <<'EOF'
  - name: ops
    profiles: [nosuch]
    tools: [rm_rf]
    quotas: { calls_per_hour: 1, sessions: -1 }
EOF
st=0; out=$("$STOCKADE" rules check "$T/bad" 2>&1) || st=$?
[ $st != 0 ] || fail "rules check accepted a bad principals.yaml"
for want in "principals.yaml:29:16: no profile nosuch" "principals.yaml:30:13: tools:" \
    "principals.yaml:31:31: unknown key .calls_per_hour" "principals.yaml:31:44: key .sessions.: -1"; do
	echo "$out" | grep -q "$want" || fail "rules check: no '$want' in: $out"
done
note "stockade rules check: principals, groups, profiles, tools and quotas by file:line:column"

CLOCK="$T/clock"
T0=$(( 1800000000 - 1800000000 % 86400 + 10 ))	# 10 s into a UTC day
echo $T0 >"$CLOCK"
export STOCKADE_QUOTA_TEST_CLOCK="$CLOCK"
start_mx
URL="http://127.0.0.1:$PORT/mcp"

"$PY" - "$URL" "$TOKA" "$TOKB" "$CLOCK" "$T0" "$T/mx-state" <<'EOF' || fail "authorization (see above)"
import glob, json, sys, threading, time
sys.path.insert(0, "tests/integration")
from mcpclient import Http, McpError

url, toka, tokb, clock, t0, state = sys.argv[1:7]
t0 = int(t0)
def running(subject):
    """concurrent_calls used by subject, as the status file says."""
    for f in glob.glob(state + "/sessions-*.json"):
        try:
            for a in json.load(open(f)).get("quotas", []):
                if a["subject"] == subject:
                    return a["quotas"]["concurrent_calls"]["used"]
        except (ValueError, KeyError):
            pass
    return 0
def at(t):
    open(clock, "w").write("%d\n" % t)

def client(tok):
    c = Http(url, tok)
    c.init = c.initialize()
    return c

def run(c, code, **kw):
    args = {"code": code}
    args.update(kw)
    return c.tool("execute_python", args)

def text(r):
    return r["content"][0]["text"]

def refused(r, *words):
    assert r.get("isError") and "structuredContent" not in r, r
    for w in words:
        assert w in text(r), (w, text(r))

NET = ("import socket, errno\ns = socket.socket()\ntry:\n"
       "    s.connect(('127.0.0.1', 9))\nexcept OSError as e:\n"
       "    print(errno.errorcode[e.errno])\n")
alice, bob = client(toka), client(tokb)

# tools/list: alice may choose among default and lab; bob sees one tool.
tools = {t["name"]: t for t in alice.call("tools/list")["tools"]}
assert set(tools) >= {"execute_python", "close_session"}, list(tools)
prof = tools["execute_python"]["inputSchema"]["properties"]["profile"]
assert prof["enum"] == ["default", "lab"], prof
tools = [t["name"] for t in bob.call("tools/list")["tools"]]
assert tools == ["execute_python"], tools
bt = bob.call("tools/list")["tools"][0]
assert "profile" not in bt["inputSchema"]["properties"], bt
assert "loopback" in bt["description"], bt["description"]
# initialize's instructions describe the caller's own default profile.
assert "loopback only" in bob.init["instructions"], bob.init
assert "no network" in alice.init["instructions"], alice.init
print("  tools/list: alice offered profile enum [default, lab]; bob only execute_python")

# Two principals, two profiles: alice's default has no network (L0,
# loopback down), bob's lab has loopback; lab's timeout maximum is lower.
r = run(alice, NET)
a1 = r["structuredContent"]["session_id"]
assert r["structuredContent"]["stdout"].strip() == "ENETUNREACH", r
r = run(bob, NET)
assert r["structuredContent"]["stdout"].strip() == "ECONNREFUSED", r
b1 = r["structuredContent"]["session_id"]
refused(run(bob, "1", session_id=b1, timeout_ms=40000), "maximum of 30000")
r = run(alice, NET, profile="lab")
a2 = r["structuredContent"]["session_id"]
assert r["structuredContent"]["stdout"].strip() == "ECONNREFUSED", r
print("  alice: default profile, network none; bob: lab, loopback; alice chose lab")

# Choices outside the allowed set.
at(t0 + 60)
refused(run(alice, "1", profile="nosuch"), "profile nosuch is not one",
        "allowed: default, lab")
refused(run(bob, "1", profile="default"), "may not choose a profile")
refused(run(alice, "1", profile="lab", session_id=a1), "keeps the profile")
r = bob.tool("close_session", {"session_id": b1})
refused(r, "close_session is not a tool principal user:bob may use")
print("  refused: a profile not allowed, a choice by bob, close_session for bob")

# sessions (2): alice holds a1 and a2.
r = run(alice, "x = 41")
refused(r, "quota exceeded: sessions (2) of principal:user:alice",
        "frees up when one of them ends")
# calls_per_minute (3): two calls fit in this minute, the third does not.
run(alice, "x = 41", session_id=a1)
run(alice, "x += 1", session_id=a1)
run(alice, "1", session_id=a2)
r = run(alice, "1", session_id=a1)
reset = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0 - 10 + 120))
refused(r, "calls_per_minute (3) of principal:user:alice, 3 used",
        "resets at " + reset)
at(t0 + 120)
r = run(alice, "print(x)", session_id=a1)
assert r["structuredContent"]["stdout"] == "42\n", r
alice.tool("close_session", {"session_id": a2})
r = run(alice, "1")
assert not r.get("isError"), r
a3 = r["structuredContent"]["session_id"]
print("  sessions and calls_per_minute reached, then freed and reset")

# concurrent_calls (1), the group's: a second call while one runs.
at(t0 + 180)
slow = {}
def sleeper():
    slow["r"] = run(client(toka), "import time; time.sleep(3)", session_id=a1)
# The status file lags calls by up to 200 ms (sessions/persist.c): first
# until it shows none running, so the 1 below is the slow call's.
for _ in range(300):
    if running("group:analysts") == 0:
        break
    time.sleep(0.02)
th = threading.Thread(target=sleeper)
th.start()
# Until the slow call runs (under load it may take a while to start).
for _ in range(300):
    if running("group:analysts") == 1:
        break
    time.sleep(0.02)
assert th.is_alive(), slow
r = run(alice, "1", session_id=a3)
refused(r, "concurrent_calls (1) of group:analysts", "frees up")
th.join()
assert not slow["r"].get("isError"), slow
r = run(alice, "1", session_id=a3)
assert not r.get("isError"), r
print("  concurrent_calls of group analysts reached and freed")

# wall_seconds_per_hour (2) for bob.
r = run(bob, "import time; time.sleep(2.2)", session_id=b1)
assert not r.get("isError"), r
r = run(bob, "1", session_id=b1)
refused(r, "wall_seconds_per_hour (2) of principal:user:bob, 2 used",
        time.strftime("resets at %Y-%m-%dT%H:00:00Z", time.gmtime(t0 + 3600)))
open(clock + ".b1", "w").write(b1)
print("  wall_seconds_per_hour reached")
EOF

# Usage survives a restart: the same refusal from a new mcp-exec.
stop_mx
start_mx
URL="http://127.0.0.1:$PORT/mcp"
"$PY" - "$URL" "$TOKA" "$TOKB" "$CLOCK" "$T0" <<'EOF' || fail "quotas after a restart (see above)"
import sys, time
sys.path.insert(0, "tests/integration")
from mcpclient import Http

url, toka, tokb, clock, t0 = sys.argv[1:6]
t0 = int(t0)
def at(t):
    open(clock, "w").write("%d\n" % t)
bob = Http(url, tokb)
bob.initialize()
def run(code, **kw):
    a = {"code": code}
    a.update(kw)
    return bob.tool("execute_python", a)
def refused(r, *words):
    assert r.get("isError") and "structuredContent" not in r, r
    for w in words:
        assert w in r["content"][0]["text"], (w, r["content"][0]["text"])

refused(run("1"), "wall_seconds_per_hour (2) of principal:user:bob")
print("  after a restart: wall_seconds_per_hour still reached")
# The next hour: reset.  cpu_seconds_per_day (1), then the next day.
at(t0 + 3600)
r = run("import time\nt = time.process_time()\nwhile time.process_time() - t < 1.1: pass\n")
assert not r.get("isError"), r
sid = r["structuredContent"]["session_id"]
refused(run("1", session_id=sid), "cpu_seconds_per_day (1) of principal:user:bob")
print("  wall_seconds_per_hour reset an hour later; cpu_seconds_per_day reached")
# The next day: CPU burnt by a child nobody waits for (its parent ignores
# SIGCHLD, so the kernel adds its time to no one in /proc) is billed too.
at(t0 + 86400)
r = run("import os, signal, time\nsignal.signal(signal.SIGCHLD, signal.SIG_IGN)\n"
        "pid = os.fork()\nif pid == 0:\n    t = time.process_time()\n"
        "    while time.process_time() - t < 1.1: pass\n    os._exit(0)\n"
        "while True:\n    try:\n        os.kill(pid, 0)\n"
        "    except ProcessLookupError:\n        break\n    time.sleep(0.02)\n",
        session_id=sid)
assert not r.get("isError"), r
refused(run("1", session_id=sid), "cpu_seconds_per_day (1) of principal:user:bob")
print("  a child's CPU nobody waited for is billed: cpu_seconds_per_day reached")
# artifact_bytes_per_day (100): 200 bytes come back, the next call is refused.
at(t0 + 2 * 86400)
r = run("open('/workspace/a.txt', 'w').write('x' * 200)", session_id=sid)
assert not r.get("isError"), r
assert r["structuredContent"]["artifacts"][0]["size"] == 200, r
refused(run("1", session_id=sid), "artifact_bytes_per_day (100) of principal:user:bob, 200 used")
print("  the next day: cpu reset; artifact_bytes_per_day reached")
open(clock + ".sid", "w").write(sid)
EOF

# stockade status: usage against quotas per principal and group, as of
# at most 200 ms after the last call (sessions/persist.c).
for _ in $(seq 1 20); do
	out=$("$STOCKADE" status --mcp-state "$T/mx-state" 2>&1 || true)
	echo "$out" | grep -Eq "artifact_bytes_per_day +200 / 100 .*AT LIMIT" && break
	sleep 0.1
done
echo "$out" | grep -q "quota          principal:user:bob" || fail "status: no bob: $out"
echo "$out" | grep -Eq "artifact_bytes_per_day +200 / 100 .*AT LIMIT" || fail "status: $out"
echo "$out" | grep -q "group:analysts" || fail "status: no group: $out"
# /metrics: counts, no names unless server.metrics_name_principals.
m=$(curl -s -H "Authorization: Bearer $TOKA" "http://127.0.0.1:$PORT/metrics")
echo "$m" | grep -q 'stockade_quota_subjects_at_limit{quota="artifact_bytes_per_day"} 1' ||
    fail "metrics: $(echo "$m" | grep quota)"
! echo "$m" | grep -q "user:bob" || fail "metrics name a principal"
note "stockade status shows usage per principal and group; /metrics names none"

# SIGHUP is all or nothing: a principal naming a profile that does not
# load leaves the running rules (and their profiles) in force.
hup_and_wait() {	# $1: "true" or "false", the policy_load's ok
	local n0 n
	n0=$(grep -c '"event":"policy_load"' "$LOG"/audit-*.log || true)
	kill -HUP "$MX_PID"
	for _ in $(seq 1 100); do
		n=$(grep -c '"event":"policy_load"' "$LOG"/audit-*.log || true)
		[ "$n" -gt "$n0" ] && break
		sleep 0.05
	done
	[ "$n" -gt "$n0" ] || fail "no policy_load after SIGHUP"
	grep -ah '"event":"policy_load"' "$LOG"/audit-*.log | tail -1 | grep -q "\"ok\":$1" ||
	    fail "policy_load after SIGHUP is not ok:$1"
}
printf 'limits:\n  memory: lots\n' >"$R/profiles/broken.yaml"
principals "" "  - name: \"user:dave\"
    profiles: [broken]" >"$R/principals.yaml"
hup_and_wait false
grep -q "profiles/broken.yaml:2:11" "$T/mx.err" || fail "the broken profile's error has no position"
rm "$R/profiles/broken.yaml"
note "SIGHUP naming a profile that does not load: refused whole, with its file:line:column"

# SIGHUP adding a principal (carol, lab only) while sessions live, and
# denying callers listed nowhere (erin has a token, no entry).
principals "  - sha256: $(hash "$TOKC")
    principal: \"user:carol\"
  - sha256: $(hash "$TOKE")
    principal: \"user:erin\"" "  - name: \"user:carol\"
    profiles: [lab]" >"$R/principals.yaml"
printf 'unlisted:\n  tools: []\n' >>"$R/principals.yaml"
sed -i 's/^server:$/server:\n  metrics_name_principals: true/' "$R/mcp-exec.yaml"
hup_and_wait true
m=$(curl -s -H "Authorization: Bearer $TOKA" "http://127.0.0.1:$PORT/metrics")
echo "$m" | grep -q 'stockade_quota_used{subject="principal:user:bob",quota="artifact_bytes_per_day"} 200' ||
    fail "metrics_name_principals: $(echo "$m" | grep quota)"
"$PY" - "$URL" "$TOKB" "$TOKC" "$CLOCK" "$TOKE" <<'EOF' || fail "SIGHUP with sessions alive (see above)"
import sys
sys.path.insert(0, "tests/integration")
from mcpclient import Http

url, tokb, tokc, clock, toke = sys.argv[1:6]
sid = open(clock + ".sid").read()
now = int(open(clock).read())
open(clock, "w").write("%d\n" % (now + 86400))
bob = Http(url, tokb)
bob.initialize()
r = bob.tool("execute_python", {"code": "print(open('/workspace/a.txt').read()[:3])",
                                "session_id": sid})
assert r["structuredContent"]["stdout"] == "xxx\n", r
carol = Http(url, tokc)
carol.initialize()
# carol's only profile is lab: loopback up.
NET = ("import socket, errno\ns = socket.socket()\ntry:\n"
       "    s.connect(('127.0.0.1', 9))\nexcept OSError as e:\n"
       "    print(errno.errorcode[e.errno])\n")
r = carol.tool("execute_python", {"code": NET})
assert r["structuredContent"]["stdout"] == "ECONNREFUSED\n", r
print("  SIGHUP added carol (profile lab) and named principals in /metrics; bob's session kept its files")
erin = Http(url, toke)
erin.initialize()
assert erin.call("tools/list")["tools"] == [], "unlisted erin sees tools"
r = erin.tool("execute_python", {"code": "print(1)"})
assert r.get("isError") and "stdout" not in r.get("structuredContent", {}), r
print("  unlisted: {tools: []}: a caller listed nowhere sees no tool and runs nothing")
EOF

# Every quota decision is in the trail: refusals name the quota.
for q in sessions calls_per_minute concurrent_calls wall_seconds_per_hour \
    cpu_seconds_per_day artifact_bytes_per_day; do
	grep -ah '"event":"call_refused"' "$LOG"/audit-*.log | grep -q "\"rule_id\":\"quota:$q\"" ||
	    fail "no call_refused for quota $q"
done
grep -ah '"event":"execution_started"' "$LOG"/audit-*.log | grep -q '"quota_checked":\["principal:user:alice","group:analysts"\]' ||
    fail "execution_started does not record the quotas checked"
grep -ah '"event":"call_refused"' "$LOG"/audit-*.log | grep -q '"rule_id":"authz:profile"' || fail "no authz:profile refusal"
grep -ah '"event":"call_refused"' "$LOG"/audit-*.log | grep -q '"rule_id":"authz:tools"' || fail "no authz:tools refusal"
note "call_refused names each quota (and authz:tools, authz:profile); execution_started the quotas checked"
stop_mx
