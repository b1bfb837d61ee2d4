#!/bin/bash
# The trust store of a networked sandbox: an HTTPS host in the world with a
# certificate from a CA this test makes.  An L2 session whose profile names
# that CA (tls.extra_ca) verifies and fetches it with Python's default
# context; a session of a profile without it fails verification although
# the host's bundle is there, read-only.  `stockade rules check` and
# mcp-exec's load refuse an extra_ca that is not a PEM of certificates.
# The same host serves a PEP 503 index of wheels this test builds: with
# packages.install, pip installs into the session's own layer (importable
# there, in the driver and a subprocess; not in another session, a new one
# or on the host; an index elsewhere is out of reach; the workspace cap
# holds against a package that unpacks past it; the audit lists each wheel
# by name, version and sha256).  The profile without it gets Debian's
# externally-managed-environment refusal.
. "$(dirname "$0")/lib.sh"

need_netguard
command -v openssl >/dev/null || skip "openssl not installed"
[ -r /etc/ssl/certs/ca-certificates.crt ] || skip "ca-certificates not installed"
TLS_ADDR=203.0.113.20		# TEST-NET-3, not one of world.py's hosts
topo_up
start_auditd
mcp_rules
policy web L2 'allow:
  - names: [tls.test]
    ports: [443]
resolver:
  upstreams: [192.0.2.53]'
sed -i "s|^\(  netguard_socket:\).*|\1 $NG_SOCK|" "$R/mcp-exec.yaml"
sed -i "s|^network:.*|network: web|" "$R/profiles/default.yaml"
cp "$R/profiles/default.yaml" "$R/profiles/noca.yaml"

# The test CA and tls.test's certificate, signed by it.
P="$T/pki"
mkdir -p "$P"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=stockade test CA" \
    -keyout "$P/ca.key" -out "$P/ca.pem" 2>"$P/err" || fail "CA: $(cat "$P/err")"
openssl req -newkey rsa:2048 -nodes -subj "/CN=tls.test" -keyout "$P/host.key" \
    -out "$P/host.csr" 2>"$P/err" || fail "CSR: $(cat "$P/err")"
printf 'subjectAltName=DNS:tls.test\nbasicConstraints=CA:FALSE\n' >"$P/ext"
openssl x509 -req -in "$P/host.csr" -CA "$P/ca.pem" -CAkey "$P/ca.key" \
    -CAcreateserial -days 2 -extfile "$P/ext" -out "$P/host.pem" 2>"$P/err" ||
    fail "sign: $(cat "$P/err")"
printf 'tls:\n  extra_ca: %s\n' "$P/ca.pem" >>"$R/profiles/default.yaml"
# The package layer shares the workspace's cap: small, so one wheel can
# unpack past it.
WS_CAP=$((4 * 1024 * 1024))
sed -i "s|^  workspace_size:.*|  workspace_size: 4M|" "$R/profiles/default.yaml"
printf 'packages:\n  install: true\n  index: https://tls.test/simple\n' \
    >>"$R/profiles/default.yaml"

# A bad extra_ca is refused by the loaders: rules check and mcp-exec -n.
"$STOCKADE" rules check "$R" >"$T/check" 2>&1 || fail "rules check: $(cat "$T/check")"
cp -R "$R" "$T/bad"
cat "$P/host.key" "$P/ca.pem" >"$P/with-key.pem"
echo "not a certificate" >"$P/junk.pem"
for bad in junk.pem:'no PEM certificate' with-key.pem:'holds a private key' \
    missing.pem:'No such file'; do
	sed -i "s|^  extra_ca:.*|  extra_ca: $P/${bad%%:*}|" "$T/bad/profiles/default.yaml"
	"$STOCKADE" rules check "$T/bad" >"$T/check" 2>&1 &&
	    fail "rules check accepts extra_ca ${bad%%:*}"
	grep -q "default.yaml:[0-9]*:[0-9]*: extra_ca: .*${bad#*:}" "$T/check" ||
	    fail "rules check on ${bad%%:*}: $(cat "$T/check")"
	"$MX" -n --stdio --rules "$T/bad" --state-dir "$S" >"$T/check" 2>&1 &&
	    fail "mcp-exec -n accepts extra_ca ${bad%%:*}"
	grep -q "${bad#*:}" "$T/check" || fail "mcp-exec -n on ${bad%%:*}: $(cat "$T/check")"
done
note "extra_ca: rules check and mcp-exec -n refuse junk, a private key, a missing file"
sed -i "s|^  extra_ca:.*|  extra_ca: $P/ca.pem|" "$T/bad/profiles/default.yaml"
# bad_packages EXPECT LINE...: the profile's packages section as LINEs is
# refused by rules check with EXPECT at file:line:column.
bad_packages() {
	local want=$1
	shift
	sed -i "/^packages:/,\$d" "$T/bad/profiles/default.yaml"
	printf '%s\n' packages: "$@" >>"$T/bad/profiles/default.yaml"
	"$STOCKADE" rules check "$T/bad" >"$T/check" 2>&1 &&
	    fail "rules check accepts packages: $*"
	grep -q "default.yaml:[0-9]*:[0-9]*: $want" "$T/check" ||
	    fail "rules check on packages: $*: $(cat "$T/check")"
}
bad_packages "index: an https:// URL" "  install: true" "  index: http://tls.test/simple"
bad_packages "index: an https:// URL" "  install: true" \
    '  index: "https://tls.test/simple --trusted-host evil.test"'
bad_packages "unknown key" "  install: true" "  indx: https://tls.test/simple"
bad_packages "key .install.: expected a boolean" "  install: please" "  index: https://tls.test/simple"
bad_packages "packages: install needs an index" "  install: true"
# An index the profile's policy does not allow: every install would fail.
sed -i "/^packages:/,\$d" "$T/bad/profiles/default.yaml"
printf '%s\n' packages: "  install: true" "  index: https://Elsewhere.test/simple" \
    >>"$T/bad/profiles/default.yaml"
"$STOCKADE" rules check "$T/bad" >"$T/check" 2>&1 && fail "rules check accepts an index out of the policy"
grep -q "default.yaml: packages: index host elsewhere.test is not allowed by network/" "$T/check" ||
    fail "rules check on an index out of the policy: $(cat "$T/check")"
sed -i "s|^network:.*|network: none|" "$T/bad/profiles/default.yaml"
bad_packages "packages: install: the index is reached through" "  install: true" \
    "  index: https://tls.test/simple"
note "packages: rules check refuses http and odd index URLs, unknown keys, no index, an index the policy does not allow, no network"

# Two wheels, made by hand (a wheel is a zip with a RECORD of sha256s), and
# a PEP 503 index of them under the https host's root.
W="$T/www"
mkdir -p "$W"
"$PY" - "$W" <<'PY'
import base64, hashlib, os, sys, zipfile
www = sys.argv[1]
def wheel(name, files):
    mod = name.replace("-", "_")
    di = f"{mod}-0.1.dist-info"
    files = dict(files)
    files[f"{di}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n".encode()
    files[f"{di}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: stockade-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    rec = ""
    for path, data in files.items():
        h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rec += f"{path},sha256={h},{len(data)}\n"
    files[f"{di}/RECORD"] = (rec + f"{di}/RECORD,,\n").encode()
    fn = f"{mod}-0.1-py3-none-any.whl"
    os.makedirs(f"{www}/packages", exist_ok=True)
    with zipfile.ZipFile(f"{www}/packages/{fn}", "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files.items():
            zi = zipfile.ZipInfo(path, (2020, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = (0o100755 if "/scripts/" in path else 0o100644) << 16
            z.writestr(zi, data)
    sha = hashlib.sha256(open(f"{www}/packages/{fn}", "rb").read()).hexdigest()
    os.makedirs(f"{www}/simple/{name}", exist_ok=True)
    with open(f"{www}/simple/{name}/index.html", "w") as f:
        f.write(f'<!DOCTYPE html><html><body><a href="../../packages/{fn}#sha256={sha}">{fn}</a></body></html>\n')
    return sha
tiny = wheel("stockade-tinypkg", {"stockade_tinypkg/__init__.py": b'VALUE = "tiny 0.1"\n',
                                   # pip puts it in the layer's bin/, shebang rewritten
                                   "stockade_tinypkg-0.1.data/scripts/tinypkg":
                                       b"#!python\nprint('tiny script')\n"})
# Unpacks to 8 MiB of zeros past the 4 MiB cap; a few KiB to download.
wheel("stockade-hugepkg", {"stockade_hugepkg/__init__.py": b"",
                           "stockade_hugepkg/blob.bin": bytes(8 << 20)})
with open(f"{www}/simple/index.html", "w") as f:
    f.write('<!DOCTYPE html><html><body><a href="stockade-tinypkg/">stockade-tinypkg</a>'
            '<a href="stockade-hugepkg/">stockade-hugepkg</a></body></html>\n')
open(f"{www}/tiny.sha256", "w").write(tiny + "\n")
PY
TINY_SHA=$(cat "$W/tiny.sha256")

# tls.test on its own documentation address, HTTPS with the test CA's cert.
ip -n "$NS_W" addr add "$TLS_ADDR/32" dev w0
echo "$TLS_ADDR tls.test" >>"$HOSTS"
kill -HUP "$DNSMASQ_PID"
cat >"$T/https.py" <<'PY'
import functools, http.server, ssl, sys
class H(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        if self.path != "/":
            return super().do_GET()	# the package index, from argv[5]
        body = b"tls world\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, fmt, *a):
        with open(sys.argv[4] + ".log", "a") as f:
            f.write(self.requestline + "\n")
srv = http.server.ThreadingHTTPServer((sys.argv[1], 443),
                                      functools.partial(H, directory=sys.argv[5]))
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[2], sys.argv[3])
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
open(sys.argv[4], "w").write("ready\n")
srv.serve_forever()
PY
ip netns exec "$NS_W" "$PY" "$T/https.py" "$TLS_ADDR" "$P/host.pem" "$P/host.key" \
    "$T/https.ready" "$W" 2>>"$T/https.err" &
disown $!
for _ in $(seq 1 100); do [ -s "$T/https.ready" ] && break; sleep 0.05; done
[ -s "$T/https.ready" ] || fail "https host did not start: $(cat "$T/https.err")"
for _ in $(seq 1 50); do
	probe "$NS_G" dns -t 0.2 192.0.2.53 tls.test 2>/dev/null |
	    grep -q "answers=A:$TLS_ADDR" && break
	sleep 0.1
done
start_netguard

cat >"$T/tls.py" <<'PY'
import os, ssl, urllib.request
print("env", os.environ.get("SSL_CERT_FILE"), os.environ.get("REQUESTS_CA_BUNDLE"),
      os.environ.get("PIP_CERT"))
sysb = "/etc/ssl/certs/ca-certificates.crt"
print("system certs", open(sysb).read().count("BEGIN CERTIFICATE"))
for f in (sysb, os.environ.get("SSL_CERT_FILE") or "/nonexistent"):
    # Bound read-only, whatever the file's mode says.
    ro = bool(os.statvfs(f).f_flag & os.ST_RDONLY)
    try:
        open(f, "a").close()
        print("writable", f)
    except OSError as e:
        print("read-only" if ro else "rw-mount", f)
try:
    body = urllib.request.urlopen("https://tls.test/", timeout=5).read()
    print("fetched", body.decode().strip())
except Exception as e:
    print("failed", "CERTIFICATE_VERIFY_FAILED" if "CERTIFICATE_VERIFY_FAILED" in str(e) else repr(e))
PY
args=$("$PY" -c 'import json,sys; print(json.dumps({"code": open(sys.argv[1]).read()}))' "$T/tls.py")
CA_FILE=/etc/ssl/stockade/ca.pem

# With the profile's CA: verified and fetched.
mcp_serve a
out=$(mcp_call a 1 "$args")
echo "$out" | grep -q "env $CA_FILE $CA_FILE $CA_FILE" || fail "trust environment: $out"
echo "$out" | grep -q 'fetched tls world' || fail "no verified fetch with the profile's CA: $out"
echo "$out" | grep -qE "system certs [1-9][0-9]" || fail "no system bundle: $out"
echo "$out" | grep -q "read-only /etc/ssl/certs/ca-certificates.crt\\\\n" ||
    fail "system bundle not read-only: $out"
echo "$out" | grep -q "read-only $CA_FILE\\\\n" || fail "$CA_FILE not read-only: $out"
note "profile with tls.extra_ca: https://tls.test verified with Python's default context"

# Another profile (a second mcp-exec --profile), same policy, no extra CA:
# the system bundle is there, the test CA is not.
mkfifo "$T/b.in"
"$MX" --stdio --rules "$R" --profile noca --state-dir "$S" <"$T/b.in" >"$T/b.out" \
    2>>"$T/mx.err" &
PID_b=$!
exec {IN_b}>"$T/b.in"
printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&"$IN_b"
out=$(mcp_call b 1 "$args")
echo "$out" | grep -q 'failed CERTIFICATE_VERIFY_FAILED' ||
    fail "profile without the CA: not a verification failure: $out"
echo "$out" | grep -qE "system certs [1-9][0-9]" || fail "no system bundle without extra_ca: $out"
echo "$out" | grep -q "env $CA_FILE " || fail "no trust environment without extra_ca: $out"
echo "$out" | grep -q "read-only /etc/ssl/certs/ca-certificates.crt\\\\n" ||
    fail "system bundle not read-only: $out"
note "profile without it: the system bundle (read-only), CERTIFICATE_VERIFY_FAILED"

# ------------------------------------------------------------ packages
# pip takes seconds, more on a loaded machine: wait up to a minute a call.
MCP_CALL_TRIES=3000
# pyargs FILE [SESSION]: execute_python's arguments for the code in FILE.
pyargs() {
	"$PY" -c 'import json, sys
a = {"code": open(sys.argv[1]).read(), "timeout_ms": 60000}
if len(sys.argv) > 2:
    a["session_id"] = sys.argv[2]
print(json.dumps(a))' "$@"
}
sid_of() {
	"$PY" -c 'import json, sys
print(json.loads(sys.stdin.readline())["result"]["structuredContent"]["session_id"])'
}
cat >"$T/pip.py" <<'PY'
import os, subprocess, sys
def pip(*args):
    r = subprocess.run(["pip", "install", "--retries", "0", "--timeout", "3", *args],
                       capture_output=True, text=True)
    out = r.stdout + r.stderr
    last = [l for l in out.splitlines() if l.strip()][-2:]
    net = [h for h in ("198.51.100.20", "denied.test") if "Could not fetch URL https://%s/" % h in out]
    print("pip", r.returncode, "unreachable:" + ",".join(net), " | ".join(last))
def probe():
    r = subprocess.run([sys.executable, "-c", "import stockade_tinypkg as t; print(t.VALUE)"],
                       capture_output=True, text=True)
    print("subprocess", r.stdout.strip() or "import-failed")
    try:
        r = subprocess.run(["tinypkg"], capture_output=True, text=True)
        print("script", r.stdout.strip() or "failed")
    except OSError as e:
        print("script not-found", e.errno)
    try:
        import stockade_tinypkg
        print("driver", stockade_tinypkg.VALUE, stockade_tinypkg.__file__)
    except ImportError:
        print("driver import-failed")
    layer = os.environ.get("PYTHONUSERBASE", "/nonexistent")
    found = [n for _, d, _ in os.walk(layer) for n in d if n.startswith("stockade_tinypkg")]
    print("layer", ",".join(found) or "empty")
PY
# What each call does, after pip.py's helpers.
call_code() { cat "$T/pip.py" - >"$T/call.py"; }

# The profile without packages: Debian's marker stands, nothing installs.
printf 'pip("stockade-tinypkg")\nprobe()\n' | call_code
out=$(mcp_call b 2 "$(pyargs "$T/call.py")")
echo "$out" | grep -q 'pip 1 .*PEP 668' ||
    fail "pip without packages.install: not the externally-managed refusal: $out"
echo "$out" | grep -q 'driver import-failed' || fail "installed without packages.install: $out"

# Session A installs; the driver and a subprocess import it from the layer.
printf 'pip("stockade-tinypkg")\nprobe()\n' | call_code
sid_a=$(mcp_call a 2 "$(pyargs "$T/call.py")" | sid_of)
out=$(grep '"id":2[,}]' "$T/a.out")
echo "$out" | grep -q 'pip 0 .*Successfully installed stockade-tinypkg-0.1' ||
    fail "pip install in session A: $out"
echo "$out" | grep -q 'subprocess tiny 0.1' || fail "subprocess does not import it: $out"
echo "$out" | grep -q 'script tiny script' || fail "its console script is not on PATH: $out"
echo "$out" | grep -q "driver tiny 0.1 /opt/stockade/packages/lib/python3[.0-9]*/site-packages/stockade_tinypkg" ||
    fail "the driver does not import it from the layer: $out"
grep -q 'GET /simple/stockade-tinypkg/' "$T/https.ready.log" || fail "the index was not asked"
# The audit lists the layer: name, version, the wheel's sha256.
"$PY" - "$LOG" "$sid_a" "$TINY_SHA" >"$T/audit.err" <<'PY' ||
import glob, json, sys
log, sid, sha = sys.argv[1:]
want = {"name": "stockade-tinypkg", "version": "0.1", "sha256": sha,
        "url": "https://tls.test/packages/stockade_tinypkg-0.1-py3-none-any.whl"}
for path in sorted(glob.glob(log + "/audit-*.log")):
    for line in open(path).read().split("\0", 1)[0].splitlines():
        ev = json.loads(line)
        if ev.get("event") == "code_execution" and ev.get("session_id") == sid:
            if want in ev.get("packages", []) and \
                    ev.get("package_index") == "https://tls.test/simple":
                sys.exit(0)
            print(json.dumps(ev.get("packages")), ev.get("package_index"))
sys.exit(1)
PY
    fail "code_execution without the package: $(cat "$T/audit.err")"
note "packages: pip install in session A, imported by the driver and a subprocess, its script on PATH; audited with its sha256"

# Indexes the policy does not allow, as code may name them.
# By address (past the resolver: the policy drops it) and by name (the
# resolver's NXDOMAIN); -vv for pip to say which URLs it could not fetch.
printf 'pip("-vv", "--timeout", "1", "--index-url", "https://198.51.100.20/simple", "--extra-index-url", "https://denied.test/simple", "stockade-hugepkg")\n' |
    call_code
out=$(mcp_call a 3 "$(pyargs "$T/call.py" "$sid_a")")
echo "$out" | grep -q 'pip 1 unreachable:198.51.100.20,denied.test ' ||
    fail "pip from indexes outside the policy: $out"
expect_event egress_denied dst_ip=198.51.100.20 dst_port=443 rule=policy
note "packages: an --index-url or --extra-index-url outside the L2 policy is out of reach"

# A package that unpacks past the workspace cap fails; the session lives on.
cat >"$T/huge.py" <<'PY'
pip("stockade-hugepkg")
st = os.statvfs("/opt/stockade/packages")
print("cap", st.f_blocks * st.f_frsize, "same", os.statvfs("/workspace").f_fsid == st.f_fsid)
probe()
# pip leaves what it had unpacked; removing it gives the space back.
import shutil
shutil.rmtree(os.environ["PYTHONUSERBASE"] + "/lib/python%d.%d/site-packages/stockade_hugepkg" % sys.version_info[:2])
print("free", os.statvfs("/workspace").f_bavail * os.statvfs("/workspace").f_frsize > 3 << 20)
PY
call_code <"$T/huge.py"
out=$(mcp_call a 5 "$(pyargs "$T/call.py" "$sid_a")")
echo "$out" | grep -q 'pip 1 .*No space left on device' || fail "huge package: $out"
echo "$out" | grep -q "cap $WS_CAP same True" || fail "the layer is not on the workspace's cap: $out"
echo "$out" | grep -q 'driver tiny 0.1' || fail "session A after the huge package: $out"
echo "$out" | grep -q 'free True' || fail "the huge package's remains, removed, left no room: $out"
note "packages: a wheel unpacking past the 4 MiB workspace cap fails with ENOSPC"

# Another session, while A lives, and the host: neither has it.
printf 'probe()\n' | call_code
out=$(mcp_call a 6 "$(pyargs "$T/call.py")")
echo "$out" | grep -q 'subprocess import-failed' && echo "$out" | grep -q 'driver import-failed' &&
    echo "$out" | grep -q 'layer empty' || fail "a concurrent session sees A's package: $out"
"$PY" -c 'import stockade_tinypkg' 2>/dev/null && fail "the host imports stockade_tinypkg"
[ -z "$(find /usr/lib/python3* /usr/local/lib/python3* "$HOME/.local" -name 'stockade_tinypkg*' \
    2>/dev/null)" ] || fail "stockade_tinypkg on the host"
# A's session ends; its layer goes with it, and a new session starts bare.
printf '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"close_session","arguments":{"session_id":"%s"}}}\n' \
    "$sid_a" >&"$IN_a"
mcp_call a 8 "$(pyargs "$T/call.py")" >"$T/new.out"
grep -q '"id":7[,}]' "$T/a.out" || fail "close_session: no reply"
grep -q 'driver import-failed' "$T/new.out" && grep -q 'layer empty' "$T/new.out" ||
    fail "a new session sees the package: $(cat "$T/new.out")"
[ -z "$(find "$S" -name 'stockade_tinypkg*' 2>/dev/null)" ] ||
    fail "the closed session's layer is still in $S"
note "packages: invisible to a concurrent and a new session and the host; gone with the session"

# mcp-exec run has the layer too, and audits it.
"$MX" run --rules "$R" --state-dir "$S" --timeout-ms 60000 -- /bin/sh -c \
    'pip install stockade-tinypkg >/dev/null 2>&1 && python3 -c "import stockade_tinypkg as t; print(t.VALUE)"' \
    >"$T/run.out" 2>>"$T/mx.err" || fail "mcp-exec run: $(tail -3 "$T/mx.err")"
grep -q '"stdout": *"tiny 0.1\\n"' "$T/run.out" || fail "mcp-exec run with packages: $(cat "$T/run.out")"
expect_event code_execution tool=run "packages~$TINY_SHA"
note "packages: mcp-exec run installs into its sandbox's layer, audited the same way"

eval "exec $IN_a>&- $IN_b>&-"
wait "$PID_a" || fail "mcp-exec a did not stop cleanly"
wait "$PID_b" || fail "mcp-exec b did not stop cleanly"
egress_finish
note "tls: audit log verifies"
