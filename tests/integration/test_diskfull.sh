#!/bin/bash
# Disk full on a tiny tmpfs: suspend refuses events and tells writers, then
# resumes by itself and records how many were refused; keep_going drops and
# counts; halt exits.  Never a partial line, never a silent loss.
. "$(dirname "$0")/lib.sh"

mkdir -p "$LOG"
mount -t tmpfs -o size=1M tmpfs "$LOG"
make_conf "retry_seconds: 1"
start_auditd

fill() { dd if=/dev/zero of="$LOG/filler" bs=4k 2>/dev/null || true; }
fill
st=0; "$LOAD" --socket "$SOCK" --writers 2 --events 200 --window 1 \
    >"$T/load.out" 2>&1 || st=$?
[ $st = 1 ] || fail "load on a full disk: exit $st: $(cat "$T/load.out")"
grep -q 'suspended' "$T/load.out" || fail "writers not told: $(cat "$T/load.out")"
"$STOCKADE" audit status --socket "$SOCK" | grep -q '"state": "failed"' || fail "status"
rm -f "$LOG/filler"
sleep 2.5
"$LOAD" --socket "$SOCK" --writers 1 --events 10 >/dev/null || fail "no resume"
stop_auditd || fail "exit status"
expect_records audit_resumed 1
grep -q '"events_refused":[1-9]' "$LOG"/audit-*.log || fail "refused count not recorded"
verify >/dev/null || fail "log does not verify after suspend"
note "suspend: refused, resumed, counted"

make_conf "retry_seconds: 1" "disk_full_action: keep_going"
start_auditd
fill
"$LOAD" --socket "$SOCK" --writers 1 --events 50 >"$T/load.out" 2>&1 || true
grep -q 'lost' "$T/load.out" || fail "keep_going: $(cat "$T/load.out")"
rm -f "$LOG/filler"
sleep 2.5
"$LOAD" --socket "$SOCK" --writers 1 --events 5 >/dev/null || fail "no resume"
stop_auditd
grep -q '"events_lost":[1-9]' "$LOG"/audit-*.log || fail "lost count not recorded"
verify >/dev/null || fail "log does not verify after keep_going"
note "keep_going: dropped, counted"

make_conf "disk_full_action: halt"
start_auditd
fill
"$LOAD" --socket "$SOCK" --writers 1 --events 50 >/dev/null 2>&1 || true
st=0; wait "$AUDITD_PID" || st=$?
AUDITD_PID=""
[ $st = 3 ] || fail "halt: exit $st"
rm -f "$LOG/filler"
verify >/dev/null || fail "log does not verify after halt"
note "halt: exit 3, log intact"
