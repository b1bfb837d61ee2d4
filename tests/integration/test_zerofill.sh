#!/bin/bash
# The audit log on a real disk (ext4 on a loop device here; tmpfs has no
# journal to spare, so no zeros there ever).  As shipped, and by default,
# the active file is a text file every tool reads: no NUL, its size that
# of its records, grep and a file-following shipper see lines.  With
# flush.zero_ahead: true (opt-in) it is zero-filled ahead of its records
# while idle; readers take the zeros for the end of the records: verify,
# tail and the daemon's own recovery after kill -9, which cuts the zeros
# and notes only what was torn.  Rotated and cleanly closed files hold
# their records and nothing else.  A SIGHUP back to false cuts the zeros.
. "$(dirname "$0")/lib.sh"

command -v mkfs.ext4 >/dev/null || fail "mkfs.ext4 missing (e2fsprogs)"
losetup -f >/dev/null 2>&1 || { echo "SKIP: no loop device"; exit 77; }
mkdir -p "$T/back" "$LOG"
mount -t tmpfs -o size=80M tmpfs "$T/back"
truncate -s 64M "$T/back/disk.img"
mkfs.ext4 -q -F "$T/back/disk.img"
dev=$(losetup -f --show "$T/back/disk.img")
trap 'stop_auditd KILL 2>/dev/null; umount -l "$LOG" 2>/dev/null; losetup -d "$dev" 2>/dev/null; cleanup' EXIT
mount "$dev" "$LOG"

# Bytes of records (up to the first NUL) and the size of file $1.
records_len() { "$PY" -c 'import sys; d = open(sys.argv[1], "rb").read(); print(d.find(b"\0") if b"\0" in d else len(d), len(d))' "$1"; }
newest() { ls "$LOG"/audit-*.log | tail -1; }
has_nul() { "$PY" -c 'import sys; sys.exit(0 if b"\0" in open(sys.argv[1], "rb").read() else 1)' "$1"; }

# As shipped (rules/audit.yaml, paths from the flags) and with no flush
# section at all: after a load and an idle moment, text only.
for conf in shipped default; do
	if [ $conf = shipped ]; then cp "$ROOT/rules/audit.yaml" "$CONF"; else make_conf; fi
	start_auditd
	"$LOAD" --socket "$SOCK" --writers 1 --events 200 --window 1 >/dev/null ||
		fail "load"
	sleep 0.5	# when the I/O thread, idle, would fill zeros
	f=$(newest)
	! has_nul "$f" || fail "$conf: NUL bytes in the active file $f"
	read -r rec size < <(records_len "$f")
	[ "$size" = "$rec" ] || fail "$conf: $rec bytes of records, file $size"
	n=$(grep -c '"seq":' "$f") || fail "$conf: grep finds no records in $f"
	[ "$n" = "$(wc -l <"$f")" ] || fail "$conf: grep counts $n of $(wc -l <"$f") lines"
	stop_auditd TERM || fail "$conf: exit status $?"
	rm -rf "${LOG:?}"/* "${CP:?}"	# a fresh chain for the next daemon
done
note "shipped and default: the active file is text, its size that of its records"

make_conf "rotation: {max_file_bytes: 256K, keep_files: 1000}" "flush: {zero_ahead: true}"
start_auditd
"$LOAD" --socket "$SOCK" --writers 1 --events 200 --window 1 >/dev/null ||
	fail "load"
sleep 0.3	# the I/O thread fills zeros when idle
read -r rec size < <(records_len "$(newest)")
[ "$size" -gt "$rec" ] || fail "no zeros ahead of the records: $rec of $size bytes"
out=$(verify) || fail "verify of the live log with its zero tail: $out"
echo "$out" | grep -qi 'incomplete\|zero-filled' && fail "verify warns of the zero tail: $out"
n=$("$STOCKADE" audit tail -n 100000 "$LOG" | wc -l)
lines=$(cat "$LOG"/audit-*.log | tr -d '\0' | wc -l)
[ "$n" = "$lines" ] || fail "tail printed $n lines of $lines"
note "live file: $rec bytes of records, zero-filled to $size; verify and tail see records only"

# kill -9 with the zeros in place: recovery drops them and notes no cut.
stop_auditd KILL || true
start_auditd
"$STOCKADE" audit status --socket "$SOCK" >/dev/null
grep -ah '"event":"recovery"' "$LOG"/audit-*.log | grep -q '"cut_torn_tail"' &&
	fail "recovery noted a cut of the zero tail: $(grep -ah '"event":"recovery"' "$LOG"/audit-*.log)"
out=$(verify) || fail "verify after kill -9: $out"

# A batch torn by a crash: a record's head, a sector of zeros, more bytes.
stop_auditd KILL || true
f=$(newest)
read -r rec size < <(records_len "$f")
"$PY" - "$f" "$rec" <<'PY'
import sys
path, off = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    f.seek(off)
    f.write(b'{"seq":999999,"event":"torn')
    f.seek((off // 512 + 2) * 512)
    f.write(b'half of the batch"}\n')
PY
start_auditd
"$STOCKADE" audit status --socket "$SOCK" >/dev/null
grep -ah '"event":"recovery"' "$LOG"/audit-*.log | tail -1 | grep -q '"cut_torn_tail"' ||
	fail "the torn batch's cut was not recorded"
out=$(verify) || fail "verify after a torn batch: $out"
note "kill -9: zeros dropped silently; a torn batch cut and recorded"

# Rotation and a clean stop: no file but the active one has zeros, and
# after the stop none has.
"$LOAD" --socket "$SOCK" --writers 2 --events 1500 --window 4 >/dev/null ||
	fail "load"
files=$(ls "$LOG"/audit-*.log | wc -l)
[ "$files" -ge 3 ] || fail "only $files files: no rotation"
for f in $(ls "$LOG"/audit-*.log | head -n -1); do
	! has_nul "$f" || fail "rotated file $f has NUL bytes"
done
stop_auditd TERM || fail "exit status $?"
for f in "$LOG"/audit-*.log; do
	! has_nul "$f" || fail "$f has NUL bytes after a clean stop"
done
out=$(verify) || fail "verify after rotation and stop: $out"
note "$files files rotated; each closed file cut to its records"

# flush.zero_ahead: false by SIGHUP: the zeros there are cut while idle, and
# from then on the file's size follows its records, as a tailer that reads
# up to the size (Filebeat, tail -F) needs.  No rotation in between.
make_conf "flush: {zero_ahead: true}"
start_auditd
"$LOAD" --socket "$SOCK" --writers 1 --events 100 --window 1 >/dev/null ||
	fail "load"
sleep 0.3
read -r rec size < <(records_len "$(newest)")
[ "$size" -gt "$rec" ] || fail "no zeros ahead before the reload: $rec of $size"
make_conf
kill -HUP "$AUDITD_PID"
for _ in $(seq 1 100); do
	has_nul "$(newest)" || break
	sleep 0.05
done
! has_nul "$(newest)" || fail "zeros still there 5 s after zero_ahead: false"
for round in 1 2 3; do
	"$LOAD" --socket "$SOCK" --writers 1 --events 50 --window 1 >/dev/null ||
		fail "load"
	sleep 0.3	# when the zeros would have come
	read -r rec size < <(records_len "$(newest)")
	[ "$size" = "$rec" ] || fail "round $round: $rec bytes of records, file $size"
	[ "$size" -gt "${last:-0}" ] || fail "round $round: the size did not grow"
	last=$size
done
out=$(verify) || fail "verify after the cut: $out"
note "zero_ahead: false by SIGHUP: zeros cut; the size then grows with the records"
stop_auditd TERM || fail "exit status $?"
