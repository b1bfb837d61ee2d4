#!/bin/bash
# The warm pool of a profile with a netguard policy (issue 15): the policy
# is attached while the sandbox is built ahead (netguard's record names the
# principal "pool" and the session id the hand-out will use), and it is in
# force in the pooled session: an L2 sandbox has its veth and address, and
# a connection to the metadata address is dropped and audited as
# egress_denied under that session, whose session_created names the real
# principal.  Cheap on purpose: no world and no dnsmasq (an L2 policy of
# CIDRs needs no resolver upstream to answer), only the gateway namespace
# netguard puts the host ends of the veths in.
. "$(dirname "$0")/lib.sh"

need_netguard
ns_add "$NS_G"
ip -n "$NS_G" link set lo up
start_auditd
mcp_rules
policy web L2 'allow:
  - cidrs: [203.0.113.0/28]
    ports: [80]'
sed -i "s|^\(  netguard_socket:\).*|\1 $NG_SOCK|" "$R/mcp-exec.yaml"
sed -i "s|^network:.*|network: web|" "$R/profiles/default.yaml"
printf '\npool:\n  size: 1\n' >>"$R/profiles/default.yaml"
# The metadata address is what the pattern rules refuse: the wall is tested.
printf "rules: []\n" >"$R/patterns.yaml"
start_netguard
start_mx
trap 'st=$?; [ $st = 0 ] || tail -20 "$T/mx.err" >&2; stop_mx || true; (exit $st); egress_cleanup' EXIT

sid=$("$PY" - "$PORT" "$HERE" <<'PYEOF'
import json, re, sys, time, urllib.request
sys.path.insert(0, sys.argv[2])
from mcpclient import Http, structured
url = "http://127.0.0.1:%s" % sys.argv[1]

def metric(name):
    text = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
    return int(re.search(r"^%s (\d+)$" % name, text, re.M).group(1))

for _ in range(300):
    if metric("stockade_pool_ready") == 1:
        break
    time.sleep(0.05)
else:
    raise SystemExit("the pool never got ready")
c = Http(url + "/mcp")
c.initialize()
code = r"""
import json, socket
meta = ".".join(str(b) for b in (169, 254, 169, 254))
s = socket.socket()
s.settimeout(0.5)
try:
    s.connect((meta, 80))
    res = "reached"
except OSError as e:
    res = "blocked"
# A UDP connect sends nothing: it only picks the route and the source.
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.connect(("203.0.113.1", 80))
    src = u.getsockname()[0]
except OSError as e:
    src = str(e)
print(json.dumps({"meta": res, "links": [n for _, n in socket.if_nameindex()], "src": src}))
"""
s = structured(c.tool("execute_python", {"code": code}))
assert s["exit_code"] == 0, s
assert metric("stockade_pool_hits_total") == 1, "not served from the pool"
r = json.loads(s["stdout"].splitlines()[-1])
assert r["meta"] == "blocked", r
assert "eth0" in r["links"] and r["src"].startswith("10.231."), \
    ("no L2 link in the pooled sandbox", r)
print(s["session_id"])
PYEOF
) || fail "the pooled session under web (see above)"
expect_event egress_attached "session_id=$sid" policy=web level=L2 principal=pool
expect_event session_created "session_id=$sid" principal=user:local
expect_event egress_denied "session_id=$sid" rule=metadata dst_ip=169.254.169.254 dst_port=80
note "pooled L2 session: attached ahead (principal pool), eth0 and a route out from 10.231.x.2, 169.254.169.254 dropped and audited under $sid"
stop_mx || fail "mcp-exec exit status $?"
# Stopping tears the pool down: nothing stays attached.
[ "$(net status --socket "$NG_SOCK" | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)["attached"]))')" = 0 ] ||
    fail "still attached after mcp-exec stopped"
note "stop: the session's and the refilled pooled sandbox's policies detached"
egress_finish
