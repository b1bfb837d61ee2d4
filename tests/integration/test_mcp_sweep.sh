#!/bin/bash
# What an mcp-exec killed with SIGKILL leaves behind (sandbox directory,
# workspace mount, cgroup) is removed by the next mcp-exec to start and
# recorded as a cleanup event; live sandboxes, and directories younger
# than a minute, are left alone.
. "$(dirname "$0")/lib.sh"

start_auditd
mcp_rules

cgroup_of() { find /sys/fs/cgroup -maxdepth 6 -type d -name "stockade-$1"; }
mounted() { grep -q " $S/sandboxes/$1/workspace " /proc/mounts; }

mcp_serve a
mcp_call a 1 '{"code":"x = 1"}' >/dev/null
a_box=$(ls "$S/sandboxes")
mounted "$a_box" || fail "no workspace mount"
[ -n "$(cgroup_of "$a_box")" ] || fail "no cgroup"
kill -9 "$PID_a"
wait "$PID_a" 2>/dev/null || true
[ -d "$S/sandboxes/$a_box" ] && mounted "$a_box" ||
	fail "a SIGKILLed mcp-exec left nothing to sweep"

# b starts while a's directory is young: it stays.
mcp_serve b
sid=$(mcp_call b 1 '{"code":"y = 7"}' | sed -n 's/.*"session_id":"\(sess_[0-9a-f]*\)".*/\1/p' | head -1)
[ -d "$S/sandboxes/$a_box" ] || fail "a directory younger than a minute was swept"
b_box=$(ls "$S/sandboxes" | grep -v "$a_box")

# Both look old now; only a's is nobody's.
touch -d '5 minutes ago' "$S/sandboxes/$a_box" "$S/sandboxes/$b_box"
"$MX" --stdio --rules "$R" --state-dir "$S" </dev/null >/dev/null 2>>"$T/mx.err"
[ ! -e "$S/sandboxes/$a_box" ] || fail "left-over sandbox not removed"
! mounted "$a_box" || fail "left-over workspace still mounted"
[ -z "$(cgroup_of "$a_box")" ] || fail "left-over cgroup not removed"
[ -d "$S/sandboxes/$b_box" ] || fail "a live sandbox was swept"
mcp_call b 2 "{\"code\":\"print(y)\",\"session_id\":\"$sid\"}" | grep -q '"stdout":"7\\n"' ||
	fail "the live session lost its state"
note "left-overs removed; live and young sandboxes kept"

eval "exec $IN_b>&-"
wait "$PID_b" || fail "mcp-exec b did not stop cleanly"
[ -z "$(ls "$S/sandboxes")" ] || fail "sandboxes left after a clean stop"
stop_auditd
grep -q "\"event\":\"cleanup\".*\"$a_box\"" "$LOG"/audit-*.log ||
	fail "no cleanup event naming $a_box"
verify >/dev/null
note "cleanup event recorded, log verifies"
