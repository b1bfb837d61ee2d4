#!/bin/bash
# stockade audit report (issue 36): a page of real sessions (mcp-exec with
# code and output samples retained, a pattern hit, a policy reload shown
# as a diff, hostile artifact names, 1 MiB of stdout), with refusals,
# egress records, notes and 10,000 more calls sent beside them; from the
# live log, from an evidence bundle and from a tampered log, whose verdict
# names the first bad record.  Each page is opened in headless Chromium
# with no network at all: no console error, no request, the verdict on
# screen; one is printed to PDF.
. "$(dirname "$0")/lib.sh"

PUB="$KEYS/checkpoint.pub"
rep() { "$STOCKADE" audit report "$@"; }

make_conf "code: {retention: full}"
start_auditd
mcp_rules
mcp_serve a
mcp_call a 1 '{"code":"import os\nprint(\"hi\")\nos.system(\"true\")"}' |
	grep -q '"isError":false' || fail "call 1 did not run"
sid=$(sed -n 's/.*"session_id":"\(sess_[0-9a-f]*\)".*/\1/p' "$T/a.out" | head -1)
[ -n "$sid" ] || fail "no session id"
# A reload mid-session: auditd keeps each version of the rules files, so
# the page can show what changed (the new line is markup, to be escaped).
printf '# <script>alert(4)</script> reviewed\n' >>"$R/commands.yaml"
n0=$(grep -c '"event":"policy_load".*"program":"mcp-exec"' "$LOG"/audit-*.log)
kill -HUP "$PID_a"
for _ in $(seq 1 200); do
	[ "$(grep -c '"event":"policy_load".*"program":"mcp-exec"' "$LOG"/audit-*.log)" -gt "$n0" ] && break
	sleep 0.05
done
grep '"event":"policy_load".*"program":"mcp-exec"' "$LOG"/audit-*.log | tail -1 |
	grep -q '"ok":true.*' || fail "no second policy_load after SIGHUP"
grep '"event":"policy_load".*"program":"mcp-exec"' "$LOG"/audit-*.log | tail -1 |
	grep -q '"kept":true' || fail "the policy files were not kept: $(tail -c 400 "$LOG"/audit-*.log)"
# Hostile names: markup, a javascript: URL, bidi and zero-width characters.
mcp_call a 2 "{\"session_id\":\"$sid\",\"code\":\"for n in ['<script>alert(1).txt', 'javascript:alert(2)', 'invoice\\u202egnp.exe', 'a\\u200bb.txt']: open('/workspace/' + n, 'w').write('x')\\nprint('A' * 1048576)\"}" |
	grep -q '"isError":false' || fail "call 2 did not run: $(tail -c 300 "$T/a.out")"
# A real refusal: the shipped pattern rule PY-EXEC-001 denies this code.
mcp_call a 3 "{\"session_id\":\"$sid\",\"code\":\"import base64\\nexec(base64.b64decode('cHJpbnQoMSk='))\"}" |
	grep -q 'PY-EXEC-001\|pattern' || fail "call 3 was not refused: $(tail -c 300 "$T/a.out")"
{ printf '{"event":"egress_attached","session_id":"%s","sandbox":"sb1","policy":"web","level":"L2","nft_sha256":"sha256:%s"}\n' "$sid" "$(printf 'cd%.0s' $(seq 32))"
  printf '{"event":"call_refused","principal":"local","session_id":"%s","tool":"execute_python","reason":"pattern rule denies this code","rule_id":"PY-EXEC-001","severity":"high","detail":"<img src=x onerror=alert(3)>"}\n' "$sid"
  printf '{"event":"egress_denied","session_id":"%s","protocol":"tcp","dst_ip":"192.0.2.7","dst_port":443,"rule":"policy"}\n' "$sid"
  printf '{"event":"egress_flow","session_id":"%s","protocol":"tcp","dst_ip":"198.51.100.9","dst_port":443,"rule":"allow[0]","name":"pypi.example","bytes_out":512,"bytes_in":4096,"packets_out":4,"packets_in":5}\n' "$sid"
  printf '{"event":"operator_note","principal":"officer","message":"<script>fetch(\\"http://192.0.2.1/\\")</script> checked"}\n'
} | "$STOCKADE" audit send --socket "$SOCK" >/dev/null || fail "events refused"
# 10,000 calls in one session, each with a hostile artifact name: the
# page of everything must stay bounded and open.
t0=$(date +%s%N)
"$PY" - <<'PY' | "$STOCKADE" audit send --socket "$SOCK" >/dev/null || fail "10,000 calls refused"
import json
for i in range(10000):
    print(json.dumps({"event": "code_execution", "principal": "bulk",
        "session_id": "sess_many", "code_hash": "sha256:" + "%064x" % i,
        "code_size": 10, "sandbox": {"runtime": "native"}, "limits": {},
        "network": "none", "exit_code": i % 3, "duration_ms": i % 50,
        "stdout_bytes": 1048576, "decision": "allow",
        "artifacts": [{"name": "<script>alert(%d)</script>\u202e\u200b" % i,
                       "sha256": "%064x" % i, "size": 1}]}))
PY
note "10,000 calls sent in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
exec {IN_a}>&-
wait "$PID_a" 2>/dev/null
stop_auditd		# a clean stop signs a final checkpoint

# ---- from the live log
t0=$(date +%s%N)
rep "$LOG" --session "$sid" --pubkey "$PUB" -o "$T/live.html" >/dev/null ||
	fail "report of an intact log failed"
note "rendered in $(( ($(date +%s%N) - t0) / 1000000 )) ms, $(wc -c <"$T/live.html") bytes"
h="$T/live.html"
grep -q 'class="verdict intact"' "$h" || fail "no intact verdict"
grep -q 'complete up to the checkpoint at seq [0-9]*, which signs seq [0-9]*, key id <span class=hash>[0-9a-f]\{16\}' "$h" ||
	fail "no covering checkpoint with its key id"
grep -q "Retained in full" "$h" || fail "retained code not shown"
grep -q '<td>.*/commands.yaml</td><td class=hash>[0-9a-f]\{64\}</td><td><strong>changed</strong><pre class=diff>' "$h" ||
	fail "the reloaded file is not marked changed with a diff"
grep -q '<ins>+ # &lt;script&gt;alert(4)&lt;/script&gt; reviewed</ins>' "$h" ||
	fail "the diff does not show the added line escaped"
grep -q '<mark>os.system(&quot;true&quot;)</mark>' "$h" || fail "the pattern hit line is not marked"
grep -q 'PY-SHELL-001' "$h" || fail "pattern hit not listed"
grep -q '&lt;script&gt;alert(1).txt' "$h" || fail "artifact name not escaped"
grep -q 'invoice⟨U+202E⟩gnp.exe' "$h" || fail "bidi control not shown by name"
grep -q 'a⟨U+200B⟩b.txt' "$h" || fail "zero-width space not shown by name"
grep -q '<p>stdout: a sample was retained, the first 10[0-9][0-9] bytes of 1048577:</p>' "$h" ||
	fail "no stdout sample with its size"
[ "$(grep -o 'AAAAAAAA*' "$h" | awk '{ n = length($0) > n ? length($0) : n } END { print n }')" -le 1024 ] ||
	fail "more than the sample of 1 MiB of stdout in the page"
grep -q '<p>stdout: a sample was retained, the first 3 bytes of 3:</p>' "$h" ||
	fail "call 1's output sample not shown"
grep -q '&lt;img src=x onerror=alert(3)&gt;' "$h" || fail "refusal detail not escaped"
[ "$(grep -o '<td>PY-EXEC-001</td>' "$h" | wc -l)" -eq 2 ] || fail "the real pattern refusal is not listed"
grep -q 'pypi.example' "$h" || fail "egress flow not listed"
grep -q '<svg class=timeline' "$h" || fail "no timeline"
[ "$(grep -o '<rect class="mark' "$h" | wc -l)" -ge 3 ] || fail "refusal, denial and flow not drawn"
grep -q '<p>seccomp_sha256 <span class=hash>sha256:[0-9a-f]\{64\}<' "$h" || fail "no seccomp digest"
grep -q "<p>nft_sha256 <span class=hash>sha256:$(printf 'cd%.0s' $(seq 32))<" "$h" || fail "no nftables digest"
inert() {	# inert PAGE: no element or attribute that could run or fetch
	grep -qi '<script\|<img\|<iframe\|<link\|<object\|javascript:alert(2)\"' "$1" &&
		fail "live markup in $1: $(grep -io '<script[^>]*>\|<img[^>]*>' "$1" | head -3)"
	"$PY" - "$1" <<'PY' || fail "markup check of $1 (see above)"
import html.parser, sys
class P(html.parser.HTMLParser):
    def handle_starttag(self, tag, attrs):
        assert tag not in ("script", "img", "iframe", "link", "object", "embed", "a", "base", "form"), tag
        for k, v in attrs:
            assert not k.startswith("on") and "javascript:" not in (v or ""), (tag, k, v)
P().feed(open(sys.argv[1], encoding="utf-8").read())
PY
}
inert "$h"
rep "$LOG" --session "$sid" --pubkey "$PUB" -o "$T/live2.html" >/dev/null
cmp -s "$T/live.html" "$T/live2.html" || fail "two renderings differ"
note "live log: verified verdict and key id, retained code with its hit marked, hostile names inert, deterministic"
t0=$(date +%s%N)
rep "$LOG" --pubkey "$PUB" -o "$T/all.html" >/dev/null || fail "report of the whole log"
note "the whole log (10,000 more calls): $(( ($(date +%s%N) - t0) / 1000000 )) ms, $(wc -c <"$T/all.html") bytes"
[ "$(wc -c <"$T/all.html")" -lt $((8 * 1024 * 1024)) ] || fail "10,000 calls: the page is not bounded"
grep -q '9000 more calls not listed' "$T/all.html" || fail "10,000 calls: the table does not say what it left out"
grep -q '9950 more calls are listed above but not shown in full' "$T/all.html" ||
	fail "10,000 calls: the details do not say what they left out"
grep -q 'The timeline draws the first 2000 calls' "$T/all.html" || fail "10,000 calls: the timeline is not bounded"
grep -q '&lt;script&gt;alert(9)&lt;/script&gt;⟨U+202E⟩⟨U+200B⟩' "$T/all.html" || fail "10,000 calls: names not escaped"
grep -q 'Output: only its size was retained' "$T/all.html" || fail "10,000 calls: no word on the output not kept"
inert "$T/all.html"
grep -q '<rect class="mark operator_note"' "$T/all.html" || fail "the note is not on a timeline"
grep -q '&lt;script&gt;fetch(&quot;http://192.0.2.1/&quot;)&lt;/script&gt; checked' "$T/all.html" ||
	fail "the operator note is not shown escaped"
rep "$LOG" --session "$sid" -o "$T/nokey.html" >/dev/null || fail "report without a key"
grep -q 'class="verdict unsigned"' "$T/nokey.html" || fail "no key, but not said"

# ---- from an evidence bundle (a tar)
"$STOCKADE" audit evidence "$LOG" --session "$sid" -o "$T/b.tar" --pubkey "$PUB" >/dev/null ||
	fail "evidence failed"
rep "$T/b.tar" --pubkey "$PUB" -o "$T/bundle.html" >/dev/null || fail "bundle report failed"
grep -q 'class="verdict intact"' "$T/bundle.html" || fail "bundle: no intact verdict"
grep -q 'bundle intact' "$T/bundle.html" || fail "bundle: not bundle_verify's verdict"
grep -q "session $sid" "$T/bundle.html" || fail "bundle: not the bundle's selection"
grep -q "Retained in full" "$T/bundle.html" || fail "bundle: retained code not shown"
grep -q '<summary>the file as loaded</summary><pre class=code># mcp-exec settings.' "$T/bundle.html" ||
	fail "bundle: the policy files in force are not shown"
grep -q '<ins>+ # &lt;script&gt;alert(4)&lt;/script&gt; reviewed</ins>' "$T/bundle.html" ||
	fail "bundle: no diff between the policy versions it carries"
note "bundle: verified by bundle verification, the bundle's selection, code and policy versions from its blobs"

# ---- a tampered log: one byte of call 1's record flipped
cp -a "$LOG" "$T/bad"
f=$(grep -l '"event":"code_execution"' "$T"/bad/audit-*.log | head -1)
seq=$(grep '"event":"code_execution"' "$f" | head -1 | sed 's/^{"seq":\([0-9]*\),.*/\1/')
sed -i "/^{\"seq\":$seq,/s/\"stdout_bytes\":3/\"stdout_bytes\":4/" "$f"
grep -q "^{\"seq\":$seq,.*\"stdout_bytes\":4" "$f" || fail "tampering missed"
out=$(rep "$T/bad" --session "$sid" --pubkey "$PUB" -o "$T/bad.html") && fail "tampered log reported as intact"
grep -q 'class="verdict tampered"' "$T/bad.html" || fail "no tampered verdict"
grep -q 'the chain does not verify, so it proves nothing here' "$T/bad.html" ||
	fail "a tampered log's checkpoint is presented as proof"
grep -q "seq $seq:" "$T/bad.html" || fail "verdict does not name seq $seq: $(grep -o 'How: <code>[^<]*' "$T/bad.html")"
note "tampered: exit 1, the verdict names seq $seq"
# A kept policy version is under the chain's protection like code.
cp -a "$LOG" "$T/bad2"
pb=$(grep -h '"event":"policy_load".*"program":"mcp-exec"' "$LOG"/audit-*.log | tail -1 |
	sed 's/.*"path":"[^"]*commands.yaml","sha256":"\([0-9a-f]*\)".*/\1/')
pf=$(ls "$T"/bad2/blobs/*/"$pb" | head -1)
[ -f "$pf" ] || fail "no kept blob $pb"
echo '# forged' >>"$pf"
out=$("$STOCKADE" audit verify "$T/bad2" --pubkey "$PUB" 2>&1) && fail "a changed policy blob verifies"
echo "$out" | grep -q "policy blob sha256:$pb in .* was changed" || fail "changed policy blob: $out"
note "a kept policy version changed on disk: verify names it"

# ---- a real browser, no network at all
command -v chromium >/dev/null || fail "chromium not installed (make deps)"
chrome() {	# chrome NAME ARGS: no network interface at all (lo is down)
	local n=$1; shift
	unshare -n timeout 60 chromium --headless --no-sandbox --disable-gpu \
	    --no-first-run --disable-extensions --disable-background-networking \
	    --user-data-dir="$T/chr-$n" --enable-logging=stderr --v=0 "$@"
}
# The log check can fail: a request the page's CSP blocks is logged.
printf '<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="default-src %s"><img src="http://192.0.2.1/x.png">' "'none'" >"$T/canary.html"
chrome canary --dump-dom "file://$T/canary.html" >/dev/null 2>"$T/canary.log"
grep -q 'CONSOLE.*Content Security Policy.*source: file://' "$T/canary.log" ||
	fail "the browser log shows no blocked request"
browse() {	# browse PAGE NAME TEXT VERDICT: screenshot, DOM, log
	chrome "$2" --window-size=1200,1600 --screenshot="$T/$2.png" \
	    --dump-dom "file://$1" >"$T/$2.dom" 2>"$T/$2.log" ||
	    fail "chromium failed on $2: $(tail -3 "$T/$2.log")"
	[ -s "$T/$2.png" ] && [ "$(head -c 8 "$T/$2.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ] ||
	    fail "$2: no screenshot"
	# Chromium's own pages log too (chrome://…); the report's are file://.
	grep -E 'CONSOLE.*source: file://|Refused to|net::ERR_.*file://' "$T/$2.log" &&
	    fail "$2: console errors or requests in the browser log"
	grep -q "$3" "$T/$2.dom" || fail "$2: DOM lacks $3"
	# The screenshot itself: the verdict box's border in its colour.
	"$PY" - "$T/$2.png" "$4" <<'PY' || fail "$2: the screenshot does not show the $4 verdict"
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
w, h, depth, ctype = struct.unpack(">IIBB", d[16:26])
assert depth == 8 and ctype in (2, 6), (depth, ctype)
bpp, pos, idat = 4 if ctype == 6 else 3, 8, b""
while pos < len(d):
    n, kind = struct.unpack(">I4s", d[pos:pos + 8])
    if kind == b"IDAT": idat += d[pos + 8:pos + 8 + n]
    pos += 12 + n
raw, stride, prev, hits = zlib.decompressobj().decompress(idat, 300 * (w * bpp + 1)), w * bpp, None, 0
want = {"intact": (0, 0x77, 0), "tampered": (0xbb, 0, 0)}[sys.argv[2]]
for y in range(min(h, 250)):	# the verdict is at the top
    f, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    up = prev or bytearray(stride)
    for i in range(stride):
        a = row[i - bpp] if i >= bpp else 0
        b, c = up[i], (up[i - bpp] if i >= bpp else 0)
        if f == 1: row[i] = (row[i] + a) & 255
        elif f == 2: row[i] = (row[i] + b) & 255
        elif f == 3: row[i] = (row[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    hits += sum(1 for x in range(0, stride, bpp) if tuple(row[x:x + 3]) == want)
    prev = row
sys.exit(0 if hits > 1000 else 1)
PY
	grep -qi '<script' "$T/$2.dom" && fail "$2: a script element in the DOM"
	note "chromium: $2 rendered ($(wc -c <"$T/$2.png") byte screenshot), no console error, no request"
}
t0=$(date +%s%N)
browse "$T/live.html" live 'Verified: the chain is intact' intact
browse "$T/bad.html" bad 'TAMPERED: the audit trail does not verify' tampered
browse "$T/bundle.html" bundle 'bundle intact' intact
browse "$T/all.html" all '9000 more calls not listed' intact
# Printable: the documented way to a PDF (no --pdf: see docs/operations.md).
chrome pdf --no-pdf-header-footer --print-to-pdf="$T/live.pdf" "file://$T/live.html" 2>"$T/pdf.log" ||
	fail "print to PDF: $(tail -3 "$T/pdf.log")"
[ "$(head -c 5 "$T/live.pdf")" = "%PDF-" ] || fail "print to PDF: no PDF"
note "chromium: the live page prints to a $(wc -c <"$T/live.pdf") byte PDF"
note "chromium: $(( ($(date +%s%N) - t0) / 1000000 )) ms for four pages and a PDF"
[ -z "${REPORT_KEEP:-}" ] || cp "$T"/*.png "$T"/*.html "$REPORT_KEEP"/
