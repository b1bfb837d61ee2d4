#!/bin/bash
# A fleet on loopback (issue 34: routing by handle, node loss and drain):
# three mcp-exec --http nodes, each with its own node id, state dir and uid
# range, writing to one stockade-auditd, behind the shipped HAProxy router
# (deploy/router/render-haproxy, Debian's haproxy).  Clients of both MCP
# eras go through the router (fleet_route.py): every call lands on the
# node its handle names (its variables are there, and the audit log's
# writer pid of every record is that node's); headers that do not mirror
# the body are refused; a forged node part reaches nothing; a killed
# node's clients get the typed "session lost", never a new sandbox; a
# drained node finishes its running call, takes nothing new, and closes
# its sessions with the drain's reason on the record.
. "$(dirname "$0")/lib.sh"

NODES="node-1 node-2 node-3"
HAPROXY_PID=""
declare -A NPID NPORT
trap 'st=$?; [ $st = 0 ] || { tail -n 8 "$T"/node-*.err "$T/haproxy.log" >&2; }
	for p in $HAPROXY_PID ${NPID[@]}; do kill -9 "$p" 2>/dev/null &&
	    wait "$p" 2>/dev/null; done; cleanup' EXIT

command -v haproxy >/dev/null || fail "no haproxy: make deps installs Debian's"
start_auditd
mcp_rules
mcp_tokens "user:alice" "user:bob"

# node_up I GRACE: node-I with rules of its own (its uids apart from the
# others', as separate hosts would have them) and a drain grace.
node_up() {
	local i=$1 r="$T/rules-$1"
	cp -R "$R" "$r"
	# One principal holds all sessions here: room for them on each node.
	sed -i -e "s/^  first: .*/  first: $((300000 + i * 1000))/" \
	    -e "s/^  count: .*/  count: 1000/" \
	    -e "s/^    max_total: 32$/    max_total: 64/" \
	    -e "s/^    max_per_principal: 4$/    max_per_principal: 64/" \
	    "$r/mcp-exec.yaml"
	grep -q "^    max_per_principal: 64" "$r/mcp-exec.yaml" || fail "sed missed sessions"
	sed -i "s/^  drain_grace_s: 0 /  drain_grace_s: $2 /" "$r/mcp-exec.yaml"
	grep -q "^  drain_grace_s: $2 " "$r/mcp-exec.yaml" || fail "sed missed drain_grace_s"
	NPORT[node-$i]=$(free_port)
	"$MX" --http "127.0.0.1:${NPORT[node-$i]}" --rules "$r" \
	    --state-dir "$T/state-$i" --node-id "node-$i" \
	    2>>"$T/node-$i.err" </dev/null &
	NPID[node-$i]=$!
}
# node-1's grace is short: its drain, last, runs out.
node_up 1 1
node_up 2 10
node_up 3 10
for n in $NODES; do
	for _ in $(seq 1 250); do
		curl -s -o /dev/null "http://127.0.0.1:${NPORT[$n]}/" && continue 2
		kill -0 "${NPID[$n]}" 2>/dev/null || fail "$n died at start: $(tail -3 "$T/$n.err")"
		sleep 0.02
	done
	fail "$n did not listen"
done

# The router as shipped, for these three, checking every 300 ms.
RPORT=$(free_port)
args=""
for n in $NODES; do args="$args $n=127.0.0.1:${NPORT[$n]}"; done
# shellcheck disable=SC2086
"$ROOT/deploy/router/render-haproxy" --listen "127.0.0.1:$RPORT" \
    --check-ms 300 $args >"$T/haproxy.cfg"
haproxy -c -q -f "$T/haproxy.cfg" || fail "haproxy -c refused the rendered configuration"
haproxy -f "$T/haproxy.cfg" 2>>"$T/haproxy.log" </dev/null &
HAPROXY_PID=$!
for _ in $(seq 1 250); do
	curl -s -o /dev/null "http://127.0.0.1:$RPORT/" && break
	kill -0 "$HAPROXY_PID" 2>/dev/null || fail "haproxy died: $(tail -3 "$T/haproxy.log")"
	sleep 0.02
done
note "3 nodes and the router up ($(haproxy -v | head -1 | cut -d' ' -f1-3))"

# The Kubernetes example is what the renderer makes of a StatefulSet's
# three pods, and HAProxy takes it (in a network namespace of its own:
# checking it resolves the pods' names, which must not leave the machine).
ex="$ROOT/deploy/router/haproxy.example.cfg"
# shellcheck disable=SC2046
"$ROOT/deploy/router/render-haproxy" --dns $(for i in 0 1 2; do
	printf 'stockade-node-%d=stockade-node-%d.stockade-node.stockade.svc.cluster.local:8080 ' $i $i
done) | cmp -s - "$ex" || fail "$ex is not what render-haproxy makes (see its head)"
unshare --net haproxy -c -q -f "$ex" || fail "haproxy -c refused $ex"

fleet() {
	local ids=""
	for n in $NODES; do ids="$ids $n=${NPORT[$n]}:${NPID[$n]}"; done
	# shellcheck disable=SC2086
	(cd "$HERE" && "$PY" fleet_route.py "$1" "$T/fleet.json" \
	    "http://127.0.0.1:$RPORT/mcp" "$TOKA" "$TOKB" $ids) ||
	    fail "fleet_route.py $1 (see above)"
}

# audit_owner: every record naming a session, an MCP task or a node was
# written by that node's process (the log's peer pid).
audit_owner() {
	local pids=""
	for n in $NODES; do pids="$pids $n=${NPID[$n]}"; done
	# shellcheck disable=SC2086
	"$PY" - "$LOG" $pids <<'EOF' || fail "a record from the wrong node (see above)"
import glob, json, sys
pid = dict(a.split("=") for a in sys.argv[2:])
n = 0
for path in sorted(glob.glob(sys.argv[1] + "/audit-*.log")):
    for line in open(path):
        r = json.loads(line)
        h = r.get("session_id") or r.get("task_id")
        if not h or "." not in h:
            continue
        node = h.rsplit(".", 1)[1]
        if str(r["peer"]["pid"]) != pid.get(node):
            sys.exit("FAIL: %s %s from pid %s, not %s's" % (r["event"], h,
                     r["peer"]["pid"], node))
        n += 1
print("  %d records naming a session or task, each written by its node" % n)
EOF
}

fleet route
audit_owner

fleet kill
wait "${NPID[node-3]}" 2>/dev/null || true

fleet drain
st=0; wait "${NPID[node-2]}" || st=$?
[ $st = 0 ] || fail "the drained node exited $st"
audit_owner

# No sandbox but those the clients were handed: a lost session was never
# made again anywhere.  The drained node's sessions closed for the drain,
# and its daemon_stop says how the drain went.
"$PY" - "$LOG" "${NPID[node-2]}" "$T/fleet.json" <<'EOF' || fail "the fleet's records (see above)"
import glob, json, sys
pid = int(sys.argv[2])
recs = [json.loads(l) for p in sorted(glob.glob(sys.argv[1] + "/audit-*.log"))
        for l in open(p)]
made = json.load(open(sys.argv[3]))["made"]
created = [r for r in recs if r["event"] == "session_created"]
assert len(created) == made, "%d sandboxes made, %d handed out" % (len(created), made)
print("  %d sandboxes made in all, each handed to a client: none in place of a lost one" % made)
mine = [r for r in recs if r["peer"]["pid"] == pid]
closed = [r for r in mine if r["event"] == "session_closed"]
reasons = {r["reason"] for r in closed}
assert closed and reasons == {"drained: the node stopped once its calls had ended"}, reasons
stop = [r for r in mine if r["event"] == "daemon_stop"]
assert len(stop) == 1 and stop[0]["node"] == "node-2", stop
d = stop[0]["drain"]
assert d["completed"] and d["calls_cut"] == 0 and d["grace_s"] == 10 and \
    d["waited_ms"] < 10000, d
start = [r for r in mine if r["event"] == "daemon_start"]
assert start[0]["node"] == "node-2", start
print("  node-2: %d sessions closed \"drained: ...\"; daemon_stop drain %s" %
      (len(closed), json.dumps(d)))
EOF

# The last node drains with a call that outlives its grace.
fleet cut
st=0; wait "${NPID[node-1]}" || st=$?
[ $st = 0 ] || fail "node-1 exited $st"
"$PY" - "$LOG" "${NPID[node-1]}" <<'EOF' || fail "the cut drain's records (see above)"
import glob, json, sys
pid = int(sys.argv[2])
mine = [r for r in (json.loads(l) for p in sorted(glob.glob(sys.argv[1] +
        "/audit-*.log")) for l in open(p)) if r["peer"]["pid"] == pid]
cut = "drained: the node stopped when the drain grace ran out"
closed = [r for r in mine if r["event"] == "session_closed"]
assert closed and {r["reason"] for r in closed} == {cut}, closed
ran = [r for r in mine if r["event"] == "code_execution" and r.get("session_lost")]
assert len(ran) == 1 and ran[0]["reason"] == cut, ran
d = [r for r in mine if r["event"] == "daemon_stop"][0]["drain"]
assert d["calls_cut"] == 1 and d["completed"] and d["grace_s"] == 1, d
print("  node-1: its grace ran out: the call's record and %d sessions say so" % len(closed))
EOF

kill -TERM "$HAPROXY_PID"; wait "$HAPROXY_PID" 2>/dev/null || true
HAPROXY_PID=""
stop_auditd
verify >/dev/null || fail "the fleet's audit log does not verify"
note "the shared audit log verifies"
