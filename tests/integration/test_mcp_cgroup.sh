#!/bin/bash
# mcp-exec in a service cgroup as systemd 252 makes one for
# dist/mcp-exec.service (Delegate=yes, TasksMax=8192): its own cgroup
# under a slice, memory, pids and cpu enabled for it, mcp-exec its only
# process.  An emulation, not systemd: the same directories and files.
# Sessions of two mcp-exec's in turn and an `mcp-exec run` started in the
# leaf keep every sandbox cgroup one level below the service's, each with
# its limits; after kill -9 the next mcp-exec's sweep leaves no cgroup but
# a busy one no state names.  v2 (the guest: CG_SLICE=system.slice) or v1
# (a scratch slice).
. "$(dirname "$0")/lib.sh"

slice=${CG_SLICE:-stockade-it-$$-$RANDOM.slice}
svc_name=mcp-exec.service
CG=/sys/fs/cgroup
if [ -f $CG/cgroup.controllers ]; then
	V=2; SVC="$CG/$slice/$svc_name"; DIRS="$SVC"
else
	V=1; SVC="$CG/pids/$slice/$svc_name"
	DIRS="$CG/memory/$slice/$svc_name $SVC $CG/cpu/$slice/$svc_name"
fi
made=""	# slice dirs this test made, removed at the end

cg_cleanup() {
	for d in $DIRS; do
		[ -d "$d" ] || continue
		# What is left (a kill -9'd server's sandboxes, the planted
		# busy one) dies first; then deepest first.
		for p in $(cat $(find "$d" -name cgroup.procs) 2>/dev/null); do
			kill -9 "$p" 2>/dev/null || true
		done
		sleep 0.2
		find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
	for s in $made; do rmdir "$s" 2>/dev/null || true; done
	cleanup
}
trap cg_cleanup EXIT
[ -z "${KEEP_T:-}" ] || trap "cp -r \$T /tmp/keep-cg; cg_cleanup" EXIT

# What systemd does for the unit before it execs mcp-exec.
if [ $V = 2 ]; then
	for c in memory pids cpu; do
		grep -qw $c $CG/cgroup.subtree_control || echo "+$c" >$CG/cgroup.subtree_control
	done
	[ -d "$CG/$slice" ] || { mkdir "$CG/$slice"; made="$CG/$slice"; }
	echo "+memory +pids +cpu" >"$CG/$slice/cgroup.subtree_control"
	mkdir "$SVC"
	echo 8192 >"$SVC/pids.max"
else
	for h in memory pids cpu; do
		[ -d "$CG/$h/$slice" ] || { mkdir "$CG/$h/$slice"; made="$made $CG/$h/$slice"; }
		mkdir "$CG/$h/$slice/$svc_name"
	done
	echo 8192 >"$SVC/pids.max"
fi

start_auditd
mcp_rules
grep -q '^  parent: ~' "$R/mcp-exec.yaml" || fail "the shipped rules set cgroup.parent"
REAL_MX=$MX
# The unit's ExecStart: mcp-exec is put in the service cgroup(s), alone.
MX="$T/mx-in-service"
cat >"$MX" <<SH
#!/bin/sh
for d in $DIRS; do echo \$\$ >"\$d/cgroup.procs" || exit 1; done
exec "$REAL_MX" "\$@"
SH
chmod +x "$MX"

# Every cgroup below the service's is the leaf or a sandbox, nothing deeper.
one_level() {
	for d in $DIRS; do
		bad=$(find "$d" -mindepth 1 -type d | grep -Ev "^$d/(mcp-exec|stockade-[0-9a-f]{16})$" || true)
		[ -z "$bad" ] || fail "$1: cgroups nested below the service's: $(echo $bad)"
	done
}
sandboxes() { find "$SVC" -mindepth 1 -maxdepth 1 -type d -name 'stockade-*' | sort; }
limits_of() {
	if [ $V = 2 ]; then
		echo "$(cat "$1/memory.max") $(cat "$1/pids.max") $(cat "$1/cpu.max")"
	else
		b=$(basename "$1")
		echo "$(cat "$CG/memory/$slice/$svc_name/$b/memory.limit_in_bytes")" \
		    "$(cat "$1/pids.max")" \
		    "$(cat "$CG/cpu/$slice/$svc_name/$b/cpu.cfs_quota_us") 100000"
	fi
}
want_limits="536870912 64 100000 100000"	# rules/profiles/default.yaml

# Sessions come and go: each call opens one, and at two live ones the
# oldest is closed (four per principal is the shipped ceiling).
call=0
live=""
dead=0	# sandboxes a killed server left
close_oldest() {
	local fd sid=${live%% *}
	live=${live#* }
	call=$((call + 1))
	eval "fd=\$IN_$1"
	printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"close_session","arguments":{"session_id":"%s"}}}\n' \
	    "$call" "$sid" >&"$fd"
	for _ in $(seq 1 "${MCP_CALL_TRIES:-250}"); do
		grep -q "\"id\":$call[,}]" "$T/$1.out" && return 0
		sleep 0.02
	done
	fail "close_session $sid: no answer"
}
session() {
	local sid
	call=$((call + 1))
	sid=$(mcp_call "$1" "$call" "{\"code\":\"print($call * 6)\"}" |
	    grep "\"stdout\":\"$((call * 6))\\\\n\"" |
	    sed -n 's/.*"session_id":"\(sess_[0-9a-f]*\)".*/\1/p' | head -1)
	[ -n "$sid" ] || fail "call $call: no answer: $(grep "\"id\":$call[,}]" "$T/$1.out")"
	live="$live$sid "
	one_level "after call $call"
	for sb in $(sandboxes); do
		[ "$(limits_of "$sb")" = "$want_limits" ] || fail "$sb: limits $(limits_of "$sb")"
	done
	[ "$(sandboxes | wc -l)" = "$((dead + $(echo $live | wc -w)))" ] ||
		fail "$(echo $live | wc -w) live sessions, sandbox cgroups: $(sandboxes)"
	[ "$(echo $live | wc -w)" -lt 2 ] || close_oldest "$1"
}
mcp_serve a
for _ in 1 2 3 4 5; do session a; done
if [ $V = 2 ]; then
	[ -z "$(cat "$SVC/cgroup.procs")" ] || fail "processes beside the sandboxes in $SVC"
	grep -qx "$PID_a" "$SVC/mcp-exec/cgroup.procs" || fail "mcp-exec is not in $SVC/mcp-exec"
fi
note "5 sessions came and went: each sandbox cgroup beside the leaf, with its limits"

# `mcp-exec run` started inside the server's own cgroup (systemd-run
# --scope is elsewhere; this is nsenter/cgexec into the leaf).
leafdirs=$DIRS
[ $V = 1 ] || leafdirs="$SVC/mcp-exec"	# v1 has no leaf: the service's own
(for d in $leafdirs; do echo $BASHPID >"$d/cgroup.procs"; done
 exec "$REAL_MX" run --rules "$R" --state-dir "$T/run-state" -- /usr/bin/python3 -c \
    'print(open("/proc/self/cgroup").read())') >"$T/run.out" 2>>"$T/mx.err" ||
	fail "mcp-exec run in the leaf failed: $(tail -3 "$T/mx.err")"
one_level "after mcp-exec run in the leaf"
note "mcp-exec run from the leaf: its sandbox beside the others"

# kill -9: the sandboxes' cgroups and directories stay behind.
kill -9 "$PID_a"
wait "$PID_a" 2>/dev/null || true
eval "exec $IN_a>&-"
for _ in $(seq 1 100); do
	[ -z "$(cat $(sandboxes | sed 's|$|/cgroup.procs|') 2>/dev/null)" ] && break
	sleep 0.1
done
left=$(sandboxes | wc -l)
[ "$left" -ge 1 ] || fail "kill -9 left only $left sandbox cgroups"
# A server restarted at once, while they are young: its start sweeps them
# (issue 33), and sessions still go one level below.  systemd itself
# would trim the unit's empty cgroups before a restart (and on v2 cannot
# place a process in the service's cgroup once it has children with
# controllers); this is the harder case, where the sandboxes' cgroups
# survive until the new mcp-exec, started in the leaf as a server
# restarted by hand or by a supervisor inside the unit would be, sweeps.
MX="$T/mx-in-leaf"
cat >"$MX" <<SH
#!/bin/sh
for d in $leafdirs; do echo \$\$ >"\$d/cgroup.procs" || exit 1; done
exec "$REAL_MX" "\$@"
SH
chmod +x "$MX"
mcp_serve b
live=""
dead=0	# swept before b served
session b
eval "exec $IN_b>&-"
wait "$PID_b" || fail "mcp-exec b did not stop cleanly"

# An empty one no state names (older state_dir, crash between rmdir's),
# and a busy one: maybe another live mcp-exec's sandbox.
orphan=stockade-0123456789abcdef busy=stockade-fedcba9876543210
for d in $DIRS; do mkdir "$d/$orphan" "$d/$busy"; done
sleep 300 &
sleeper=$!
for d in $DIRS; do echo $sleeper >"$d/$busy/cgroup.procs"; done
touch -d '5 minutes ago' $(for d in $DIRS; do echo "$d"/stockade-*; done)
"$MX" --stdio --rules "$R" --state-dir "$S" </dev/null >/dev/null 2>>"$T/mx.err" ||
	fail "sweeping mcp-exec failed: $(tail -3 "$T/mx.err")"
rest=$(for d in $DIRS; do find "$d" -mindepth 1 -type d -name 'stockade-*'; done | grep -v "/$busy$" || true)
[ -z "$rest" ] || fail "left-over cgroups not swept: $(echo $rest)"
[ -d "$SVC/$busy" ] && kill -0 $sleeper || fail "the sweep removed a busy cgroup"
kill -9 $sleeper
wait $sleeper 2>/dev/null || true
grep -q "removed cgroup .*/$orphan" "$T/mx.err" || fail "no log of the orphan's removal"
one_level "after the sweep"
note "after kill -9 the next mcp-exec swept every left-over cgroup, kept the busy one"
stop_auditd
