#!/bin/bash
# The whole suite as `make run` starts it (stockade-auditd, netguard,
# mcp-exec --http on loopback), netguard's uplink being the test
# topology's gateway, driven by the official MCP SDK client over Streamable
# HTTP (suite.mjs): a session fetches by name, is refused the metadata
# address and a tunnelling-shaped TXT query, a deny pattern refuses code,
# a SIGHUP takes a name away; then each daemon is SIGKILLed and restarted
# in turn: no acknowledged audit event is lost, the session's sandbox is
# restored, and a dead mcp-exec's sandbox leaves nothing behind.
. "$(dirname "$0")/lib.sh"

MX_PID="" LOAD_PID=""
SDK="$ROOT/tests/mcp/node_modules"	# where tests/mcp/run.sh installs the SDK

# mcp-exec and the load generator are ours to stop; then the egress
# harness removes namespaces, netguard, auditd and $T.
suite_cleanup() {
	local st=$? id
	set +e
	[ -z "$LOAD_PID" ] || { kill -TERM "$LOAD_PID"; wait "$LOAD_PID"; } 2>/dev/null
	stop_mx >/dev/null 2>&1
	if [ "$st" != 0 ] && [ "$st" != 77 ] && [ -s "$T/mx.err" ]; then
		echo "--- mcp-exec stderr (tail)" >&2
		tail -15 "$T/mx.err" >&2
	fi
	# A run that failed between the SIGKILL and the sweep leaves cgroups.
	for id in $(ls "$S/sandboxes" 2>/dev/null); do
		find /sys/fs/cgroup -maxdepth 10 -type d -name "stockade-$id" \
		    -exec rmdir {} + 2>/dev/null
	done
	(exit "$st")
	egress_cleanup
}
trap suite_cleanup EXIT

# stop_mx [SIGNAL]: TERM (then KILL after 5 s) or SIGNAL; returns the status.
stop_mx() {
	local st=0
	[ -n "$MX_PID" ] || return 0
	kill -s "${1:-TERM}" "$MX_PID" 2>/dev/null || true
	for _ in $(seq 1 50); do
		kill -0 "$MX_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$MX_PID" 2>/dev/null || true
	wait "$MX_PID" || st=$?
	MX_PID=""
	return $st
}

# start_mx: mcp-exec --http as dist/run.sh starts it, on $PORT.
start_mx() {
	"$MX" -v --http "127.0.0.1:$PORT" --rules "$R" --state-dir "$S" \
	    </dev/null 2>>"$T/mx.err" &
	MX_PID=$!
	for _ in $(seq 1 250); do
		curl -s -o /dev/null "http://127.0.0.1:$PORT/" && return 0
		kill -0 "$MX_PID" 2>/dev/null || { MX_PID=""; fail "mcp-exec died at start"; }
		sleep 0.02
	done
	fail "mcp-exec did not listen on $PORT"
}

# mcp STEP [ARG...]: one step of suite.mjs (a fresh MCP session of the
# SDK client); its JSON result is in $T/mcp.json.
mcp() {
	SDK_NODE_MODULES="$SDK" timeout 40 node "$EG/suite.mjs" "$URL" "$@" \
	    >"$T/mcp.json" 2>"$T/mcp.err" || fail "SDK step $*: $(cat "$T/mcp.err")"
}
# res KEY: a field of the last step's result.
res() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$T/mcp.json" "$1"; }
# ev_field EVENT KEY COND...: KEY of the first matching audit record.
ev_field() {
	local e=$1 k=$2; shift 2
	"$PY" "$EG/events.py" "$LOG" "$e" "$@" |
	    "$PY" -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$k"
}
cgroups_of() { find /sys/fs/cgroup -maxdepth 10 -type d -name "stockade-$1" 2>/dev/null; }
# metric NAME{LABELS}: its value in mcp-exec's /metrics ("" when absent);
# the whole page is kept in $T/metrics.
metric() {
	curl -s --max-time 5 "http://127.0.0.1:$PORT/metrics" >"$T/metrics" || true
	awk -v m="$1" '$1 == m {print $2}' "$T/metrics"
}

need_netguard
[ -x "$LOAD" ] || skip "bench/audit_load not built ($LOAD)"
command -v node >/dev/null || skip "node not installed"
command -v curl >/dev/null || skip "curl not installed"
if [ ! -d "$SDK/@modelcontextprotocol/sdk" ]; then
	# As tests/mcp/run.sh does, but from npm's cache only: no traffic
	# leaves the machine during a test.
	(cd "$ROOT/tests/mcp" && timeout 30 npm ci --offline --no-audit --no-fund \
	    --loglevel=error) >"$T/npm.err" 2>&1 ||
	    skip "MCP SDK not installed and not in npm's cache (run tests/mcp/run.sh)"
fi

topo_up
start_auditd
mcp_rules			# before policy: both libs' $R is $T/rules
policy web L2 "$L2_ALLOW"
sed -i "s|^\(  netguard_socket:\).*|\1 $NG_SOCK|" "$R/mcp-exec.yaml"
sed -i "s|^network:.*|network: web|" "$R/profiles/default.yaml"
grep -q "netguard_socket: $NG_SOCK" "$R/mcp-exec.yaml" || fail "sed missed netguard_socket"
start_netguard
PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL="http://127.0.0.1:$PORT/mcp"
start_mx

# 1. A new session fetches from the allowed host by name.
mcp fetch
sid=$(res session_id)
expect_event egress_attached "session_id=$sid" policy=web level=L2 principal=user:local
expect_event dns_query decision=allow "session_id=$sid" name=allowed.test pinned~203.0.113.10
sbid=$(ev_field session_created sandbox "session_id=$sid")
[ -n "$sbid" ] || fail "no sandbox id for $sid"
note "1. SDK over HTTP: $sid fetched http://allowed.test/ (world 203.0.113.10); attached under web, dns_query allow"

# 2. The metadata address, built at run time past the pattern scanner.
mcp metadata "$sid"
expect_event egress_denied "session_id=$sid" rule=metadata protocol=tcp dst_ip=169.254.169.254 dst_port=80
world_never tcp 169.254.169.254 80
drops=$(metric 'stockade_egress_dropped_packets{rule="metadata"}')
[ "${drops:-0}" -ge 1 ] || fail "/metrics: no metadata drops: $(grep egress "$T/metrics")"
note "2. 169.254.169.254:80 from the same session: blocked, egress_denied rule=metadata; /metrics counts $drops drop(s)"

# 3. A tunnelling-shaped TXT query under the allowed *.wild.test.
label=$("$PY" -c 'import secrets,string; a=string.ascii_lowercase+string.digits; print("".join(secrets.choice(a) for _ in range(60)))')
mcp tunnel "$sid" "$label.wild.test"
expect_event dns_tunnel_suspected "session_id=$sid" "name=$label.wild.test" qtype=TXT score? signals~long_label
expect_event dns_query decision=deny "session_id=$sid" "name=$label.wild.test" reason=tunnelling
! dns_saw "$label" || fail "the tunnelling query was forwarded upstream"
note "3. TXT <60 random chars>.wild.test to $(res resolver): NXDOMAIN, dns_tunnel_suspected, not forwarded"

# 4. Patterns: os.system is a flag rule (it runs, and is recorded); a
# deny rule refuses the call and nothing of it runs.
mcp patterns "$sid"
flag_hash=$(res flag_hash) deny_hash=$(res deny_hash)
expect_event code_execution "session_id=$sid" "code_hash=$flag_hash" exit_code=0 pattern_hits~PY-SHELL-001
expect_event call_refused principal=user:local tool=execute_python rule_id=NET-METADATA-001 \
    "reason=pattern rule denies this code"
no_event execution_started "code_hash=$deny_hash"
note "4. os.system: ran, flagged PY-SHELL-001; the literal metadata URL: refused (NET-METADATA-001), call_refused, never started"

# 5. The policy loses allowed.test (resolver and 203.0.113.0/28 stay).
policy web L2 'allow:
  - names: ["*.wild.test", moving.test]
    ports: [80, 7000]
  - cidrs: [203.0.113.0/28]
    ports: [80, 7000]
resolver:
  upstreams: [192.0.2.53]'
sum=$(sha256sum "$R/network/web.yaml" | cut -d' ' -f1)
kill -HUP "$NG_PID"
expect_event policy_load program=netguard ok=true "files~$sum"
mcp dropped "$sid"
expect_event dns_query decision=deny "session_id=$sid" name=allowed.test reason=not_allowed
note "5. SIGHUP: policy_load ok with the new sha256; allowed.test now NXDOMAIN, 203.0.113.10 by address still reachable"

# 6a. stockade-auditd SIGKILLed under load, restarted.
timeout 20 "$LOAD" --socket "$SOCK" --writers 4 --events 100000 --window 8 \
    --acked "$T/acked" >/dev/null 2>"$T/load.err" &
LOAD_PID=$!
for _ in $(seq 1 100); do
	[ -s "$T/acked" ] && [ "$(wc -l <"$T/acked")" -ge 2000 ] && break
	sleep 0.05
done
kill -0 "$LOAD_PID" 2>/dev/null || fail "the load ended before the kill: $(cat "$T/load.err")"
stop_auditd KILL 2>/dev/null || true	# no "Killed" notice
wait "$LOAD_PID" || true
LOAD_PID=""
# Meanwhile nothing runs, and the two events that could not be sent
# (the call's execution_started, and the call_refused that says why it
# did not run) are counted as lost.
mcp unaudited "$sid"
lost_down=$(metric stockade_audit_events_lost_total)
[ "$lost_down" = 2 ] || fail "/metrics: $lost_down events lost with the daemon down, expected 2"
start_auditd
mcp name "$sid" after-auditd.wild.test
expect_event execution_started "session_id=$sid" "code_hash=$(res code_hash)"
expect_event code_execution "session_id=$sid" "code_hash=$(res code_hash)" exit_code=0
expect_event dns_query decision=allow "session_id=$sid" name=after-auditd.wild.test
n=$("$PY" "$HERE/acked_present.py" "$LOG" "$T/acked") || fail "$n"
[ "$n" -ge 500 ] || fail "only $n events acknowledged before the kill"
lost=$(metric stockade_audit_events_lost_total)
[ "$lost" = "$lost_down" ] || fail "mcp-exec lost $((lost - lost_down)) audit events after the restart"
note "6a. auditd SIGKILLed under load: all $n acknowledged events present; a call meanwhile is refused (its 2 events counted lost); after the restart mcp-exec and netguard write to the new daemon, nothing more lost"

# 6b. netguard SIGKILLed: the restarted one restores the session's sandbox.
addr=$(ev_field egress_attached address "session_id=$sid")
{ kill -9 "$NG_PID"; wait "$NG_PID"; } 2>/dev/null || true
NG_PID=""
[ -n "$(ls "$T/ngstate")" ] || fail "netguard kept no state for the session"
# Without netguard, /metrics leaves the drop gauge out and says why.
[ -z "$(metric 'stockade_egress_dropped_packets{rule="metadata"}')" ] &&
    grep -q '^# stockade_egress_dropped_packets left out: netguard did not answer' "$T/metrics" ||
    fail "/metrics with netguard down: $(grep egress "$T/metrics")"
start_netguard
expect_event egress_attached "session_id=$sid" restored=true policy=web "address=$addr"
mcp both "$sid" after-netguard.wild.test
expect_event dns_query decision=allow "session_id=$sid" name=after-netguard.wild.test
note "6b. netguard SIGKILLed: restarted, sandbox restored at $addr (egress_attached restored=true), fetch by address and by name"

# 6c. mcp-exec SIGKILLed: netguard's reaper detaches the dead sandbox, the
# next mcp-exec sweeps what it left (state dir, workspace, cgroup).
[ -n "$(cgroups_of "$sbid")" ] || fail "no cgroup stockade-$sbid while the session lives"
stop_mx KILL 2>/dev/null || true
t0=$(date +%s.%N)
WAIT_EVENT=15 expect_event egress_detached "session_id=$sid" "reason=sandbox gone"
gone_s=$("$PY" -c "import sys; print('%.1f' % ($(date +%s.%N) - $t0))")
[ -d "$S/sandboxes/$sbid" ] || fail "a SIGKILLed mcp-exec left nothing to sweep"
# The sweep leaves directories younger than a minute alone (a live
# mcp-exec may be about to lock one); age this one, as waiting 60 s would.
touch -d '2 minutes ago' "$S/sandboxes/$sbid"
start_mx
expect_event cleanup program=mcp-exec "removed~$sbid"
expect_event session_closed "session_id=$sid" "reason=mcp-exec died" "sandbox=$sbid"
[ ! -e "$S/sandboxes/$sbid" ] || fail "sandbox directory not swept"
! grep -q " $S/sandboxes/$sbid/" /proc/mounts || fail "workspace still mounted"
[ -z "$(cgroups_of "$sbid")" ] || fail "cgroup left: $(cgroups_of "$sbid")"
[ -z "$(ls "$T/ngstate")" ] || fail "netguard state left: $(ls "$T/ngstate")"
! ip -n "$NS_G" -o link show | grep -q ngv || fail "veth left: $(ip -n "$NS_G" -o link show | grep ngv)"
mcp gone "$sid"
note "6c. mcp-exec SIGKILLed: egress_detached 'sandbox gone' after ${gone_s}s; restart swept $sbid (cleanup event) and closed its session in the trail; no veth, netguard state, cgroup or mount left"

# The restarted server works end to end (allowed.test has gone from web).
mcp fetch www.wild.test
sid2=$(res session_id)
expect_event egress_attached "session_id=$sid2" policy=web level=L2
note "a new session after the restarts attaches and fetches www.wild.test"

# 7. Everything stops cleanly, leaves nothing, and the trail verifies.
stop_mx || fail "mcp-exec exit status $? on SIGTERM"
expect_event session_closed "session_id=$sid2" "reason=mcp-exec stopped"
expect_event egress_detached "session_id=$sid2" "reason=detach requested"
! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$T/mx.err" ||
    fail "sanitizer report in mcp-exec's stderr"
! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$T/auditd.err" ||
    fail "sanitizer report in auditd's stderr"
[ -z "$(ls "$S/sandboxes")" ] || fail "sandboxes left: $(ls "$S/sandboxes")"
for id in $("$PY" -c 'import json,sys,glob
for p in glob.glob(sys.argv[1] + "/audit-*.log"):
    for l in open(p):
        if "\"session_created\"" in l: print(json.loads(l)["sandbox"])' "$LOG"); do
	[ -z "$(cgroups_of "$id")" ] || fail "cgroup left: stockade-$id"
done
egress_finish
[ -z "$(ls "$T/ngstate")" ] || fail "netguard state left: $(ls "$T/ngstate")"
! ip -n "$NS_G" -o link show | grep -q ngv || fail "veth left after the stop"
! has_table "$NS_G" ip netguard_nat || fail "NAT table left with nothing attached"
note "7. clean stop: sessions closed and detached, no sandbox, cgroup, veth or NAT table left; audit log verifies"
