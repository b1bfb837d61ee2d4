#!/bin/bash
# Quotas across a fleet (rules/mcp-exec.yaml fleet:, issue 35): two
# mcp-exec --http nodes share one redis-server (unix socket, no TCP).
# A principal's calls_per_minute and sessions hold in total, not per
# node; a node killed while a call and a session of it hold leases
# (concurrent_calls, sessions) frees them within lease_s; wall seconds
# used on one node count against the next call on another; with Redis
# stopped, on_unreachable: refuse refuses (recorded) and local falls back
# to per-node quotas (recorded), its usage kept for Redis; Redis back:
# restored, and the usage counted while it was away added.
. "$(dirname "$0")/lib.sh"

command -v redis-server >/dev/null || { echo "SKIP: no redis-server"; exit 77; }
RS="$T/redis.sock"
REDIS_PID="" A_PID="" B_PID="" C_PID=""
stop_all() {
	for p in $A_PID $B_PID $C_PID $REDIS_PID; do
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
}
trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" >&2; stop_all; cleanup' EXIT

start_redis() {
	redis-server --port 0 --unixsocket "$RS" --unixsocketperm 700 \
	    --save '' --appendonly no --dir "$T" >>"$T/redis.log" 2>&1 &
	REDIS_PID=$!
	for _ in $(seq 1 250); do
		redis-cli -s "$RS" ping 2>/dev/null | grep -q PONG && return 0
		sleep 0.02
	done
	fail "redis-server did not answer on $RS"
}

start_auditd
mcp_rules
mcp_tokens "user:p" "user:q"
cat >>"$R/principals.yaml" <<'EOF'
principals:
  - name: "user:p"
    quotas: { calls_per_minute: 4, concurrent_calls: 1, sessions: 2 }
  - name: "user:q"
    quotas: { wall_seconds_per_hour: 2 }
EOF
# node NAME MODE: its own rules (node id, on_unreachable) and state dir.
# The shipped fleet: section (node_id ~, the file's last) gives way to
# the test's.
node() {
	cp -R "$R" "$T/rules-$1"
	sed -i '/^fleet:/,$d' "$T/rules-$1/mcp-exec.yaml"
	cat >>"$T/rules-$1/mcp-exec.yaml" <<EOF
fleet:
  redis: $RS
  node_id: node-${1,,}
  on_unreachable: $2
  lease_s: 3
EOF
	local port
	port=$(free_port)
	"$MX" -v --http "127.0.0.1:$port" --rules "$T/rules-$1" \
	    --state-dir "$T/state-$1" 2>>"$T/mx.err" </dev/null &
	eval "${1}_PID=$! ${1}_PORT=$port"
	for _ in $(seq 1 250); do
		curl -s -o /dev/null "http://127.0.0.1:$port/" && return 0
		sleep 0.02
	done
	fail "node $1 did not listen"
}

# A bad fleet section is refused by file:line, like any other key.
cp -R "$R" "$T/bad"
sed -i '/^fleet:/,$d' "$T/bad/mcp-exec.yaml"
printf 'fleet:\n  redis: nohost\n  on_unreachable: maybe\n' >>"$T/bad/mcp-exec.yaml"
st=0; out=$("$STOCKADE" rules check "$T/bad" 2>&1) || st=$?
[ $st != 0 ] || fail "rules check accepted a bad fleet section"
for want in "redis: a unix socket path or host:port" "on_unreachable"; do
	echo "$out" | grep -q "$want" || fail "rules check: no '$want' in: $out"
done
echo "$out" | grep -q "mcp-exec.yaml:[0-9]*:" || fail "no file:line in: $out"
note "a bad fleet: section is refused with file:line"
# Nodes that share one file (a ConfigMap) take their id from --node-id:
# the file may leave it out; mcp-exec then needs one to start.
sed -i '/^fleet:/,$d' "$T/bad/mcp-exec.yaml"
printf 'fleet:\n  redis: %s\n' "$RS" >>"$T/bad/mcp-exec.yaml"
"$STOCKADE" rules check "$T/bad" >/dev/null 2>&1 || fail "rules check refused redis without node_id"
st=0; out=$("$MX" -n --rules "$T/bad" 2>&1) || st=$?
[ $st != 0 ] && echo "$out" | grep -q "fleet.redis needs this node's id: fleet.node_id or --node-id" ||
    fail "mcp-exec started with redis and no node id ($st): $out"
"$MX" -n --rules "$T/bad" --node-id node-x >"$T/n.out" 2>&1 ||
    fail "mcp-exec --node-id with redis: $(cat "$T/n.out")"
note "redis without node_id: the file checks; mcp-exec needs --node-id (or node_id) to start"

CLOCK="$T/clock"
T0=$(( 1800000000 - 1800000000 % 86400 + 10 ))
echo $T0 >"$CLOCK"
export STOCKADE_QUOTA_TEST_CLOCK="$CLOCK"
start_redis
node A refuse
disown "$A_PID"	# killed below, on purpose: no job notice for it
node B refuse

# Usage quotas: wall seconds of user:q's call on A count on B.
"$PY" - "$A_PORT" "$B_PORT" "$TOKB" "$RS" "$T0" <<'EOF' || fail "fleet usage quotas (see above)"
import subprocess, sys
sys.path.insert(0, "tests/integration")
from mcpclient import Http
pa, pb, tok, rs, t0 = sys.argv[1:6]
def client(port):
    c = Http("http://127.0.0.1:%s/mcp" % port, tok)
    c.initialize()
    return c
a, b = client(pa), client(pb)
r = a.tool("execute_python", {"code": "import time; time.sleep(2.2)"})
assert not r.get("isError"), r
hour = int(t0) - int(t0) % 3600
used = int(subprocess.check_output(["redis-cli", "-s", rs, "GET",
    "stockade:quota:principal:user:q:wall_seconds_per_hour:%d" % hour]).strip() or 0)
assert used >= 2200, ("wall ms of A's call not in the store", used)
r = b.tool("execute_python", {"code": "1"})
t = r["content"][0]["text"]
assert r.get("isError") and "wall_seconds_per_hour (2) of principal:user:q" in t, r
print("  wall_seconds_per_hour 2: %d ms on node A refused the next call on node B" % used)
EOF

"$PY" - "$A_PORT" "$B_PORT" "$TOKA" "$CLOCK" "$T0" "$RS" "$A_PID" "$T" <<'EOF' || fail "fleet quotas (see above)"
import os, signal, subprocess, sys, threading, time
sys.path.insert(0, "tests/integration")
from mcpclient import Http

pa, pb, tok, clock, t0, rs, apid, tdir = sys.argv[1:9]
def client(port):
    c = Http("http://127.0.0.1:%s/mcp" % port, tok)
    c.initialize()
    return c
def run(c, code, **kw):
    kw["code"] = code
    return c.tool("execute_python", kw)
def leases(what="concurrent_calls"):
    return int(subprocess.check_output(["redis-cli", "-s", rs, "ZCARD",
        "stockade:quota:principal:user:p:" + what]).strip() or 0)

a, b = client(pa), client(pb)
sa = run(a, "1")["structuredContent"]["session_id"]
sb = run(b, "1")["structuredContent"]["session_id"]
# Two calls already (one per node); six more alternating: 4 in all run.
ok, refused = 2, []
for i in range(6):
    c, s = (a, sa) if i % 2 == 0 else (b, sb)
    r = run(c, "1", session_id=s)
    if r.get("isError"):
        refused.append(r["content"][0]["text"])
    else:
        ok += 1
assert ok == 4, (ok, refused)
assert all("calls_per_minute (4) of principal:user:p" in t for t in refused), refused
print("  calls_per_minute 4 over two nodes: 4 ran in total, %d refused" % len(refused))

# concurrent_calls 1: a call running on A holds the fleet's only lease.
open(clock, "w").write("%d\n" % (int(t0) + 60))
def slow():
    try:
        run(a, "import time; time.sleep(60)", session_id=sa)
    except Exception:
        pass
threading.Thread(target=slow, daemon=True).start()
for _ in range(500):
    if leases() == 1:
        break
    time.sleep(0.02)
assert leases() == 1, "no lease while A's call runs"
r = run(b, "1", session_id=sb)
assert r.get("isError") and "concurrent_calls (1)" in r["content"][0]["text"], r
# sessions 2: one on each node; a third, on either, is refused.
r = run(b, "1")
assert r.get("isError") and "sessions (2) of principal:user:p" in r["content"][0]["text"], r
# Renewed while the call runs: still held past lease_s.
time.sleep(3.5)
r = run(b, "1", session_id=sb)
assert r.get("isError") and "concurrent_calls (1)" in r["content"][0]["text"], \
    ("the running call's lease expired: not renewed", r)
print("  a running call's lease is renewed: still held after 3.5 s (lease_s 3)")
# A dies holding it: the lease expires within lease_s (3 s), no renewal.
os.kill(int(apid), signal.SIGKILL)
t = time.time()
while time.time() - t < 8:
    r = run(b, "1", session_id=sb)
    if not r.get("isError"):
        break
    time.sleep(0.25)
waited = time.time() - t
assert not r.get("isError"), ("lease of the dead node never freed", r)
assert waited < 5, waited
print("  concurrent_calls 1 held on A refused B; A killed: B ran after %.1f s (lease_s 3)" % waited)
# A's session's lease went with it: B may open a second one now.
r = run(b, "1")
assert not r.get("isError"), ("the dead node's session lease never freed", r)
# B's first session, over 3 s old, still counts (renewed); the new one
# goes when it is closed.
assert leases("sessions") == 2, leases("sessions")
b.tool("close_session", {"session_id": r["structuredContent"]["session_id"]})
assert leases("sessions") == 1, leases("sessions")
print("  sessions 2 (one per node) refused a third; A killed: its session freed; close_session frees one")
open(tdir + "/b.sid", "w").write(sb)
EOF
A_PID=""	# killed above, holding its lease

# A reload keeps the store the node started with, and says so.
sed -i 's/^  lease_s: 3$/  lease_s: 4/' "$T/rules-B/mcp-exec.yaml"
kill -HUP "$B_PID"
for _ in $(seq 1 250); do
	grep -q "reload: fleet.lease_s changes at the next start" "$T/mx.err" && break
	sleep 0.02
done
grep -q "reload: fleet.lease_s changes at the next start" "$T/mx.err" ||
    fail "a reload changing fleet: did not warn"
note "SIGHUP changing fleet: warns that it applies at the next start"

# Redis stops: B (refuse) refuses, naming the store; C (local) runs.
kill "$REDIS_PID"; wait "$REDIS_PID" 2>/dev/null || true; REDIS_PID=""
node C local
"$PY" - "$B_PORT" "$C_PORT" "$TOKA" "$(cat "$T/b.sid")" "$TOKB" <<'EOF' || fail "store down (see above)"
import sys
sys.path.insert(0, "tests/integration")
from mcpclient import Http
pb, pc, tok, sb, tokq = sys.argv[1:6]
def client(port):
    c = Http("http://127.0.0.1:%s/mcp" % port, tok)
    c.initialize()
    return c
r = client(pb).tool("execute_python", {"code": "1", "session_id": sb})
t = r["content"][0]["text"]
assert r.get("isError") and "fleet quota store" in t and "unreachable" in t, r
r = client(pc).tool("execute_python", {"code": "print(6 * 7)"})
assert not r.get("isError") and r["structuredContent"]["stdout"] == "42\n", r
# user:q's wall time on C waits for the store (C's own table allows it).
q = Http("http://127.0.0.1:%s/mcp" % pc, tokq)
q.initialize()
r = q.tool("execute_python", {"code": "import time; time.sleep(0.5)"})
assert not r.get("isError"), r
print("  store down: refuse mode refused (%s); local mode ran" % t)
EOF
grep -ah '"event":"call_refused"' "$LOG"/audit-*.log | grep '"rule_id":"fleet:unreachable"' |
    grep -q "$RS" || fail "no call_refused naming the fleet store"
grep -ah '"event":"fleet_degraded"' "$LOG"/audit-*.log | grep -q '"node_id":"node-c".*"on_unreachable":"local"\|"on_unreachable":"local".*"node_id":"node-c"' ||
    fail "no fleet_degraded of node-c (local)"
grep -ah '"event":"fleet_degraded"' "$LOG"/audit-*.log | grep -q '"node-b"' ||
    fail "no fleet_degraded of node-b"
note "store down: call_refused (fleet:unreachable, naming $RS) and fleet_degraded recorded"

# Redis back: the next call reconnects (at most once a second) and records it.
start_redis
sleep 1.1
"$PY" - "$B_PORT" "$TOKA" "$(cat "$T/b.sid")" <<'EOF' || fail "store back (see above)"
import sys, time
sys.path.insert(0, "tests/integration")
from mcpclient import Http
pb, tok, sb = sys.argv[1:4]
c = Http("http://127.0.0.1:%s/mcp" % pb, tok)
c.initialize()
r = c.tool("execute_python", {"code": "1", "session_id": sb})
assert not r.get("isError"), r
EOF
grep -ah '"event":"fleet_restored"' "$LOG"/audit-*.log | grep -q '"node-b"' ||
    fail "no fleet_restored of node-b"
# C renews (lease_s / 3) and adds the wall time it kept (the new Redis
# holds nothing else of user:q's).
key="stockade:quota:principal:user:q:wall_seconds_per_hour:$(( T0 - T0 % 3600 ))"
for _ in $(seq 1 150); do
	used=$(redis-cli -s "$RS" GET "$key")
	[ "${used:-0}" -ge 500 ] && break
	sleep 0.02
done
[ "${used:-0}" -ge 500 ] || fail "usage counted while the store was away never reached it ($used)"
note "store back: B runs again, fleet_restored recorded; C added the $used ms it counted meanwhile"

for p in $B_PID $C_PID; do kill -TERM "$p"; wait "$p" || fail "mcp-exec exit status $?"; done
B_PID="" C_PID=""
verify >/dev/null || fail "audit log does not verify"
