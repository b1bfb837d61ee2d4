#!/bin/bash
# What an mcp-exec killed with SIGKILL leaves behind (sandbox directory,
# workspace mount, cgroup) is removed by the next mcp-exec to start and
# recorded as a cleanup event; live sandboxes, and directories younger
# than a minute, are left alone.
. "$(dirname "$0")/lib.sh"

MX="$BIN/mcp-exec"
R="$T/rules"
S="$T/state"
start_auditd
chmod 0711 "$T"
cp -R "$ROOT/rules" "$R"
sed -i -e "s|^\(  audit_socket:\).*|\1 $SOCK|" \
    -e "s|^\(  driver_dir:\).*|\1 $ROOT/mcp-exec/driver|" "$R/mcp-exec.yaml"

# serve NAME: mcp-exec --stdio fed through a fifo held open on fd $IN_NAME.
serve() {
	mkfifo "$T/$1.in"
	"$MX" --stdio --rules "$R" --state-dir "$S" <"$T/$1.in" >"$T/$1.out" \
	    2>>"$T/mx.err" &
	eval "PID_$1=$!"
	exec {fd}>"$T/$1.in"
	eval "IN_$1=$fd"
	printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	    '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&"$fd"
}
# call NAME ID ARGUMENTS: one execute_python, waits for its reply.
call() {
	local fd
	eval "fd=\$IN_$1"
	printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"execute_python","arguments":%s}}\n' "$2" "$3" >&"$fd"
	for _ in $(seq 1 250); do
		grep "\"id\":$2[,}]" "$T/$1.out" 2>/dev/null && return 0
		sleep 0.02
	done
	fail "no reply to call $2 of $1: $(tail -3 "$T/mx.err")"
}
cgroup_of() { find /sys/fs/cgroup -maxdepth 6 -type d -name "stockade-$1"; }
mounted() { grep -q " $S/sandboxes/$1/workspace " /proc/mounts; }

serve a
call a 1 '{"code":"x = 1"}' >/dev/null
a_box=$(ls "$S/sandboxes")
mounted "$a_box" || fail "no workspace mount"
[ -n "$(cgroup_of "$a_box")" ] || fail "no cgroup"
kill -9 "$PID_a"
wait "$PID_a" 2>/dev/null || true
[ -d "$S/sandboxes/$a_box" ] && mounted "$a_box" ||
	fail "a SIGKILLed mcp-exec left nothing to sweep"

# b starts while a's directory is young: it stays.
serve b
sid=$(call b 1 '{"code":"y = 7"}' | sed -n 's/.*"session_id":"\(sess_[0-9a-f]*\)".*/\1/p' | head -1)
[ -d "$S/sandboxes/$a_box" ] || fail "a directory younger than a minute was swept"
b_box=$(ls "$S/sandboxes" | grep -v "$a_box")

# Both look old now; only a's is nobody's.
touch -d '5 minutes ago' "$S/sandboxes/$a_box" "$S/sandboxes/$b_box"
"$MX" --stdio --rules "$R" --state-dir "$S" </dev/null >/dev/null 2>>"$T/mx.err"
[ ! -e "$S/sandboxes/$a_box" ] || fail "left-over sandbox not removed"
! mounted "$a_box" || fail "left-over workspace still mounted"
[ -z "$(cgroup_of "$a_box")" ] || fail "left-over cgroup not removed"
[ -d "$S/sandboxes/$b_box" ] || fail "a live sandbox was swept"
call b 2 "{\"code\":\"print(y)\",\"session_id\":\"$sid\"}" | grep -q '"stdout":"7\\n"' ||
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
