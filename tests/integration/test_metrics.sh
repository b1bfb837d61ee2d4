#!/bin/bash
# GET /metrics on mcp-exec --http: after one ok, one failing, one timed-out
# and one refused execute_python, the exposition parses as Prometheus text
# format 0.0.4 (HELP/TYPE/sample lines, labels, values, cumulative
# histograms ending in +Inf == _count), holds the expected counts and no
# principal or session id; a foreign Host gets 403, POST 405, and with
# bearer tokens no token 401.  Then netguard's drops: a stand-in netguard
# reports this server's sandboxes and another's (left out), and one that
# answers too late leaves the family out without stalling the scrape.
. "$(dirname "$0")/lib.sh"

NG_PID=""

stop_ng() {
	[ -z "$NG_PID" ] || kill "$NG_PID" 2>/dev/null || true
	NG_PID=""
}
trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" >&2; stop_mx || true; stop_ng; cleanup' EXIT

code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }

# The exposition checker, shared by both halves: metrics.py FILE checks
# the format and prints the samples as JSON {"name{k=v,...}": value}.
cat >"$T/metrics.py" <<'EOF'
import json, re, sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LNAME = r"[a-zA-Z_][a-zA-Z0-9_]*"
LVAL = r'"(?:[^"\\\n]|\\[\\"n])*"'
LABEL = re.compile(r"(%s)=(%s)" % (LNAME, LVAL))
SAMPLE = re.compile(r"^(%s)(?:\{(%s=%s(?:,%s=%s)*)?\})? (\S+)(?: -?\d+)?$"
                    % (NAME, LNAME, LVAL, LNAME, LVAL))
FLOAT = re.compile(r"^(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?Inf|NaN)$")
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")

def unescape(v):
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), v[1:-1])

def parse(text):
    assert text.endswith("\n"), "no final newline"
    helps, types, samples, done, current = {}, {}, {}, set(), None
    for line in text[:-1].split("\n"):
        assert "sess_" not in line and "user:" not in line, ("names someone", line)
        assert line == line.strip() and line, ("blank or padded line", line)
        if line.startswith("# HELP "):
            name, _, help = line[7:].partition(" ")
            assert re.fullmatch(NAME, name) and help, line
            assert name not in helps, ("HELP twice", line)
            helps[name] = help
            continue
        if line.startswith("# TYPE "):
            name, _, typ = line[7:].partition(" ")
            assert re.fullmatch(NAME, name) and typ in TYPES, line
            assert name not in types and name not in done, ("TYPE twice or late", line)
            assert typ != "counter" or name.endswith("_total"), ("counter name", line)
            types[name] = typ
            continue
        if line.startswith("#"):
            continue            # a comment
        m = SAMPLE.match(line)
        assert m, ("not a sample line", line)
        name, labels, value = m.group(1), m.group(2), m.group(3)
        assert FLOAT.match(value), ("value", line)
        family = name
        for suffix in ("_bucket", "_sum", "_count"):
            if name.endswith(suffix) and types.get(name[:-len(suffix)]) == "histogram":
                family = name[:-len(suffix)]
        assert family in types, ("sample before its TYPE", line)
        assert family in helps, ("no HELP", line)
        # A family's lines stay together.
        if family != current:
            assert family not in done, ("family split", line)
            if current:
                done.add(current)
            current = family
        lab = [(k, unescape(v)) for k, v in LABEL.findall(labels or "")]
        assert len(set(k for k, _ in lab)) == len(lab), ("label twice", line)
        key = name + "{" + ",".join("%s=%s" % kv for kv in sorted(lab)) + "}"
        assert key not in samples, ("sample twice", line)
        samples[key] = float(value)
    # Histograms: buckets per series ascending, cumulative, +Inf == _count.
    for fam, typ in types.items():
        if typ != "histogram":
            continue
        series = {}
        for key, v in samples.items():
            if key.startswith(fam + "_bucket{"):
                lab = dict(kv.split("=", 1) for kv in key[len(fam) + 8:-1].split(","))
                le = lab.pop("le")
                rest = ",".join("%s=%s" % kv for kv in sorted(lab.items()))
                series.setdefault(rest, []).append((float(le), v))
        assert series, ("histogram without buckets", fam)
        for rest, buckets in series.items():
            les = [le for le, _ in buckets]
            assert les == sorted(les) and les[-1] == float("inf"), (fam, rest, les)
            counts = [n for _, n in sorted(buckets)]
            assert all(a <= b for a, b in zip(counts, counts[1:])), ("not cumulative", fam, rest)
            assert samples[fam + "_count{" + rest + "}"] == counts[-1], ("+Inf != _count", fam, rest)
            assert fam + "_sum{" + rest + "}" in samples, ("no _sum", fam, rest)
    return types, samples, text

if __name__ == "__main__":
    types, samples, _ = parse(open(sys.argv[1]).read())
    json.dump({"types": types, "samples": samples}, sys.stdout)
EOF

# A stand-in for netguard's control socket: attaches succeed (and are
# remembered), status reports them with drop counters plus a sandbox of
# another mcp-exec; with $T/ng-slow present, status answers after 2 s.
cat >"$T/fake_ng.py" <<'EOF'
import json, os, socket, socketserver, struct, sys, time

path, tmp = sys.argv[1], sys.argv[2]
attached = []

class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
            chunk, fds, _, _ = socket.recv_fds(self.request, 65536, 4)
            for fd in fds:
                os.close(fd)
            if not chunk:
                return
            data += chunk
        msg = json.loads(data[4:])
        reply = {"ok": True}
        if msg["type"] == "attach":
            attached.append({"session_id": msg["session_id"], "principal": msg["principal"],
                             "sandbox": msg["sandbox"], "policy": msg["policy"],
                             "dropped": {"metadata": 2, "linklocal": 0, "mapped": 0,
                                         "dns": 1, "internal": 0, "policy": 5}})
        elif msg["type"] == "detach":
            attached[:] = [a for a in attached if a["sandbox"] != msg["sandbox"]]
        elif msg["type"] == "status":
            if os.path.exists(tmp + "/ng-slow"):
                time.sleep(2)
            reply = {"ok": True, "program": "netguard", "policies": [], "pool_free": 1,
                     "attached": attached + [{"session_id": "sess_" + "f" * 32,
                                              "principal": "user:someone-else",
                                              "sandbox": "0" * 16, "policy": "mirror",
                                              "dropped": {"metadata": 1000, "policy": 1000}}]}
        body = json.dumps(reply).encode()
        try:
            self.request.sendall(struct.pack(">I", len(body)) + body)
        except OSError:
            pass

class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

if os.path.exists(path):
    os.unlink(path)
Server(path, Handler).serve_forever()
EOF

start_auditd
mcp_rules

# ---------------------------------------------------------------- no tokens
start_mx
BASE="http://127.0.0.1:$PORT"
[ "$(code -H 'Host: evil.example:80' "$BASE/metrics")" = 403 ] || fail "foreign Host is not 403"
[ "$(code -H 'Origin: http://evil.example' "$BASE/metrics")" = 403 ] || fail "foreign Origin is not 403"
[ "$(code -X POST -d '' "$BASE/metrics")" = 405 ] || fail "POST /metrics is not 405"
ctype=$(curl -s -o /dev/null -w '%{content_type}' "$BASE/metrics")
[ "$ctype" = "text/plain; version=0.0.4; charset=utf-8" ] || fail "Content-Type: $ctype"
note "/metrics: foreign Host and Origin 403, POST 405, text/plain; version=0.0.4"

"$PY" - "$PORT" "$T" <<'EOF' || fail "metrics after calls (see above)"
import http.client, json, sys
sys.path.insert(0, sys.argv[2])
from metrics import parse

port = int(sys.argv[1])

def post(msg, sid=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    h = {"Content-Type": "application/json", "Accept": "application/json"}
    if sid:
        h["Mcp-Session-Id"] = sid
    c.request("POST", "/mcp", json.dumps(msg), h)
    r = c.getresponse()
    body = r.read()
    assert r.status in (200, 202), (r.status, body)
    return r, json.loads(body) if body else None

def call(sid, n, name, args):
    _, m = post({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                 "params": {"name": name, "arguments": args}}, sid)
    return m["result"]

def scrape():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/metrics")
    r = c.getresponse()
    body = r.read().decode()
    assert r.status == 200, (r.status, body)
    return parse(body)

types, s, _ = scrape()
assert s["stockade_up{}"] == 1 and s["stockade_sessions_live{}"] == 0, s
assert any(k.startswith("stockade_build_info{version=") for k in s), s

r, m = post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
             "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"}}})
sid = r.getheader("Mcp-Session-Id")
post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)

ok = call(sid, 1, "execute_python", {"code": "print(6 * 7)  # no ctypes here"})
assert not ok["isError"] and ok["structuredContent"]["stdout"] == "42\n", ok
sandbox = ok["structuredContent"]["session_id"]
bad = call(sid, 2, "execute_python", {"session_id": sandbox, "code": "import sys; sys.exit(1)"})
assert bad["isError"] and bad["structuredContent"]["exit_code"] == 1, bad
slow = call(sid, 3, "execute_python", {"timeout_ms": 500, "code": "import time; time.sleep(30)"})
assert slow["structuredContent"]["timed_out"], slow
refused = call(sid, 4, "execute_python",
               {"code": "import base64\nexec(base64.b64decode('cHJpbnQoMSk='))"})
assert refused["isError"] and "PY-EXEC-001" in refused["content"][0]["text"], refused
closed = call(sid, 5, "close_session", {"session_id": sandbox})
assert not closed["isError"], closed

types, s, text = scrape()
want = {
    "stockade_sessions_live{}": 1,
    "stockade_sessions_created_total{}": 2,
    "stockade_sessions_closed_total{reason=closed}": 1,
    "stockade_sessions_closed_total{reason=expired}": 0,
    "stockade_sessions_closed_total{reason=lost}": 0,
    "stockade_sessions_closed_total{reason=stopped}": 0,
    "stockade_sessions_closed_total{reason=other}": 0,
    "stockade_calls_total{outcome=ok,tool=execute_python}": 1,
    "stockade_calls_total{outcome=error,tool=execute_python}": 1,
    "stockade_calls_total{outcome=timeout,tool=execute_python}": 1,
    "stockade_calls_total{outcome=refused,tool=execute_python}": 1,
    "stockade_calls_total{outcome=cancelled,tool=execute_python}": 0,
    "stockade_calls_total{outcome=ok,tool=run_command}": 0,
    "stockade_call_duration_seconds_count{tool=execute_python}": 3,
    "stockade_call_duration_seconds_count{tool=run_command}": 0,
    "stockade_timeouts_total{}": 1,
    "stockade_oom_kills_total{}": 0,
    # The shipped profile has no pool: nothing built ahead, nothing counted.
    "stockade_pool_ready{}": 0,
    # No pool to fill: as warm as it gets from the start.
    "stockade_pool_warm{}": 1,
    "stockade_pool_hits_total{}": 0,
    "stockade_pool_misses_total{}": 0,
    "stockade_pool_discarded_total{}": 0,
    # Two sessions, each built once on the request path.
    "stockade_sandbox_builds_total{}": 2,
    "stockade_pattern_hits_total{action=flag,rule=PY-NATIVE-001}": 1,
    "stockade_pattern_hits_total{action=deny,rule=PY-EXEC-001}": 1,
    "stockade_audit_events_lost_total{}": 0,
}
for k, v in want.items():
    assert s.get(k) == v, (k, s.get(k), text)
want_types = {"stockade_up": "gauge", "stockade_build_info": "gauge",
              "stockade_sessions_live": "gauge", "stockade_sessions_created_total": "counter",
              "stockade_sessions_closed_total": "counter", "stockade_calls_total": "counter",
              "stockade_call_duration_seconds": "histogram", "stockade_timeouts_total": "counter",
              "stockade_oom_kills_total": "counter", "stockade_pattern_hits_total": "counter",
              "stockade_pool_ready": "gauge", "stockade_pool_warm": "gauge",
              "stockade_pool_hits_total": "counter",
              "stockade_pool_misses_total": "counter",
              "stockade_pool_discarded_total": "counter",
              "stockade_sandbox_builds_total": "counter",
              "stockade_sandbox_build_seconds_total": "counter",
              "stockade_audit_queue_depth": "gauge", "stockade_audit_lag_seconds": "gauge",
              "stockade_audit_events_lost_total": "counter",
              "stockade_loop_polls_total": "counter",
              "stockade_loop_poll_seconds_total": "counter"}
assert types == want_types, types
# The timed-out call ran at least its 500 ms; the three together under a minute.
assert 0.5 <= s["stockade_call_duration_seconds_sum{tool=execute_python}"] < 60, text
assert s["stockade_call_duration_seconds_bucket{le=0.01,tool=execute_python}"] < 3, text
assert s["stockade_audit_queue_depth{}"] >= 0 and s["stockade_audit_lag_seconds{}"] >= 0, text
# Two builds held the loop for some time, and not for seconds.
assert 0 < s["stockade_sandbox_build_seconds_total{}"] < 2, text
# The default profile uses no netguard policy: no egress family at all.
assert "egress" not in text, text

# The OOM killer, twice in one session: two children each past the
# profile's 512M (written, so the pages are really used); the session's
# own Python lives on, and each kill counts.
child = "b = b'x' * (700 << 20)"
oom = call(sid, 6, "execute_python", {"code":
    "import subprocess, sys\n"
    "for _ in range(2):\n"
    "    print(subprocess.run([sys.executable, '-c', %r]).returncode)\n" % child})
assert oom["structuredContent"]["stdout"] == "-9\n-9\n", oom
types, s, text = scrape()
assert s["stockade_oom_kills_total{}"] == 2, text
EOF
note "counts after ok, exit 1, timeout and deny calls; format, histogram, no principals or session ids; two OOM kills counted"

stop_mx || fail "mcp-exec exit status $? at SIGTERM"

# ---------------------------------------------------------------- tokens, netguard
TOK=token-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
cat >"$R/principals.yaml" <<EOF
tokens:
  - sha256: $(printf %s "$TOK" | sha256sum | cut -d' ' -f1)
    principal: "user:prometheus@example.com"
EOF
sed -i "s|^network:.*|network: mirror|" "$R/profiles/default.yaml"
grep -q '^network: mirror' "$R/profiles/default.yaml" || fail "sed missed network"
"$PY" "$T/fake_ng.py" "$T/ng.sock" "$T" 2>>"$T/ng.err" &
NG_PID=$!
for _ in $(seq 1 100); do [ -S "$T/ng.sock" ] && break; sleep 0.02; done
[ -S "$T/ng.sock" ] || fail "stand-in netguard did not start"
start_mx --netguard-socket "$T/ng.sock"
BASE="http://127.0.0.1:$PORT"
[ "$(code "$BASE/metrics")" = 401 ] || fail "no token is not 401"
[ "$(code -H 'Authorization: Bearer wrong' "$BASE/metrics")" = 401 ] || fail "wrong token is not 401"
[ "$(code -H "Authorization: Bearer $TOK" -H 'Host: evil.example:80' "$BASE/metrics")" = 403 ] ||
    fail "foreign Host with a token is not 403"
note "with bearer tokens: /metrics without or with a wrong token 401"

"$PY" - "$PORT" "$T" "$TOK" <<'EOF' || fail "egress metrics (see above)"
import http.client, json, os, sys, time
sys.path.insert(0, sys.argv[2])
from metrics import parse

port, tmp, tok = int(sys.argv[1]), sys.argv[2], sys.argv[3]
AUTH = {"Authorization": "Bearer " + tok}

def post(msg, sid=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    h = {"Content-Type": "application/json", "Accept": "application/json", **AUTH}
    if sid:
        h["Mcp-Session-Id"] = sid
    c.request("POST", "/mcp", json.dumps(msg), h)
    r = c.getresponse()
    body = r.read()
    assert r.status in (200, 202), (r.status, body)
    return r, json.loads(body) if body else None

def scrape():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    t0 = time.monotonic()
    c.request("GET", "/metrics", headers=AUTH)
    r = c.getresponse()
    body = r.read().decode()
    assert r.status == 200, (r.status, body)
    return parse(body) + (time.monotonic() - t0,)

r, _ = post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
             "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"}}})
sid = r.getheader("Mcp-Session-Id")
post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
for n in (1, 2):
    _, m = post({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                 "params": {"name": "execute_python", "arguments": {"code": "print(1)"}}}, sid)
    assert not m["result"]["isError"], m

# Two sandboxes of ours (2 metadata, 1 dns, 5 policy each); the other
# mcp-exec's 1000s are not ours.
types, s, text, _ = scrape()
assert types["stockade_egress_dropped_packets"] == "gauge", types
want = {"metadata": 4, "linklocal": 0, "mapped": 0, "dns": 2, "internal": 0, "policy": 10}
for rule, v in want.items():
    got = s.get("stockade_egress_dropped_packets{rule=%s}" % rule)
    assert got == v, (rule, got, text)
assert s["stockade_sessions_live{}"] == 2, text

# netguard too slow: the family is left out with a comment, quickly.
open(tmp + "/ng-slow", "w").close()
types, s, text, took = scrape()
os.unlink(tmp + "/ng-slow")
assert "stockade_egress_dropped_packets" not in types, text
assert not any(k.startswith("stockade_egress") for k in s), text
assert any(l.startswith("# stockade_egress_dropped_packets") for l in text.split("\n")), text
assert took < 1.5, ("scrape stalled", took)
assert s["stockade_up{}"] == 1, text
EOF
note "egress: this server's sandboxes summed per deny chain, others' left out; a slow netguard is left out, the scrape does not stall"

stop_mx || fail "mcp-exec exit status $? at SIGTERM"

# A node of a fleet names itself on every series, still in the format.
start_mx --node-id node-9
curl -s -H "Authorization: Bearer $TOK" "http://127.0.0.1:$PORT/metrics" >"$T/node.prom" || fail "scrape node-9"
"$PY" "$T/metrics.py" "$T/node.prom" | "$PY" -c '
import json, sys
s = json.load(sys.stdin)["samples"]
bare = [k for k in s if "node=node-9" not in k]
assert s and not bare, bare[:5]
assert s["stockade_up{node=node-9}"] == 1
' || fail "node label: $(head -20 "$T/node.prom")"
note "with --node-id: node=\"node-9\" on every one of $(grep -vc '^#' "$T/node.prom") samples"
stop_mx || fail "mcp-exec exit status $? at SIGTERM"
stop_ng
stop_auditd
verify >/dev/null || fail "audit log does not verify"
