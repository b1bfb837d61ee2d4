#!/bin/bash
# Evidence bundles (stockade audit evidence, verify --bundle): a session's
# records with whole chain files, checkpoints, code blobs and the policy in
# force verify offline, with stockade and with openssl alone, as a folder
# and as a tar; each kind of tampering inside a bundle is caught.
. "$(dirname "$0")/lib.sh"

send() { "$STOCKADE" audit send --socket "$SOCK" >/dev/null; }
PUB="$KEYS/checkpoint.pub"
vb() { "$STOCKADE" audit verify --bundle "$1" --pubkey "$PUB"; }
# remanifest DIR: what a tamperer who also fixes the MANIFEST would write.
remanifest() {
	(cd "$1" && find . -type f ! -path ./MANIFEST | sed 's|^\./||' |
	    LC_ALL=C sort | xargs -d '\n' sha256sum >"$T/manifest.new" &&
	    mv "$T/manifest.new" MANIFEST)
}
# expect_caught NAME DIR PATTERN: verify fails naming PATTERN.
expect_caught() {
	out=$(vb "$2" 2>&1) && fail "$1: tampered bundle verified: $out"
	echo "$out" | grep -q "$3" || fail "$1: wrong reason: $out"
	note "caught: $1"
}
fresh() { rm -rf "$T/t"; cp -a "$T/b" "$T/t"; }

mkdir -p "$T/rules"
printf 'level: L0\n' >"$T/rules/a.yaml"
printf 'limits: {mem_mb: 256}\n' >"$T/rules/b.yaml"
pa=$(sha256sum "$T/rules/a.yaml" | cut -d' ' -f1)
pb=$(sha256sum "$T/rules/b.yaml" | cut -d' ' -f1)
pload() {
	printf '{"event":"policy_load","program":"%s","ok":true,"files":[{"path":"%s","sha256":"%s"}]}\n' "$1" "$2" "$3"
}
ev() {	# ev SESSION PRINCIPAL CODE [PAD_BYTES]
	"$PY" - "$@" <<'PY'
import hashlib, json, sys
s, p, code = sys.argv[1], sys.argv[2], sys.argv[3].encode()
h = "sha256:" + hashlib.sha256(code).hexdigest()
print(json.dumps({"event": "session_created", "principal": p, "session_id": s,
    "profile": "default", "seccomp_sha256": "sha256:" + "ab" * 32}))
print(json.dumps({"event": "execution_started", "principal": p, "session_id": s,
    "code_hash": h, "code_size": len(code), "code": code.decode()}))
print(json.dumps({"event": "code_execution", "principal": p, "session_id": s,
    "code_hash": h, "code_size": len(code), "sandbox": {}, "limits": {},
    "network": "none", "exit_code": 0, "duration_ms": 1, "stdout_bytes": 0,
    "artifacts": [], "decision": "allow",
    "pad": "x" * int(sys.argv[4] if len(sys.argv) > 4 else 0)}))
PY
}

# Several files: a rotation, the policy loads, another, then the sessions;
# a bundle starts at the file of the loads, in the middle of the chain.
make_conf "code: {retention: full}" "rotation: {max_file_bytes: 64K, keep_files: 20}"
start_auditd
{ for i in $(seq 1 7); do ev "pad$i" user:carol "print($i)" 12000; done
  pload mcp-exec "$T/rules/a.yaml" "$pa"; pload netguard "$T/rules/b.yaml" "$pb"
  for i in $(seq 8 12); do ev "pad$i" user:carol "print($i)" 12000; done
  ev s1 user:alice 'print("one")'; ev s2 user:bob 'print("two")'
  ev s1 user:alice 'print("three")'; } | send || fail "events refused"
stop_auditd		# a clean stop signs a final checkpoint
nfiles=$(ls "$LOG"/audit-*.log | wc -l)
[ "$nfiles" -ge 3 ] || fail "expected several log files, got $nfiles"

# ---- a session's bundle verifies
"$STOCKADE" audit evidence "$LOG" --session s1 -o "$T/b" --pubkey "$PUB" >/dev/null ||
    fail "evidence failed"
out=$(vb "$T/b") || fail "bundle does not verify: $out"
echo "$out" | grep -q "bundle intact: 6 record(s)" || fail "verify: $out"
echo "$out" | grep -q "[1-9][0-9]* code blob(s), 2 policy file(s) in force (0 not" || fail "verify: $out"
# Cut from the middle: the first file follows one not in the bundle.
echo "$out" | grep -q "chain verified from seq [1-9][0-9]," || fail "not a cut: $out"
head -1 "$(ls "$T"/b/log/audit-*.log | head -1)" | grep -q '"event":"rotate"' ||
    fail "the bundle starts at the chain's start"
[ "$(wc -l <"$T/b/records.jsonl")" -eq 6 ] || fail "records.jsonl: $(cat "$T/b/records.jsonl")"
grep -v '"session_id":"s1"' "$T/b/records.jsonl" && fail "records of another session"
[ -f "$T/b/policy/$pa" ] && [ -f "$T/b/policy/$pb" ] || fail "policy files not copied"
grep -q '"seccomp_sha256"' "$T/b/bundle.json" || fail "digests not listed"
(cd "$T/b" && sha256sum -c --quiet MANIFEST) || fail "sha256sum -c MANIFEST"
note "session bundle: 6 records, whole files, 2 blobs, 2 policy files, verifies"

# ---- the README's openssl recipe works as written
(cd "$T/b"
 kid=$(openssl pkey -pubin -in checkpoint.pub -outform DER | tail -c 32 |
     openssl dgst -sha256 -r | cut -c1-16)
 grep -q "\"key_id\":\"$kid\"" log/audit-*.log || fail "README key id $kid not the log's"
 for m in checkpoints/*.msg; do
	openssl pkeyutl -verify -pubin -inkey checkpoint.pub -rawin \
	    -in "$m" -sigfile "${m%.msg}.sig" >/dev/null || fail "openssl: $m"
 done
 sed -n '/^       last=; cat/,/^       done$/p' README.md | sed 's/^       //' >"$T/chain.sh"
 [ -s "$T/chain.sh" ] || fail "no chain recipe in README"
 [ -z "$(bash "$T/chain.sh")" ] || fail "README chain recipe: $(bash "$T/chain.sh" | head -3)"
 # An edit in the middle of a (shortened) file: the recipe names it.
 mkdir -p "$T/rb/log"; f=$(ls log/audit-*.log | head -1)
 head -4 "$f" | sed '3s/"seq"/"seq" /' >"$T/rb/$f"
 cd "$T/rb" && bash "$T/chain.sh" | grep -q "^BAD hash" || fail "README chain recipe misses an edit"
 head -c 63 "$T/b/checkpoints/$(ls "$T/b/checkpoints" | grep -m1 sig)" >"$T/bad.sig"; printf x >>"$T/bad.sig"
 m=$(ls "$T"/b/checkpoints/*.msg | head -1)
 openssl pkeyutl -verify -pubin -inkey "$T/b/checkpoint.pub" -rawin -in "$m" \
     -sigfile "$T/bad.sig" >/dev/null 2>&1 && fail "openssl accepted a bad signature"
 true)
note "README: key id, openssl signature check and chain recipe work, and fail on edits"

# ---- a tar verifies the same; without --pubkey it warns
"$STOCKADE" audit evidence "$LOG" --session s1 -o "$T/b.tar" --pubkey "$PUB" >/dev/null ||
    fail "evidence tar failed"
tar tf "$T/b.tar" | grep -q '^b/MANIFEST$' || fail "tar layout: $(tar tf "$T/b.tar" | head)"
out=$(vb "$T/b.tar") || fail "tar does not verify: $out"
out=$("$STOCKADE" audit verify --bundle "$T/b.tar" 2>&1) || fail "own key: $out"
echo "$out" | grep -q "warning: checked with the bundle's own" || fail "no warning: $out"
"$PY" - "$T/evil.tar" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w") as t:
    i = tarfile.TarInfo("b/../../escaped"); d = b"x"; i.size = 1
    t.addfile(i, io.BytesIO(d))
PY
out=$(vb "$T/evil.tar") && fail "a tar escaping its folder verified"
echo "$out" | grep -q "unsafe path" || fail "evil tar: $out"
[ -e "$T/escaped" ] && fail "tar entry escaped"
note "tar: same bundle verifies; own key warns; ../ entries refused"

# ---- filters: principal, time range; nothing unsigned
"$STOCKADE" audit evidence "$LOG" --principal user:bob -o "$T/bob" >/dev/null || fail "principal"
[ "$(wc -l <"$T/bob/records.jsonl")" -eq 3 ] || fail "principal: $(cat "$T/bob/records.jsonl")"
vb "$T/bob" >/dev/null || fail "principal bundle does not verify"
"$STOCKADE" audit evidence "$LOG" --until 2000-01-01 -o "$T/none" 2>"$T/err" && fail "empty range"
grep -q "no record" "$T/err" || fail "empty range: $(cat "$T/err")"
"$STOCKADE" audit evidence "$LOG" --since 2000-01-01 --until 2999 -o "$T/all" >/dev/null ||
    fail "time range"
vb "$T/all" >/dev/null || fail "time-range bundle does not verify"
note "principal and time range select; empty selection refused"

# ---- tampering, each kind, even with the MANIFEST fixed up
fresh; f=$(ls "$T"/t/log/audit-*.log | tail -1)
sed -i '/"session_id":"s1"/s/"exit_code":0/"exit_code":7/' "$T"/t/log/audit-*.log "$T/t/records.jsonl"
expect_caught "manifest not fixed" "$T/t" "sha256 differs from MANIFEST"
remanifest "$T/t"; expect_caught "record edited in the log" "$T/t" "log/audit-.*hash"
fresh; sed -i 's/"exit_code":0/"exit_code":1/' "$T/t/records.jsonl"; remanifest "$T/t"
expect_caught "record edited in records.jsonl" "$T/t" "records.jsonl differs"
fresh; sed -i '2d' "$T/t/records.jsonl"; remanifest "$T/t"
expect_caught "record removed from records.jsonl" "$T/t" "records.jsonl differs"
fresh; f=$(grep -l '"session_id":"s2"' "$T"/t/log/audit-*.log)
sed -i '/"session_id":"s2".*"event":"session_created"\|"event":"session_created".*"session_id":"s2"/d' "$f"
remanifest "$T/t"; expect_caught "record removed from the log" "$T/t" "seq"
fresh; blob=$(ls "$T"/t/log/blobs/*/* | head -1); printf '#' >>"$blob"; remanifest "$T/t"
expect_caught "blob changed" "$T/t" "was changed"
fresh; rm "$(ls "$T"/t/log/blobs/*/* | head -1)"; remanifest "$T/t"
expect_caught "blob removed" "$T/t" "is missing"
fresh; printf '# more\n' >>"$T/t/policy/$pa"; remanifest "$T/t"
expect_caught "policy file changed" "$T/t" "policy file policy/$pa was changed"
fresh; rm "$T/t/policy/$pb"; remanifest "$T/t"
expect_caught "policy file removed" "$T/t" "policy file $pb .* is missing"
fresh; sed -i 's/openssl alone/openssl or anything/' "$T/t/README.md"; remanifest "$T/t"
expect_caught "README edited" "$T/t" "README.md is not the README"
fresh; sed -i 's/"seccomp_sha256": "sha256:abab/"seccomp_sha256": "sha256:cdab/' "$T/t/bundle.json"
grep -q cdab "$T/t/bundle.json" || fail "sed missed the digest"; remanifest "$T/t"
expect_caught "bundle.json digest edited" "$T/t" "bundle.json: digests differ"
fresh; sed -i '1s/^./0/' "$T/t/MANIFEST"
expect_caught "manifest edited" "$T/t" "sha256 differs from MANIFEST"
fresh; sed -i '$d' "$T/t/MANIFEST"; expect_caught "manifest line removed" "$T/t" "not in MANIFEST"
fresh; echo x >"$T/t/extra"; expect_caught "file added" "$T/t" "MANIFEST"
fresh; s=$(ls "$T"/t/checkpoints/*.sig | tail -1)
"$PY" -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); b[0]^=1; open(sys.argv[1],'wb').write(b)" "$s"
remanifest "$T/t"; expect_caught "checkpoint .sig broken" "$T/t" "not the checkpoint record's signature"
# The strongest forger: breaks a checkpoint's signature in the log and
# re-hashes the whole chain after it (the chain itself has no key).
fresh
"$PY" - "$T/t" <<'PY'
import base64, glob, hashlib, json, os, re, sys
d = sys.argv[1]; prev = None; done = False
for f in sorted(glob.glob(d + "/log/audit-*.log")):
    out = []
    for line in open(f, "rb").read().splitlines():
        if prev is None:
            prev = line; out.append(line); continue
        ph = json.loads(prev)["hash"]
        if not done and b'"event":"checkpoint"' in line:
            sig = bytearray(base64.b64decode(json.loads(line)["sig"])); sig[5] ^= 1
            line = re.sub(rb'"sig":"[^"]*"', b'"sig":"' + base64.b64encode(bytes(sig)) + b'"', line)
            done = True
            m = json.loads(line)
            open(d + "/checkpoints/%d.sig" % m["cp_seq"], "wb").write(bytes(sig))
        line = re.sub(rb'"prev":"[0-9a-f]{64}"', b'"prev":"' + ph.encode() + b'"', line, 1)
        pre = line[:line.rindex(b',"hash":')]
        h = hashlib.sha256(bytes.fromhex(ph) + pre).hexdigest().encode()
        line = pre + b',"hash":"' + h + b'"}'
        out.append(line); prev = line
    open(f, "wb").write(b"\n".join(out) + b"\n")
assert done
PY
# records.jsonl re-derived the way the forger would need it
grep -ah '"session_id":"s1"' "$T"/t/log/audit-*.log >"$T/t/records.jsonl"; remanifest "$T/t"
expect_caught "checkpoint signature broken, chain re-hashed" "$T/t" "checkpoint signature does not verify"
keygen_other() { "$STOCKADE" audit keygen "$T/k2" >/dev/null; }
keygen_other
out=$("$STOCKADE" audit verify --bundle "$T/b" --pubkey "$T/k2/checkpoint.pub" 2>&1) &&
    fail "another key verified the bundle"
note "caught: another key"

# ---- a policy file changed since it was loaded is listed, not copied
printf '# edited later\n' >>"$T/rules/b.yaml"
"$STOCKADE" audit evidence "$LOG" --session s1 -o "$T/b2" --pubkey "$PUB" >/dev/null ||
    fail "evidence with a changed policy file"
out=$(vb "$T/b2") || fail "b2: $out"
echo "$out" | grep -q "(1 not available)" || fail "b2: $out"
[ -e "$T/b2/policy/$pb" ] && fail "a changed policy file was copied"
grep -q "\"sha256\": \"$pb\"" "$T/b2/bundle.json" || fail "b2: hash not listed"
note "policy file changed since: listed as not available"

# ---- records after the last checkpoint are not bundled
start_auditd
ev s9 user:dave 'print(9)' | send || fail "s9 refused"
"$STOCKADE" audit evidence "$LOG" --session s9 -o "$T/b9" 2>"$T/err" &&
    fail "an unsigned record was bundled"
grep -q "not yet signed by a checkpoint" "$T/err" || fail "b9: $(cat "$T/err")"
stop_auditd
"$STOCKADE" audit evidence "$LOG" --session s9 -o "$T/b9" --pubkey "$PUB" >/dev/null ||
    fail "s9 after the stop's checkpoint"
vb "$T/b9" >/dev/null || fail "b9 does not verify"
note "unsigned tail refused until a checkpoint signs it"
echo "PASS test_evidence"
