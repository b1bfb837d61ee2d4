#!/bin/bash
# podman with this tree's own state: images, containers, run state,
# networks, volumes and events under $BUILD/podman (default build/podman),
# never the host's /var/lib/containers or /etc/containers; runc; no
# registry.  Two paths podman 4.3 fixes for root cannot be moved by any
# flag: netavark's address allocations and aardvark-dns's zones
# (/run/containers/networks) and the blob cache of image copies
# (/var/lib/containers/cache).  So podman runs in a mount namespace of its
# own, with empty tmpfs over /run and /var/lib, gone with its last process.
# A flow of several calls that share a network or a running pod (the
# stand-in) runs whole inside one: podman.sh --ns CMD [ARG...] runs CMD
# there, and podman.sh calls made from it use that namespace; a call from
# outside one is a flow of its own.  What a flow leaves running could not
# be managed from another (its network namespaces and exit files were in
# that /run): when it ends, every pod, container, volume and network goes,
# and podman's empty cgroups (libpod_parent) with them.  Images stay.  One
# flow at a time per build tree.  --netns: the flow in a network namespace
# of its own too (only loopback, up), where podman's bridges and their
# addresses cannot meet another run's, and nothing can leave the machine
# (the tests' flows; building the image needs the mirror).
# usage: deploy/image/podman.sh ARGS...   (e.g. images, run --rm IMAGE CMD)
#        deploy/image/podman.sh --ns|--netns CMD [ARG...]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
P=$(cd "$here/../.." && pwd)/${BUILD:-build}/podman
if [ "${STOCKADE_PODMAN_NS:-}" != "$P" ]; then
	# A call from outside is a flow of one.
	net=""
	case ${1:-} in
	--ns) ;;
	--netns) net=--net; shift; set -- --ns "$@" ;;
	*) set -- --ns "$0" "$@" ;;
	esac
	mkdir -p "$P"
	# shellcheck disable=SC2016 # expanded by the inner shell
	exec unshare --mount $net --propagation private -- sh -c '
	    { [ -z "$1" ] || ip link set lo up; } &&
	    mount -t tmpfs -o mode=0755,size=64m stockade-podman /run &&
	    mount -t tmpfs -o mode=0755,size=64m stockade-podman /var/lib &&
	    shift && STOCKADE_PODMAN_NS=$0 exec "$@"' "$P" "$net" "$0" "$@"
fi
if [ "${1:-}" = --ns ]; then
	shift
	st=0
	"$@" || st=$?
	"$0" pod rm --all --force --time 5 >/dev/null 2>&1 || true
	"$0" rm --all --force --time 5 >/dev/null 2>&1 || true
	"$0" volume prune --force >/dev/null 2>&1 || true
	# (network prune leaves an --internal network be.)
	for n in $("$0" network ls --format '{{.Name}}' 2>/dev/null); do
		[ "$n" = podman ] || "$0" network rm --force "$n" >/dev/null 2>&1 || true
	done
	for d in /sys/fs/cgroup/*/libpod_parent /sys/fs/cgroup/libpod_parent; do
		[ ! -d "$d" ] || find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
	exit $st
fi
mkdir -p "$P/tmp"
# The limits containers get: the hard ones podman was given (no more: it
# cannot raise them), and for processes at most kernel.pid_max (more was
# refused here).
nproc=$(ulimit -Hu)
[ "$nproc" = unlimited ] || [ "$nproc" -gt "$(cat /proc/sys/kernel/pid_max)" ] &&
    nproc=$(cat /proc/sys/kernel/pid_max)
sed -e "s/@NOFILE@/$(ulimit -Hn)/g" -e "s/@NPROC@/$nproc/g" \
    "$here/containers.conf" >"$P/containers.conf"
export CONTAINERS_CONF="$P/containers.conf"
export CONTAINERS_STORAGE_CONF="$here/storage.conf"
export CONTAINERS_REGISTRIES_CONF="$here/registries.conf"
# Image layers are staged in TMPDIR (/var/tmp by default).
export TMPDIR="$P/tmp"
exec podman --root "$P/root" --runroot "$P/run" --tmpdir "$P/tmp/libpod" \
    --network-config-dir "$P/networks" --volumepath "$P/volumes" \
    --cgroup-manager cgroupfs --events-backend file "$@"
