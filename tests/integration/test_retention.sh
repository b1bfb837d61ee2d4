#!/bin/bash
# Code retention (code.retention in audit.yaml): hash, sample, full.  Full
# code lands in the blob store before the record that names it, verify
# catches a changed or missing blob, show-code prints it, retention
# deletes a file's blobs with the file, and a crash between blob and
# record leaves no record without its blob and no ack.
. "$(dirname "$0")/lib.sh"

# ev NAME CODE_FILE [extra python dict]: one execution_started line with
# the code read from CODE_FILE (UTF-8), its hash and size.
ev() {
	"$PY" - "$@" <<'PY'
import hashlib, json, sys
code = open(sys.argv[2], "rb").read()
e = {"event": "execution_started", "principal": "user:alice",
     "session_id": sys.argv[1], "tool": "execute_python",
     "code_hash": "sha256:" + hashlib.sha256(code).hexdigest(),
     "code_size": len(code), "code": code.decode()}
if len(sys.argv) > 3:
    e.update(json.loads(sys.argv[3]))
print(json.dumps(e))
PY
}
send() { "$STOCKADE" audit send --socket "$SOCK"; }
hex_of() { sha256sum "$1" | cut -d' ' -f1; }
record_of() { cat "$LOG"/audit-*.log | grep -a "\"session_id\":\"$1\"" | tail -1; }

printf 'import os\nprint("h\xc3\xa9llo \xe2\x9c\x93")\n# %s\n' "$(head -c 3000 /dev/zero | tr '\0' x)" >"$T/a.py"
printf 'print(2)\n' >"$T/b.py"

# ---- full: the blob is stored, the record keeps the hash only
make_conf "code: {retention: full}"
start_auditd
ev s1 "$T/a.py" | send >/dev/null || fail "full: event refused"
ev s2 "$T/b.py" | send >/dev/null || fail "full: second event refused"
rec=$(record_of s1)
echo "$rec" | grep -q '"code_retention":"full"' || fail "full: no code_retention: $rec"
echo "$rec" | grep -q '"code":' && fail "full: the code stayed in the record"
h=$(hex_of "$T/a.py")
ls "$LOG"/blobs/audit-*.log/"$h" >/dev/null || fail "full: blob $h not in $LOG/blobs"
"$STOCKADE" audit show-code "$LOG" "sha256:$h" >"$T/shown" || fail "show-code failed"
cmp -s "$T/shown" "$T/a.py" || fail "show-code printed other bytes"
out=$(verify) || fail "full: log does not verify: $out"
echo "$out" | grep -q "code blobs: 2 present" || fail "full: verify did not count the blobs: $out"
note "full: blob stored, show-code exact, verify checks 2 blobs"

# A writer cannot plant a blob under another name, nor claim a retention.
ev s3 "$T/b.py" '{"code_hash": "sha256:'"$(hex_of "$T/a.py")"'"}' | send 2>"$T/err" &&
    fail "full: code not matching code_hash was accepted"
grep -q "code_hash is not the sha256 of code" "$T/err" || fail "full: $(cat "$T/err")"
ev s4 "$T/b.py" '{"code_retention": "full"}' | send 2>"$T/err" &&
    fail "full: a writer-set code_retention was accepted"
printf '%s\n' '{"event":"execution_started","principal":"p","session_id":"s5","code_hash":"sha256:'"$h"'","code_size":1}' |
    send 2>"$T/err" && fail "full: execution_started without code was accepted"
grep -q "field 'code' is required" "$T/err" || fail "full: $(cat "$T/err")"
note "full: wrong hash, forged code_retention and missing code refused"

# ---- verify catches a changed and a missing blob
stop_auditd
blob=$(ls "$LOG"/blobs/audit-*.log/"$h")
cp "$blob" "$T/blob.save"
printf 'print("evil")\n' >>"$blob"
out=$(verify) && fail "verify missed a changed blob"
echo "$out" | grep -q "code blob sha256:$h .* was changed" || fail "changed: $out"
rm "$blob"
out=$(verify) && fail "verify missed a missing blob"
echo "$out" | grep -q "code blob sha256:$h is missing" || fail "missing: $out"
"$STOCKADE" audit show-code "$LOG" "$h" >/dev/null 2>&1 && fail "show-code printed a missing blob"
cp "$T/blob.save" "$blob"
verify >/dev/null || fail "restored blob does not verify"
note "verify: changed and missing blob named"

# ---- sample: first and last N bytes in the record, no blob
rm -rf "$LOG" "$CP"
make_conf "code: {retention: sample, sample_bytes: 16}"
start_auditd
ev s6 "$T/a.py" | send >/dev/null || fail "sample: refused"
rec=$(record_of s6)
"$PY" - "$rec" "$T/a.py" <<'PY' || fail "sample: wrong head/tail: $rec"
import json, sys
r = json.loads(sys.argv[1]); code = open(sys.argv[2], "rb").read()
assert r["code_retention"] == "sample" and "code" not in r, r
assert r["code_head"].encode() == code[:16], r["code_head"]
assert r["code_tail"].encode() == code[-16:], r["code_tail"]
PY
printf '\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9' >"$T/u.py"
ev s7 "$T/u.py" | send >/dev/null || fail "sample: UTF-8 code refused"
rec=$(record_of s7)
"$PY" - "$rec" <<'PY' || fail "sample: UTF-8 cut badly: $rec"
import json, sys
r = json.loads(sys.argv[1])
assert r["code_head"] == "\u00e9" * 8 and r["code_tail"] == "\u00e9", r
PY
[ -e "$LOG/blobs" ] && fail "sample: a blob was stored"
ev s8 "$T/b.py" | send >/dev/null || fail "sample: refused"
verify >/dev/null || fail "sample: log does not verify"
stop_auditd
note "sample: head and tail at character boundaries, no blob"

# ---- hash: code checked, then dropped
rm -rf "$LOG" "$CP"
make_conf
start_auditd
ev s9 "$T/a.py" | send >/dev/null || fail "hash: refused"
record_of s9 | grep -q '"code_retention":"hash"' || fail "hash: $(record_of s9)"
record_of s9 | grep -q 'code_head\|"code":' && fail "hash: code kept"
[ -e "$LOG/blobs" ] && fail "hash: a blob was stored"
printf '%s\n' '{"event":"execution_started","principal":"p","session_id":"s10","code_hash":"sha256:'"$h"'","code_size":1}' |
    send >/dev/null || fail "hash: execution_started without code refused"
stop_auditd
note "hash: nothing kept but hash and size"

# ---- retention: a file's blobs go with it
rm -rf "$LOG" "$CP"
make_conf "code: {retention: full}" "rotation: {max_file_bytes: 64K, keep_files: 2}"
start_auditd
for i in $(seq 1 150); do
	printf 'print(%d)\n# %s\n' "$i" "$(head -c 900 /dev/zero | tr '\0' y)" >"$T/c.py"
	ev "r$i" "$T/c.py"
done | send >/dev/null || fail "rotation: refused"
stop_auditd
nlog=$(ls "$LOG"/audit-*.log | wc -l)
[ "$nlog" -eq 2 ] || fail "rotation: $nlog log files, expected 2"
for d in "$LOG"/blobs/*; do
	[ -f "$LOG/$(basename "$d")" ] || fail "rotation: blobs of deleted $(basename "$d") kept"
done
[ "$(ls "$LOG"/blobs | wc -l)" -ge 1 ] || fail "rotation: no blob folder left"
cat "$LOG"/audit-*.log | grep -q '"session_id":"r150"' || fail "rotation: last event missing"
printf 'print(150)\n# %s\n' "$(head -c 900 /dev/zero | tr '\0' y)" >"$T/c.py"
"$STOCKADE" audit show-code "$LOG" "$(hex_of "$T/c.py")" | cmp -s - "$T/c.py" ||
    fail "rotation: newest blob not shown"
verify >/dev/null || fail "rotation: log does not verify"
note "retention: $nlog files kept, blob folders only for them"

# ---- a writer (a profile) may ask for more than audit.yaml, never less
rm -rf "$LOG" "$CP"
make_conf "code: {retention: sample, sample_bytes: 16}"
start_auditd
ev p1 "$T/a.py" '{"code_retention_min": "full"}' | send >/dev/null || fail "min full: refused"
record_of p1 | grep -q '"code_retention":"full"' || fail "min full not applied: $(record_of p1)"
ls "$LOG"/blobs/audit-*.log/"$h" >/dev/null || fail "min full: no blob"
ev p2 "$T/a.py" '{"code_retention_min": "hash"}' | send >/dev/null || fail "min hash: refused"
record_of p2 | grep -q '"code_retention":"sample".*"code_head"\|"code_head".*"code_retention":"sample"' ||
    fail "a writer weakened retention: $(record_of p2)"
ev p3 "$T/b.py" '{"code_retention_min": "all"}' | send 2>"$T/err" && fail "min all accepted"
grep -q "code_retention_min: hash, sample or full" "$T/err" || fail "min all: $(cat "$T/err")"
printf '%s\n' '{"event":"operator_note","principal":"p","message":"m","code_retention_min":"full"}' |
    send 2>"$T/err" && fail "code_retention_min outside execution_started accepted"
stop_auditd
verify >/dev/null || fail "min: log does not verify"
note "code_retention_min: raises sample to full, cannot lower it, bad values refused"

# ---- crash between blob and record: SIGKILL as the blob takes its name
rm -rf "$LOG" "$CP"
make_conf "code: {retention: full}"
cat >"$T/auditd-crash" <<SH
#!/bin/sh
exec strace -f -qq -o /dev/null -e trace=rename,renameat,renameat2 \
    -e inject=rename,renameat,renameat2:signal=KILL "$AUDITD" "\$@"
SH
chmod +x "$T/auditd-crash"
REAL_AUDITD=$AUDITD
AUDITD="$T/auditd-crash"
start_auditd
ev k1 "$T/a.py" | send >"$T/ack" 2>&1 && fail "crash: the event was acknowledged: $(cat "$T/ack")"
stop_auditd || true
AUDITD=$REAL_AUDITD
cat "$LOG"/audit-*.log | grep -q '"session_id":"k1"' &&
    fail "crash: the record is on disk without its blob"
start_auditd
out=$(verify) || fail "crash: log does not verify after the crash: $out"
# The writer was never acked, so nothing ran; it tries again.
ev k1 "$T/a.py" | send >/dev/null || fail "crash: retry refused"
stop_auditd
out=$(verify) || fail "crash: log does not verify after the retry: $out"
echo "$out" | grep -q "code blobs: 1 present" || fail "crash: $out"
note "crash at the blob's rename: no ack, no record; the retry stores both"

# ---- mcp-exec sends the code; the daemon keeps it whole
rm -rf "$LOG" "$CP"
make_conf "code: {retention: full}"
start_auditd
mcp_rules
mcp_serve m
mcp_call m 1 '{"code":"print(6*7)"}' | grep -q '"isError":false' || fail "mcp: the call did not run"
eval "exec $IN_m>&-"
wait "$PID_m" || fail "mcp-exec did not stop cleanly"
stop_auditd
printf 'print(6*7)' >"$T/m.py"
h=$(hex_of "$T/m.py")
grep -a '"event":"execution_started"' "$LOG"/audit-*.log | grep -q "\"code_hash\":\"sha256:$h\",.*\"code_retention\":\"full\"" ||
    fail "mcp: execution_started does not name the kept code"
"$STOCKADE" audit show-code "$LOG" "$h" | cmp -s - "$T/m.py" || fail "mcp: show-code differs"
verify >/dev/null || fail "mcp: log does not verify"
note "mcp-exec: execute_python's code kept in full, shown exactly"
