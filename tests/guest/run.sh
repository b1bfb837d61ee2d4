#!/bin/bash
# The cgroup v2 guest: boots Debian's own kernel (unpacked into
# build/guest/kit by kit.sh, never installed) under QEMU TCG with
# cgroup_no_v1=all, the host's / read-only over virtio-9p and empty tmpfs
# on /tmp, /run, /var/tmp and /root, and runs there, in one boot, the
# sandbox suites against $BUILD: check_cgroup, the escape suite (OOM and
# pids limits included), the `mcp-exec run` and stdio MCP session tests,
# the crash sweep, a killed mcp-exec's sandboxes dying with it, and
# mcp-exec alone in system.slice/mcp-exec.service as systemd's unit places
# it (test_mcp_cgroup.sh).  ~4 min; alone:
#   make SAN=1 BUILD=build/san guest        (GUEST_TESTS="a b": a subset)
# Prints one PASS/FAIL line per guest test; fails if any failed, or if
# the guest did not report (each boot is bounded by GUEST_TIMEOUT).
set -u
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
: "${BUILD:=build/san}" "${GUEST_TIMEOUT:=900}"
GUEST_DIR="$ROOT/build/guest"
KIT="$GUEST_DIR/kit"
GUEST_DIR="$GUEST_DIR" bash tests/guest/kit.sh || { echo "FAIL guest: no kit"; exit 1; }

mkdir -p "$GUEST_DIR"
out=$(mktemp -d "$GUEST_DIR/out.XXXXXX")
[ -n "${GUEST_KEEP:-}" ] || trap 'rm -rf "$out"' EXIT
chmod 0755 "$out"

# NAME TIMEOUT COMMAND: run in the guest, from the checkout, in this order.
env="BUILD=$BUILD MCP_CALL_TRIES=2500"
cat >"$out/job.all" <<JOB
check_cgroup 120 $env tests/run-unit.sh $BUILD/tests/check_cgroup
test_mcp_cgroup 180 $env CG_SLICE=system.slice bash tests/integration/test_mcp_cgroup.sh
test_mcp_sweep 120 $env bash tests/integration/test_mcp_sweep.sh
test_mcp_death 120 $env bash tests/integration/test_mcp_death.sh
test_mcp_run 150 $env bash tests/integration/test_mcp_run.sh
test_mcp_audit 120 $env bash tests/integration/test_mcp_audit.sh
escape 420 ESCAPE_SKIP='data_stack:numpy, pandas and matplotlib take over its 30 s to import under TCG (the host runs it);output_flood:1 GiB through a pipe takes over its 30 s under TCG (the host runs it)' /usr/bin/python3 -u tests/escape/run.py $BUILD/mcp-exec
JOB
if [ -n "${GUEST_TESTS:-}" ]; then
	for t in $GUEST_TESTS; do grep "^$t " "$out/job.all"; done >"$out/job"
else
	cp "$out/job.all" "$out/job"
fi

# Without tsc_early_khz about one boot in ten hangs calibrating the TSC:
# microvm has no HPET or PM timer, and TCG's guest TSC is the host's.
khz=$(awk '/^cpu MHz/ {printf "%d", $4 * 1000; exit}' /proc/cpuinfo)
cmdline="console=ttyS0 panic=-1 cgroup_no_v1=all ${khz:+tsc_early_khz=$khz}"
cmdline="$cmdline stockade.dir=$ROOT stockade.kit=$KIT"
start=$(date +%s)
timeout -k 10 "$GUEST_TIMEOUT" qemu-system-x86_64 \
	-accel tcg,thread=multi -cpu max -M microvm -m 1024 -smp 2 \
	-nodefaults -no-reboot -display none -serial "file:$out/console" \
	-kernel "$KIT/vmlinux" -initrd "$KIT/initrd.cpio" -append "$cmdline" \
	-fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap \
	-device virtio-9p-device,fsdev=root,mount_tag=root \
	-fsdev local,id=src,path="$ROOT",security_model=none,readonly=on,multidevs=remap \
	-device virtio-9p-device,fsdev=src,mount_tag=src \
	-fsdev local,id=out,path="$out",security_model=none \
	-device virtio-9p-device,fsdev=out,mount_tag=out
st=$?
echo "guest: booted, ran and stopped in $(( $(date +%s) - start ))s (qemu exit $st)"
[ -f "$out/info" ] && sed 's/^/    /' "$out/info"
failed=""
while read -r name _; do
	line=$(grep "^[A-Z]* $name " "$out/results" 2>/dev/null | head -1)
	[ -n "$line" ] || line="FAIL $name (no report from the guest)"
	echo "$line"
	case $line in
	PASS*) sed -n 's/^  /    /p' "$out/$name.log" 2>/dev/null ;;
	*) failed="$failed $name"
	   tail -30 "$out/$name.log" 2>/dev/null | sed 's/^/    /' ;;
	esac
done <"$out/job"
if ! grep -qx DONE "$out/results" 2>/dev/null; then
	echo "guest: did not finish; console:"
	tail -30 "$out/console" | sed 's/^/    /'
	failed="$failed (unfinished)"
fi
[ -z "$failed" ] || { echo "guest tests failed:$failed"; exit 1; }
