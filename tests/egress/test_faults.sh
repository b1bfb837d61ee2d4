#!/bin/bash
# The fault battery (issue 33): the three daemons under load in the closed
# topology (networked sessions fetching allowed.test) while, one after
# another, stockade-auditd is stopped and killed, netguard is stopped and
# killed, every daemon gets a SIGHUP storm, clients leave mid-call, the
# audit disk fills up, and mcp-exec is stopped and killed; each killed
# daemon is started again.  Afterwards nothing of ours runs or remains
# (no sandbox process, mount or cgroup), every started execution has its
# end on the record, and the trail verifies.
. "$(dirname "$0")/lib.sh"

need_netguard
topo_up
# The audit log on a small disk of its own, to fill.
mkdir -p "$LOG"
mount -t tmpfs -o size=32M tmpfs "$LOG"
make_conf "retry_seconds: 1"
start_auditd
mcp_rules
mcp_tokens "user:alice" "user:bob"
policy web L2 "$L2_ALLOW"
sed -i "s|^\(  netguard_socket:\).*|\1 $NG_SOCK|" "$R/mcp-exec.yaml"
sed -i "s|^network:.*|network: web|" "$R/profiles/default.yaml"
start_netguard
start_mx
STOP="$T/stop"
PYTHONPATH="$HERE" "$PY" "$EG/faults.py" load "$PORT" "$TOKA" 4 "$STOP" \
    >"$T/load.out" 2>&1 &
LOAD_PID=$!
trap 'st=$?; set +e; touch "$STOP"; kill -CONT $AUDITD_PID $NG_PID $MX_PID 2>/dev/null; stop_mx >/dev/null 2>&1; (exit $st); egress_cleanup' EXIT
sleep 2

# Processes in a cgroup of a sandbox this test's servers made.
our_sandbox_procs() {
	local ids
	ids=$(cat "$LOG"/audit-*.log | tr -d '\000' |
	    sed -n 's/.*"event":"session_created".*"sandbox":"\([0-9a-f]*\)".*/\1/p' |
	    paste -sd'|')
	[ -n "$ids" ] || return 0
	grep -lE "stockade-($ids)" /proc/[0-9]*/cgroup 2>/dev/null |
	    sed 's|/proc/\([0-9]*\)/cgroup|\1|' | while read -r p; do
		echo "$p $(cat /proc/"$p"/comm 2>/dev/null)"; done
}
pause() {	# pause NAME PID: SIGSTOP for 2 s
	kill -STOP "$2"; sleep 2; kill -CONT "$2"; sleep 1
	note "$1: stopped 2 s, continued"
}
hup_storm() {
	for _ in $(seq 1 10); do
		kill -HUP "$AUDITD_PID" "$NG_PID" "$MX_PID"; sleep 0.2
	done
	sleep 1
	note "SIGHUP storm: 10 to each daemon in 2 s"
}

pause stockade-auditd "$AUDITD_PID"
kill -9 "$AUDITD_PID"; { wait "$AUDITD_PID"; } 2>/dev/null || true; AUDITD_PID=""
start_auditd; sleep 1
note "stockade-auditd: killed, started again"
pause netguard "$NG_PID"
kill -9 "$NG_PID"; { wait "$NG_PID"; } 2>/dev/null || true; NG_PID=""
start_netguard; sleep 1
note "netguard: killed, started again"
hup_storm
PYTHONPATH="$HERE" "$PY" "$EG/faults.py" leave "$PORT" "$TOKB" 6 ||
    fail "clients leaving mid-call"
dd if=/dev/zero of="$LOG/filler" bs=64k 2>/dev/null || true
sleep 3
rm -f "$LOG/filler"
sleep 2
note "the audit disk full for 3 s, then freed"
pause mcp-exec "$MX_PID"
# A call that would run 30 s is in flight when the server is killed.
PYTHONPATH="$HERE" timeout 20 "$PY" -c 'import sys; from mcpclient import Http
c = Http("http://127.0.0.1:%s/mcp" % sys.argv[1], sys.argv[2]); c.initialize()
c.tool("execute_python", {"code": "import time; time.sleep(30)", "timeout_ms": 60000})' \
    "$PORT" "$TOKB" >/dev/null 2>&1 &
sleep 1.5
kill -9 "$MX_PID"; { wait "$MX_PID"; } 2>/dev/null || true; MX_PID=""
sleep 1
# Nothing of the killed server's sandboxes runs a second later.
left=$(our_sandbox_procs)
[ -z "$left" ] || fail "sandbox processes outlived the killed mcp-exec: $left"
note "mcp-exec killed: none of its sandboxes' processes runs 1 s later"
# The same port: the load's clients come back to it.
start_mx_on() {
	"$MX" -v --http "127.0.0.1:$PORT" --rules "$R" --state-dir "$T/mx-state" \
	    2>>"$T/mx.err" </dev/null &
	MX_PID=$!
	for _ in $(seq 1 250); do
		curl -s -o /dev/null "http://127.0.0.1:$PORT/" && return 0
		sleep 0.02
	done
	fail "mcp-exec did not listen again on $PORT"
}
start_mx_on
sleep 3

touch "$STOP"
wait "$LOAD_PID" || fail "load: $(cat "$T/load.out")"
cat "$T/load.out"
grep -q ' [1-9][0-9]* calls answered' "$T/load.out" || fail "no call was answered"
stop_mx || fail "mcp-exec exit status $? at the end"
stop_netguard || fail "netguard exit status $? at the end"
stop_auditd || fail "stockade-auditd exit status $? at the end"

left=$(our_sandbox_procs)
[ -z "$left" ] || fail "sandbox processes left: $left"
mounts=$(awk -v t="$T" '$2 ~ "^"t && $2 != t"/log" {print $2}' /proc/mounts)
[ -z "$mounts" ] || fail "mounts left: $mounts"
for id in $(cat "$LOG"/audit-*.log | tr -d '\000' |
    sed -n 's/.*"event":"session_created".*"sandbox":"\([0-9a-f]*\)".*/\1/p'); do
	! find /sys/fs/cgroup -maxdepth 6 -type d -name "stockade-$id" 2>/dev/null |
	    grep -q . || fail "cgroup stockade-$id left"
done
[ -z "$(ls "$T/mx-state/sandboxes" 2>/dev/null)" ] ||
    fail "sandbox directories left: $(ls "$T/mx-state/sandboxes")"
note "afterwards: no sandbox process, mount, cgroup or directory of ours"
"$PY" "$HERE/ended.py" "$LOG"/audit-*.log || fail "started executions without an end (above)"
note "every started execution has its end on the record"
! grep -lE 'AddressSanitizer|LeakSanitizer|runtime error:' "$T"/*.err 2>/dev/null ||
    fail "a sanitizer report: $(grep -lE 'Sanitizer|runtime error:' "$T"/*.err)"
verify >/dev/null || fail "the trail does not verify"
note "the trail verifies"
