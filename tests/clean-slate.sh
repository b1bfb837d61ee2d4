#!/bin/bash
# Runs a command (`make check`'s test targets) on a clean slate: in a
# private mount namespace with an empty tmpfs over every path outside the
# checkout that Stockade or its tests write (state, logs, keys, netns
# names), with TMPDIR a fresh tmpfs of its own, and in a fresh cgroup.
# A leftover of an earlier run can
# then never make a test pass, and nothing this run writes there outlives
# it: the mounts, and the network namespaces named beneath /run/netns, go
# with the namespace.  Mount points that did not exist are made for the run
# and removed after it (by the last of overlapping runs).  Needs root (unshare, mount); otherwise it runs
# the command as it is and says so.
#
# usage: tests/clean-slate.sh CMD [ARG...]
set -u
PATHS="/run/stockade /run/netguard /run/netns /var/lib/stockade
    /var/log/stockade /etc/stockade"
CONTROLLERS="memory pids cpu"

if [ "${STOCKADE_CLEAN_SLATE:-}" = inside ]; then
	for p in $PATHS; do
		mount -t tmpfs -o mode=1777,nosuid,nodev "stockade-slate" "$p" ||
			{ echo "clean-slate: cannot mount a tmpfs on $p" >&2; exit 1; }
	done
	# Not /tmp itself: the checkout may live there.
	mount -t tmpfs -o mode=1777,nosuid,nodev "stockade-slate" "$TMPDIR" ||
		{ echo "clean-slate: cannot mount a tmpfs on $TMPDIR" >&2; exit 1; }
	# The sandboxes' state dirs live below: other users must walk through.
	chmod 0755 /run/stockade /run/netguard /var/lib/stockade \
	    /var/log/stockade /etc/stockade
	exec "$@"
fi

if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
	echo "clean-slate: not root (or no unshare): running on this machine as it is" >&2
	exec "$@"
fi

# Runs may overlap (engineers beside CI): each holds a shared lock on /run
# while it lives, and only the last to leave removes the mount points it
# made; removing one another run has mounted over would detach that mount.
exec 9</run
flock -s 9
made=""
for p in $PATHS; do
	[ -d "$p" ] && continue
	mkdir -p "$p" && made="$p $made"
done

# A cgroup of the run's own, beside nothing of an earlier run: on v1, one
# per controller below the one we are in.  On v2 the run stays where it is
# (moving would take mcp-exec's delegation away; the v2 suites run in the
# guest, tests/guest/, which is a clean slate of its own).
cg="stockade.check-$$" cgdirs=""

# Removes cgroup d and everything below it, killing what is left there;
# bounded (5 s): processes leave a cgroup a moment after SIGKILL.
cg_remove() {
	local d=$1 sub pid
	for _ in $(seq 1 50); do
		[ -d "$d" ] || return 0
		find "$d" -depth -type d 2>/dev/null | while read -r sub; do
			for pid in $(cat "$sub/cgroup.procs" 2>/dev/null); do
				kill -9 "$pid" 2>/dev/null || true
			done
			rmdir "$sub" 2>/dev/null || true
		done
		[ -d "$d" ] && sleep 0.1
	done
	[ ! -d "$d" ]
}

if [ ! -f /sys/fs/cgroup/cgroup.controllers ]; then
	for c in $CONTROLLERS; do
		own=$(awk -F: -v c="$c" '$2 ~ "(^|,)"c"(,|$)" {print $3}' /proc/self/cgroup)
		# A run that was killed could not remove its cgroup: once its
		# wrapper is gone, nothing of it may stay beside this one.
		for old in /sys/fs/cgroup/$c${own%/}/stockade.check-*; do
			[ -d "$old" ] || continue
			kill -0 "${old##*-}" 2>/dev/null && continue
			cg_remove "$old" || echo "clean-slate: cannot remove $old" >&2
		done
		d="/sys/fs/cgroup/$c${own%/}/$cg"
		mkdir "$d" 2>/dev/null && cgdirs="$cgdirs $d"
	done
fi
for d in $cgdirs; do
	echo $$ >"$d/cgroup.procs" 2>/dev/null ||
		echo "clean-slate: could not join $d" >&2
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/stockade-check.XXXXXX")
TMPDIR=$tmp STOCKADE_CLEAN_SLATE=inside \
    unshare --mount --propagation private -- "$0" "$@" 9<&-
st=$?
rmdir "$tmp" 2>/dev/null || rm -rf "$tmp"

# Back where we came from, then remove what the run made.
for d in $cgdirs; do
	echo $$ >"$(dirname "$d")/cgroup.procs" 2>/dev/null || true
done
# What a failed test left running dies with the run's cgroups.
for d in $cgdirs; do
	cg_remove "$d" || echo "clean-slate: $d left behind" >&2
done
if flock -xn 9; then
	for p in $made; do
		rmdir "$p" 2>/dev/null || true
	done
fi
exit $st
