#!/bin/bash
# HTTP rules and an injected credential (issue 38): a policy lets the
# sandbox GET /v1/reports/* on api.test:443 with a token it never sees.
# netguard runs Squid (squid-openssl) in the uplink namespace and turns the
# sandbox's connections to api.test's pinned addresses into connections to
# it; Squid shows a certificate of the deployment CA, checks each request,
# adds the token and connects to the real server, verifying it.  The fake
# API answers only requests that carry the token.  Then every way around
# it fails, for its own reason: another method or path, dot segments,
# another Host (domain fronting), an Upgrade (WebSocket, h2c), CONNECT, a
# redirect to another host, plain TCP, UDP to the port (QUIC), a reply
# header echoing the token; and rules check refuses a secret others can
# read.  From a real sandbox (mcp-exec) the GET works and the token is in
# nothing the code can read; every request is an egress_http record; the
# proxy comes back after a reload and a restart.
. "$(dirname "$0")/lib.sh"

need_netguard
[ -x /usr/sbin/squid ] || skip "squid-openssl not installed"
command -v curl >/dev/null || skip "curl not installed"
API=203.0.113.30		# api.test
OTHER=203.0.113.31		# other.test: not in the policy
TOKEN="s3cr3t-Report.Token_$$"
topo_up
start_auditd
for a in $API $OTHER; do ip -n "$NS_W" addr add "$a/32" dev w0; done
printf '%s api.test\n%s other.test\n' "$API" "$OTHER" >>"$HOSTS"
kill -HUP "$DNSMASQ_PID"

# Two CAs: the API's own, and the deployment CA only sandboxes trust.
P="$T/pki"
mkdir -p "$P"
for ca in api egress; do
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	    -subj "/CN=stockade test $ca CA" -keyout "$P/$ca-ca.key" -out "$P/$ca-ca.pem" \
	    2>"$P/err" || fail "$ca CA: $(cat "$P/err")"
done
chmod 600 "$P/egress-ca.key"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=api.test" \
    -keyout "$P/api.key" -out "$P/api.csr" 2>"$P/err" || fail "CSR: $(cat "$P/err")"
printf 'subjectAltName=DNS:api.test,DNS:other.test\nbasicConstraints=CA:FALSE\n' >"$P/ext"
openssl x509 -req -in "$P/api.csr" -CA "$P/api-ca.pem" -CAkey "$P/api-ca.key" \
    -CAcreateserial -days 2 -extfile "$P/ext" -out "$P/api.pem" 2>"$P/err" ||
    fail "sign: $(cat "$P/err")"
mkdir -p "$T/secret"
printf '%s\n' "$TOKEN" >"$T/secret/token"
chmod 600 "$T/secret/token"

# The fake API, on api.test and other.test: every request is logged with
# whether it carried the token; only those that do are answered.
cat >"$T/api.py" <<'PY'
import http.server, ssl, sys, threading
token = open(sys.argv[1]).read().strip()
log = open(sys.argv[2], "a", buffering=1)
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True	# headers and body are two writes
    def handle_one(self):
        auth = self.headers.get("Authorization", "")
        log.write("%s %s %s %s host=%s\n" % (self.server.name, self.command, self.path,
                  "token" if auth == "Bearer " + token else "no-token", self.headers.get("Host")))
        if auth != "Bearer " + token:
            return self.reply(401, b"no credential\n")
        if self.path == "/v1/reports/redirect":
            return self.reply(302, b"", [("Location", "https://other.test/v1/reports/1")])
        if self.path == "/v1/reports/echo":
            return self.reply(200, b"echo\n", [("X-Echo", auth)])
        if self.path == "/v1/reports/echo-location":
            return self.reply(302, b"", [("Location", "https://api.test/?t=" + token)])
        self.reply(200, ("report %s %s\n" % (self.command, self.path)).encode())
    def reply(self, code, body, headers=()):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    do_GET = do_POST = do_DELETE = do_HEAD = do_PUT = handle_one
    def log_message(self, *a):
        pass
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[3], sys.argv[4])
for name, addr in (("api", sys.argv[5]), ("other", sys.argv[6])):
    srv = http.server.ThreadingHTTPServer((addr, 443), H)
    srv.name = name
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
open(sys.argv[7], "w").write("ready\n")
threading.Event().wait()
PY
ip netns exec "$NS_W" "$PY" "$T/api.py" "$T/secret/token" "$T/api.log" "$P/api.pem" \
    "$P/api.key" "$API" "$OTHER" "$T/api.ready" 2>>"$T/api.err" &
disown $!
for _ in $(seq 1 100); do [ -s "$T/api.ready" ] && break; sleep 0.05; done
[ -s "$T/api.ready" ] || fail "fake API did not start: $(cat "$T/api.err")"

# The shipped rules, for netguard and for mcp-exec (a real sandbox, below).
mcp_rules
sed -i "s|^\(  netguard_socket:\).*|\1 $NG_SOCK|" "$R/mcp-exec.yaml"
sed -i "s|^network:.*|network: api|" "$R/profiles/default.yaml"
printf 'tls:\n  extra_ca: %s\n' "$P/egress-ca.pem" >>"$R/profiles/default.yaml"
PROXY_DIR="/run/stockade/ngproxy-$$"
cat >>"$R/netguard.yaml" <<EOF
http_proxy:
  ca_cert: $P/egress-ca.pem
  ca_key: $P/egress-ca.key
  dir: $PROXY_DIR
EOF
policy api L2 "allow:
  - names: [api.test]
    ports: [443]
  - names: [allowed.test]
    ports: [80]
http:
  - host: api.test
    ca_file: $P/api-ca.pem
    rules:
      - methods: [GET, HEAD]
        paths: [\"/v1/reports/*\"]
    credential:
      name: reports-token
      header: Authorization
      prefix: \"Bearer \"
      file: $T/secret/token
resolver:
  upstreams: [192.0.2.53]"

# A secret others can read is refused by rules check; 0600 passes.
chmod 644 "$T/secret/token"
out=$("$STOCKADE" rules check "$R" 2>&1) && fail "rules check took a 0644 secret: $out"
echo "$out" | grep -q "readable by no one else" || fail "rules check, 0644 secret: $out"
chmod 600 "$T/secret/token"
out=$("$STOCKADE" rules check "$R" 2>&1) || fail "rules check: $out"
# ... and http rules without the deployment CA that netguard's proxy needs.
sed '/^http_proxy:$/,$d' "$R/netguard.yaml" >"$T/ng.yaml"
cp "$R/netguard.yaml" "$T/ng.yaml.good"
cp "$T/ng.yaml" "$R/netguard.yaml"
out=$("$STOCKADE" rules check "$R" 2>&1) && fail "rules check took http rules without a CA: $out"
echo "$out" | grep -q "http_proxy: ca_cert and ca_key are needed" || fail "rules check, no CA: $out"
cp "$T/ng.yaml.good" "$R/netguard.yaml"
note "rules check refuses a secret file others can read, and http rules without the proxy's CA"

start_netguard
sandbox sb api
for _ in $(seq 1 100); do
	ip netns exec "$NS_G" ss -ltn 2>/dev/null | grep -q ':15080 ' && break
	sleep 0.1
done
ip netns exec "$NS_G" ss -ltn | grep -q ':15080 ' ||
    fail "squid does not listen: $(grep -E "FATAL|ERROR" "$PROXY_DIR/log/cache.log" 2>&1 | head -5)"
[ "$(stat -c '%a %U' "$PROXY_DIR/squid.conf")" = "600 root" ] ||
    fail "squid.conf is $(stat -c '%a %U' "$PROXY_DIR/squid.conf")"

# req ARGS...: curl from the sandbox, trusting only the deployment CA (as
# a session's trust store does); prints "CODE VERSION|X-Squid-Error|body".
req() {
	in_ns sb curl -sS --max-time 10 --cacert "$P/egress-ca.pem" -D "$T/hdr" \
	    -o "$T/body" -w '%{http_code} %{http_version}' "$@" 2>"$T/curl.err" || true
	cat "$T/hdr" "$T/body" >>"$T/seen.log" 2>/dev/null	# all the code saw
	printf '|%s|%s' "$(tr -d '\r' <"$T/hdr" 2>/dev/null | sed -n 's/^X-Squid-Error: \([A-Z_]*\).*/\1/p')" \
	    "$(head -c 200 "$T/body" 2>/dev/null | tr '\n' ' ')"
	: >"$T/hdr"; : >"$T/body"
}
# expect_req WANT ARGS...: req's output matches WANT (grep -E).
expect_req() {
	local want=$1 out; shift
	out=$(req "$@")
	echo "$* -> $out" >>"$T/probe.log"
	echo "$out" | grep -qE "$want" || fail "curl $*: expected /$want/, got: $out $(cat "$T/curl.err")"
}

expect_req '^200 1.1\|\|report GET /v1/reports/1 $' https://api.test/v1/reports/1
grep -q '^api GET /v1/reports/1 token host=api.test' "$T/api.log" ||
    fail "the API did not get the token: $(cat "$T/api.log")"
expect_event egress_http session_id=s-sb method=GET host=api.test port=443 \
    path=/v1/reports/1 status=200 decision=allow rule=r0 credential=reports-token
note "GET https://api.test/v1/reports/1 through the proxy: 200, the token added on the way"

# L7_BENCH=N (make bench): N GETs through the proxy from the sandbox,
# against N direct from the uplink namespace with the token set by hand
# (what the proxy does, minus the proxy); curl's time_total, so process
# starts do not count.  Prints medians and their ratio, then stops.
if [ -n "${L7_BENCH:-}" ]; then
	for _ in $(seq 1 "$L7_BENCH"); do
		in_ns sb curl -s -o /dev/null --cacert "$P/egress-ca.pem" -w '%{time_total}\n' \
		    https://api.test/v1/reports/1 >>"$T/proxied"
		ip netns exec "$NS_G" curl -s -o /dev/null --cacert "$P/api-ca.pem" \
		    --resolve "api.test:443:$API" -H "Authorization: Bearer $TOKEN" \
		    -w '%{time_total}\n' https://api.test/v1/reports/1 >>"$T/direct"
	done
	"$PY" - "$T/direct" "$T/proxied" <<'PY'
import statistics, sys
d, p = ([float(x) * 1000 for x in open(f)] for f in sys.argv[1:3])
md, mp = statistics.median(d), statistics.median(p)
print("bench l7: %d GETs, p50 direct %.2f ms, through the proxy %.2f ms (+%.2f ms), ratio %.2f"
      % (len(d), md, mp, mp - md, mp / md))
PY
	egress_finish
	exit 0
fi

R403='^403 1.1\|ERR_STOCKADE_'
expect_req "${R403}RULE\|stockade-egress: rule" -X DELETE https://api.test/v1/reports/1
expect_req "${R403}RULE\|stockade-egress: rule" -X POST -d x https://api.test/v1/reports/1
expect_req "${R403}RULE\|stockade-egress: rule" https://api.test/admin
expect_req "${R403}PATH\|stockade-egress: path" --path-as-is https://api.test/v1/reports/../admin
expect_req "${R403}PATH\|stockade-egress: path" https://api.test/v1/reports/%2e%2e/admin
expect_req "${R403}PATH\|stockade-egress: path" https://api.test/v1/reports/..%2fadmin
expect_event egress_http method=DELETE path=/v1/reports/1 status=403 decision=deny rule=rule
expect_event egress_http method=GET path=/admin status=403 decision=deny rule=rule
expect_event egress_http method=GET status=403 decision=deny rule=path
note "another method, another path, dot segments (plain or encoded): 403 with the reason, audited"

# Domain fronting: TLS to api.test, Host naming another; and SNI naming
# another host on api.test's address (the proxy's certificate is api.test's).
expect_req "${R403}HOST\|stockade-egress: host" -H 'Host: other.test' https://api.test/v1/reports/1
expect_req '^000 ' --connect-to other.test:443:api.test:443 https://other.test/v1/reports/1
grep -q "SSL: no alternative certificate subject name matches target host name 'other.test'" \
    "$T/curl.err" || fail "SNI other.test: $(cat "$T/curl.err")"
expect_event egress_http status=403 decision=deny rule=host
note "domain fronting: Host other than api.test refused; SNI other.test fails verification"

expect_req "${R403}UPGRADE\|stockade-egress: upgrade" -H 'Connection: Upgrade' \
    -H 'Upgrade: websocket' -H 'Sec-WebSocket-Version: 13' -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' \
    https://api.test/v1/reports/1
expect_req "${R403}UPGRADE\|stockade-egress: upgrade" -H 'Connection: Upgrade, HTTP2-Settings' \
    -H 'Upgrade: h2c' -H 'HTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA' https://api.test/v1/reports/1
expect_req '^200 1.1\|' --http2 https://api.test/v1/reports/1
expect_event egress_http status=403 decision=deny rule=upgrade
note "WebSocket and h2c upgrades refused; HTTP/2 over TLS is not offered (1.1)"

expect_req '^302 1.1\|\|' https://api.test/v1/reports/redirect
# Followed by the code itself: other.test is not a name it may resolve.
expect_req '^302 ' -L https://api.test/v1/reports/redirect
grep -q 'Could not resolve host: other.test' "$T/curl.err" ||
    fail "following the redirect: $(cat "$T/curl.err")"
grep -q '^other ' "$T/api.log" && fail "other.test was reached: $(grep '^other' "$T/api.log")"
note "a redirect to another host: passed to the code, not followed; other.test unreachable"

# The token in a reply header: dropped (X-Echo), or the reply refused
# (Location, a header the code may see).
expect_req '^200 1.1\|\|echo $' https://api.test/v1/reports/echo
grep -qi "$TOKEN" "$T/seen.log" && fail "the token reached the sandbox: $(grep -i "$TOKEN" "$T/seen.log")"
grep -qi '^X-Echo' "$T/seen.log" && fail "a reply header outside the list reached the sandbox"
expect_req "^403 1.1\|ERR_STOCKADE_CREDENTIAL_ECHO\|stockade-egress: credential-echo" \
    https://api.test/v1/reports/echo-location
expect_event egress_http path=/v1/reports/echo-location status=403 decision=deny rule=credential-echo \
    credential=reports-token
note "a reply header echoing the token: dropped, or the reply refused (403 credential-echo)"

# CONNECT through the proxy, plain TCP to the port, UDP (QUIC) to it.
cat >"$T/raw.py" <<'PY'
import socket, ssl, sys
mode, ca = sys.argv[1], sys.argv[2]
try:
    s = socket.create_connection(("api.test", 443), timeout=5)
    if mode == "connect":
        c = ssl.create_default_context(cafile=ca).wrap_socket(s, server_hostname="api.test")
        c.sendall(b"CONNECT 203.0.113.30:22 HTTP/1.1\r\nHost: 203.0.113.30:22\r\n\r\n")
        print(c.recv(200).decode(errors="replace").splitlines()[0])
    elif mode == "plain":
        s.sendall(b"GET /v1/reports/1 HTTP/1.1\r\nHost: api.test\r\n\r\n")
        data = s.recv(4096)
        print("report" in data.decode(errors="replace") and "answered" or "no answer", len(data))
    else:
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.sendto(b"quic-ish", ("api.test", 443))
        print("sent")
except Exception as e:
    print("failed", type(e).__name__)
PY
out=$(in_ns sb "$PY" "$T/raw.py" connect "$P/egress-ca.pem")
echo "$out" | grep -qE '^HTTP/1.1 (400|403|405) ' || fail "CONNECT through the proxy: $out"
expect_event egress_http method=CONNECT decision=deny rule=proxy
out=$(in_ns sb "$PY" "$T/raw.py" plain "$P/egress-ca.pem")
echo "$out" | grep -qE '^(no answer|failed)' || fail "plain TCP to api.test:443: $out"
out=$(in_ns sb "$PY" "$T/raw.py" udp "$P/egress-ca.pem")
expect_event egress_denied dst_ip=$API dst_port=443 protocol=udp rule=policy
note "CONNECT refused, plain TCP gets no answer, UDP to api.test:443 dropped (egress_denied)"

# A real sandbox (mcp-exec, the profile's trust store holding the
# deployment CA): the GET works with Python's defaults; the token is in
# none of what the code can read: its environment, every /proc entry it
# sees (the proxy is not among them: another PID namespace), the secret
# file and the proxy's configuration (not in its mount namespace).
cat >"$T/inside.py" <<PY
import glob, os, urllib.request
print("get", urllib.request.urlopen("https://api.test/v1/reports/1", timeout=10).read().decode().strip())
seen = [repr(dict(os.environ))]
for d in glob.glob("/proc/[0-9]*"):
    for f in ("cmdline", "environ"):
        try:
            seen.append(open(d + "/" + f, "rb").read().decode(errors="replace"))
        except OSError:
            pass
print("procs", len(glob.glob("/proc/[0-9]*")), "squid" if any("squid" in s for s in seen) else "no-squid")
for path in ("$T/secret/token", "$PROXY_DIR/squid.conf", "$PROXY_DIR/log/access.log"):
    try:
        seen.append(open(path).read())
        print("read", path)
    except OSError as e:
        print("unreadable", path, type(e).__name__)
print("dump", "\n".join(seen).replace("\n", " ")[:20000])
PY
args=$("$PY" -c 'import json,sys; print(json.dumps({"code": open(sys.argv[1]).read()}))' "$T/inside.py")
mcp_serve a
out=$(mcp_call a 1 "$args")
echo "$out" | grep -q 'get report GET /v1/reports/1' || fail "GET from a sandbox: $out"
echo "$out" | grep -q 'no-squid' || fail "the sandbox sees the proxy's process: $out"
for f in "$T/secret/token" "$PROXY_DIR/squid.conf" "$PROXY_DIR/log/access.log"; do
	echo "$out" | grep -q "unreadable $f FileNotFoundError" || fail "the sandbox reads $f: $out"
done
echo "$out" | grep -q "$TOKEN" && fail "the token is readable inside the sandbox"
# The whole dump came back (the output cap cut nothing in which the token
# could hide); the session, for its record.
sid=$(echo "$out" | "$PY" -c 'import json, sys
sc = json.loads(sys.stdin.readline())["result"]["structuredContent"]
assert sc["truncated"] is False, "output truncated"
print(sc["session_id"])') || fail "the sandbox's dump: $out"
expect_event egress_http session_id="$sid" method=GET path=/v1/reports/1 decision=allow \
    credential=reports-token
eval "exec $IN_a>&-"
wait "$PID_a" || fail "mcp-exec did not stop cleanly"
# No core file of the proxy can hold the token.
spid=$(pgrep -f "squid -N -n netguard$NG_PID " | head -1)
[ -n "$spid" ] || fail "no squid process of netguard $NG_PID"
grep -q '^Max core file size *0 *0 ' "/proc/$spid/limits" ||
    fail "squid may dump core: $(grep 'core' "/proc/$spid/limits")"
# ... and holds none of netguard's descriptors (namespaces, netlink).
! ls -l "/proc/$spid/fd" | grep -q 'net:\[' || fail "squid holds a network namespace descriptor"
note "a real sandbox: GET works; the token is not in its environment, /proc, or files; squid dumps no core"

# Never the token where the code or the logs could read it.
grep -q "$TOKEN" "$PROXY_DIR/log/access.log" && fail "the token is in Squid's access log"
grep -q "$TOKEN" "$LOG"/audit-*.log && fail "the token is in the audit log"
grep -c ' ERR_STOCKADE_' "$PROXY_DIR/log/access.log" >/dev/null ||
    fail "refusals are not in the access log"
# Every request the API saw carried the token and came through the proxy.
grep -v ' token host=api.test$' "$T/api.log" && fail "the API saw a request without the token"

# A reload (SIGHUP) and a restart: Squid comes back on the same ports, the
# sandbox's redirect with it (restored from state_dir).
squid_up() {
	for _ in $(seq 1 100); do
		ip netns exec "$NS_G" ss -ltn 2>/dev/null | grep -q ':15080 ' && return 0
		sleep 0.1
	done
	fail "squid does not listen after $1"
}
# The reload also makes the paths sensitive: the record holds a hash.
sed -i 's|^    ca_file:|    paths_sensitive: true\n&|' "$R/network/api.yaml"
grep -q 'paths_sensitive: true' "$R/network/api.yaml" || fail "sed missed paths_sensitive"
kill -HUP "$NG_PID"
sleep 0.5
squid_up reload
expect_req '^200 1.1\|\|report GET /v1/reports/1[?]q=x $' 'https://api.test/v1/reports/1?q=x'
expect_event egress_http decision=allow \
    path_sha256="$(printf %s '/v1/reports/1?q=x' | sha256sum | cut -d' ' -f1)"
no_event egress_http 'path=/v1/reports/1?q=x'
stop_netguard || fail "netguard exit status $? on SIGTERM"
start_netguard
squid_up restart
expect_req '^200 1.1\|\|report GET /v1/reports/1 $' https://api.test/v1/reports/1
note "after a reload (paths now sensitive: a sha256 in the record) and a restart: the proxy is back, the GET works"

egress_finish
# Every line of Squid's log was tied to its sandbox and audited.
! grep -q "access log lines not audited" "$T/netguard.err" ||
    fail "$(grep "not audited" "$T/netguard.err")"
note "l7: the token is in no log; every request audited; audit log verifies"
