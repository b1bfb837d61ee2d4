#!/bin/bash
# The trust store of a networked sandbox: an HTTPS host in the world with a
# certificate from a CA this test makes.  An L2 session whose profile names
# that CA (tls.extra_ca) verifies and fetches it with Python's default
# context; a session of a profile without it fails verification although
# the host's bundle is there, read-only.  `stockade rules check` and
# mcp-exec's load refuse an extra_ca that is not a PEM of certificates.
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

# tls.test on its own documentation address, HTTPS with the test CA's cert.
ip -n "$NS_W" addr add "$TLS_ADDR/32" dev w0
echo "$TLS_ADDR tls.test" >>"$HOSTS"
kill -HUP "$DNSMASQ_PID"
cat >"$T/https.py" <<'PY'
import http.server, ssl, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"tls world\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
srv = http.server.ThreadingHTTPServer((sys.argv[1], 443), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[2], sys.argv[3])
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
open(sys.argv[4], "w").write("ready\n")
srv.serve_forever()
PY
ip netns exec "$NS_W" "$PY" "$T/https.py" "$TLS_ADDR" "$P/host.pem" "$P/host.key" \
    "$T/https.ready" 2>>"$T/https.err" &
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

eval "exec $IN_a>&- $IN_b>&-"
wait "$PID_a" || fail "mcp-exec a did not stop cleanly"
wait "$PID_b" || fail "mcp-exec b did not stop cleanly"
egress_finish
note "tls: audit log verifies"
