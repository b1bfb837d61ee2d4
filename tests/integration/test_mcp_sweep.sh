#!/bin/bash
# What an mcp-exec killed with SIGKILL leaves behind (sandbox directories,
# workspace mounts, cgroups) is removed by the next mcp-exec to start, at
# once however young (issue 33: systemd restarts it 2 s after a crash), and
# recorded as a cleanup event; what is still held then is removed by a
# later sweep (one at every reap) once free.  Live sandboxes, of this
# state_dir or another's, are never touched.
. "$(dirname "$0")/lib.sh"

start_auditd
mcp_rules
# A reap, and with it a sweep, every second: the retry is seen at once.
sed -i 's/^\(    reap_interval_s:\).*/\1 1/' "$R/mcp-exec.yaml"
grep -q "^    reap_interval_s: 1$" "$R/mcp-exec.yaml" || fail "sed missed reap_interval_s"

cgroup_of() { find /sys/fs/cgroup -maxdepth 6 -type d -name "stockade-$1"; }
mounted() { grep -q " $S/sandboxes/$1/workspace " /proc/mounts; }
left() { [ -e "$S/sandboxes/$1" ] || mounted "$1" || [ -n "$(cgroup_of "$1")" ]; }
# gone BOX WITHIN_S: nothing of BOX is left within WITHIN_S seconds.
gone() {
	for _ in $(seq 1 $(( $2 * 50 ))); do
		left "$1" || return 0
		sleep 0.02
	done
	fail "sandbox $1 left: dir $(ls -d "$S/sandboxes/$1" 2>&1), cgroup '$(cgroup_of "$1")'"
}

# a: two sessions, two sandboxes; then SIGKILLed.
mcp_serve a
mcp_call a 1 '{"code":"x = 1"}' >/dev/null
mcp_call a 2 '{"code":"x = 2"}' >/dev/null
set -- $(ls "$S/sandboxes")
a1=$1 a2=$2
for b in "$a1" "$a2"; do
	mounted "$b" || fail "no workspace mount"
	[ -n "$(cgroup_of "$b")" ] || fail "no cgroup"
done
kill -9 "$PID_a"
wait "$PID_a" 2>/dev/null || true
eval "exec $IN_a>&-"
left "$a1" && left "$a2" || fail "a SIGKILLed mcp-exec left nothing to sweep"

# A live server on another state_dir, beside us all along.
S="$T/state2" mcp_serve x
xsid=$(mcp_call x 1 '{"code":"z = 3"}' | sed -n 's/.*"session_id":"\(sess_[0-9a-f]*\)".*/\1/p' | head -1)
x_box=$(ls "$T/state2/sandboxes")

# a2 is still held when b starts, as by a process of a's not gone yet.
"$PY" -c 'import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(300)' "$S/sandboxes/$a2" >"$T/held" &
holder=$!
for _ in $(seq 1 500); do grep -q held "$T/held" && break; sleep 0.02; done
grep -q held "$T/held" || fail "could not hold $a2's lock"

# b starts at once: a1's remains go before it serves, however young.
mcp_serve b
sid=$(mcp_call b 1 '{"code":"y = 7"}' | sed -n 's/.*"session_id":"\(sess_[0-9a-f]*\)".*/\1/p' | head -1)
! left "$a1" || fail "a dead server's young sandbox was not swept at start"
left "$a2" || fail "a sandbox still held was swept"
b_box=$(ls "$S/sandboxes" | grep -v "$a2")
note "a server started right after a crash removed its remains at once"

# Free now: a later sweep of b's takes it.
kill "$holder"
wait "$holder" 2>/dev/null || true
gone "$a2" 30
note "what was still held at start was removed by a later sweep"

# Another server starting on b's state_dir sweeps too; b's sessions, and
# x's on its own state_dir, lived through every sweep.
"$MX" --stdio --rules "$R" --state-dir "$S" </dev/null >/dev/null 2>>"$T/mx.err"
[ -d "$S/sandboxes/$b_box" ] || fail "a live sandbox was swept"
[ -d "$T/state2/sandboxes/$x_box" ] || fail "another state_dir's live sandbox was swept"
mcp_call b 2 "{\"code\":\"print(y)\",\"session_id\":\"$sid\"}" | grep -q '"stdout":"7\\n"' ||
	fail "the live session lost its state"
mcp_call x 2 "{\"code\":\"print(z)\",\"session_id\":\"$xsid\"}" | grep -q '"stdout":"3\\n"' ||
	fail "another state_dir's live session lost its state"
note "live sandboxes kept, of this state_dir and of another"

for s in b x; do
	eval "fd=\$IN_$s pid=\$PID_$s"
	eval "exec $fd>&-"
	wait "$pid" || fail "mcp-exec $s did not stop cleanly"
done
[ -z "$(ls "$S/sandboxes")" ] || fail "sandboxes left after a clean stop"
stop_auditd
for b in "$a1" "$a2"; do
	grep -q "\"event\":\"cleanup\".*\"$b\"" "$LOG"/audit-*.log ||
		fail "no cleanup event naming $b"
done
verify >/dev/null
note "cleanup events recorded, log verifies"
