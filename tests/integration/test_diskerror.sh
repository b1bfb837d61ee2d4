#!/bin/bash
# A real I/O error: the log lives on ext4 on a loop device whose backing
# file sits on a tiny tmpfs; when the tmpfs fills, the block layer fails
# writes and fdatasync returns EIO.  (Linux then forgets the error, so a
# retried fdatasync would "succeed".)  The daemon must never acknowledge an
# event after that: writers are told `suspended`, the failure shows in
# status, the daemon stays up and stops cleanly.
. "$(dirname "$0")/lib.sh"

command -v mkfs.ext4 >/dev/null || fail "mkfs.ext4 missing (e2fsprogs)"
# A machine without loop devices cannot run this; say so loudly.
losetup -f >/dev/null 2>&1 || { echo "SKIP: no loop device"; exit 77; }
mkdir -p "$T/back" "$LOG"
mount -t tmpfs -o size=6M tmpfs "$T/back"
truncate -s 64M "$T/back/disk.img"
mkfs.ext4 -q -F "$T/back/disk.img"
dev=$(losetup -f --show "$T/back/disk.img")
trap 'stop_auditd KILL 2>/dev/null; umount -l "$LOG" 2>/dev/null; losetup -d "$dev" 2>/dev/null; cleanup' EXIT
mount -o errors=continue "$dev" "$LOG"
make_conf "disk_error_action: suspend" "retry_seconds: 1" \
    "rotation: {max_file_bytes: 64M}"
start_auditd

st=0
"$LOAD" --socket "$SOCK" --writers 2 --events 40000 --window 8 \
    --acked "$T/acked" >"$T/load.out" 2>&1 || st=$?
[ $st = 1 ] || fail "load: exit $st: $(cat "$T/load.out")"
grep -q suspended "$T/load.out" || fail "writers not told: $(cat "$T/load.out")"
status=$("$STOCKADE" audit status --socket "$SOCK")
echo "$status" | grep -q '"state": "failed"' || fail "status: $status"
echo "$status" | grep -q 'disk error' || fail "status reason: $status"
acked=$(wc -l <"$T/acked")
note "$acked events acked before the disk failed; then: $(grep -o '"reason": "[^"]*"' <<<"$status")"
# Still failing: nothing more is acknowledged, whatever the retries do.
sleep 2.5
st=0; "$LOAD" --socket "$SOCK" --writers 1 --events 20 >/dev/null 2>&1 || st=$?
[ $st = 1 ] || fail "an event was accepted on a failed disk (exit $st)"
kill -0 "$AUDITD_PID" || fail "daemon died"
stop_auditd TERM || fail "exit status $?"
grep -q 'fdatasync\|write' "$T/auditd.err" || fail "no log message: $(cat "$T/auditd.err")"
n=$("$PY" "$HERE/acked_present.py" "$LOG" "$T/acked") || fail "$n"
note "all $n acknowledged events are in the log"
