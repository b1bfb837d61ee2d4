#!/bin/bash
# Runs inside the cgroup v2 guest, as its first process after the
# initramfs: mounts what a booted system has, runs each line of the job the
# host wrote (NAME TIMEOUT COMMAND), one PASS/FAIL line per job into the
# results share, then reboots (QEMU runs with -no-reboot: that ends it).
set -u
out=/run/guest-out
arg() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" /proc/cmdline; }
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TMPDIR=/tmp LANG=C.UTF-8
mount -t proc proc /proc
mount -t sysfs sysfs /sys
# As systemd 252 mounts it.
mount -t cgroup2 -o nsdelegate,memory_recursiveprot cgroup2 /sys/fs/cgroup
mkdir -p /dev/pts /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
ln -sf /proc/self/fd /dev/fd 2>/dev/null
# The guest kernel's modules (nf_tables, overlay, ...) from the kit.
kit=$(arg stockade.kit); ver=$(cat "$kit/version")
mount -t tmpfs tmpfs /lib/modules && mkdir "/lib/modules/$ver" &&
	mount --bind "$kit/root/lib/modules/$ver" "/lib/modules/$ver"
ip link set lo up
hostname stockade-guest
cd "$(arg stockade.dir)" || exit 1
{
	echo "guest: $(uname -r), $(nproc) cpus, cgroup.controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
	grep -c . /proc/self/cgroup | sed 's/^/guest: cgroup lines: /'
} >"$out/info"
while read -r name limit cmd; do
	[ -n "$name" ] || continue
	start=$(date +%s)
	if timeout -k 5 "$limit" bash -c "$cmd" >"$out/$name.log" 2>&1 </dev/null; then
		echo "PASS $name ($(( $(date +%s) - start ))s)" >>"$out/results"
	else
		echo "FAIL $name (exit $?, $(( $(date +%s) - start ))s)" >>"$out/results"
	fi
done <"$out/job"
echo DONE >>"$out/results"
sync
busybox reboot -f
echo b >/proc/sysrq-trigger
