# Shared by test_mcp_death.sh and test_mcp_gvisor_death.sh (after lib.sh):
# a sandbox's processes are those of its cgroup, which everything the
# sandbox starts inherits (runsc's gofer and sentry too).

cgroup_of() { find /sys/fs/cgroup -maxdepth 6 -type d -name "stockade-$1"; }
procs_of() {
	local d
	for d in $(cgroup_of "$1"); do cat "$d/cgroup.procs"; done 2>/dev/null | sort -u
}
# pool_ready PID: mcp-exec PID says its pooled sandbox is ready.
pool_ready() { grep -qs '"pool":{"ready":1' "$S/sessions-$1.json"; }
# wait_for WHAT CMD...: CMD succeeds within 30 s (a loaded host), or fail.
wait_for() {
	local what=$1
	shift
	for _ in $(seq 1 1500); do
		"$@" && return 0
		sleep 0.02
	done
	fail "$what"
}
# one_box [OLD...]: the sandbox directory that appears in $S/sandboxes
# besides OLD ones.
one_box() {
	local b o
	for _ in $(seq 1 1500); do
		for b in $(ls "$S/sandboxes" 2>/dev/null); do
			for o in "$@"; do [ "$b" != "$o" ] || continue 2; done
			echo "$b"
			return 0
		done
		sleep 0.02
	done
	fail "no sandbox was made: $(tail -3 "$T/mx.err")"
}
# dies_with PID BOX...: SIGKILLs PID (an mcp-exec); within one second no
# process of any BOX is left.  DIED_MS: how long they took.
dies_with() {
	local pid=$1 b t0 left procs=""
	shift
	for b in "$@"; do procs="$procs $(cgroup_of "$b" | sed 's|$|/cgroup.procs|')"; done
	[ -n "$(cat $procs 2>/dev/null)" ] || fail "no process in the cgroups of $*"
	t0=$(date +%s%N)
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	while :; do
		left=$(cat $procs 2>/dev/null | sort -u)
		DIED_MS=$(( ($(date +%s%N) - t0) / 1000000 ))
		[ -n "$left" ] || break
		[ "$DIED_MS" -lt 1000 ] ||
			fail "1 s after mcp-exec's SIGKILL its sandbox still runs: $(ps -o pid=,user=,args= -p "$(echo $left | tr ' ' ,)")"
		sleep 0.02
	done
}
# gone BOX...: within a few seconds, no directory, mount or cgroup of any BOX.
gone_now() {
	local b
	for b in "$@"; do
		[ ! -e "$S/sandboxes/$b" ] && ! grep -q " $S/sandboxes/$b/" /proc/mounts &&
		    [ -z "$(cgroup_of "$b")" ] || return 1
	done
}
gone() {
	local b
	for _ in $(seq 1 250); do
		gone_now "$@" && return 0
		sleep 0.02
	done
	for b in "$@"; do
		[ ! -e "$S/sandboxes/$b" ] || fail "sandbox $b's directory is left"
		! grep -q " $S/sandboxes/$b/" /proc/mounts || fail "sandbox $b's mounts are left"
		[ -z "$(cgroup_of "$b")" ] || fail "sandbox $b's cgroup is left"
	done
}
