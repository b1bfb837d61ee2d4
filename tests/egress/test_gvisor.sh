#!/bin/bash
# The gVisor runtime under a netguard policy: netguard attaches L2 to the
# network namespace runsc is started in, before runsc runs; the sentry's
# host sockets (--network=host) are made there, so the policy holds the
# same: the allowed host by name, the metadata address dropped and audited.
. "$(dirname "$0")/lib.sh"

need_netguard
topo_up
start_auditd
mcp_rules
policy web L2 "$L2_ALLOW"
sed -i "s|^\(  netguard_socket:\).*|\1 $NG_SOCK|" "$R/mcp-exec.yaml"
sed -i "s|^network:.*|network: web|" "$R/profiles/default.yaml"
printf 'runtime: gvisor\n' >>"$R/profiles/default.yaml"
if ! msg=$("$STOCKADE" rules check "$R" 2>&1); then
	echo "$msg" | grep -q "runtime: gvisor cannot run" || fail "rules check: $msg"
	echo "SKIP: $(echo "$msg" | grep -m1 'cannot run')"
	exit 77
fi
start_netguard

cat >"$T/fetch.py" <<'PY'
import socket, urllib.request
print(urllib.request.urlopen("http://allowed.test/", timeout=5).read().decode().strip())
meta = ".".join(str(b) for b in (169, 254, 169, 254))
s = socket.socket()
s.settimeout(2)
try:
    s.connect((meta, 80))
    print("metadata reached")
except OSError as e:
    print("metadata blocked")
PY
args=$("$PY" -c 'import json,sys; print(json.dumps({"code": open(sys.argv[1]).read()}))' "$T/fetch.py")
mcp_serve a
out=$(mcp_call a 1 "$args")
echo "$out" | grep -q 'runtime\\":\\"gvisor' || fail "not on gvisor: $out"
echo "$out" | grep -q 'world 203.0.113.10' || fail "no fetch by name: $out"
echo "$out" | grep -q 'metadata blocked' || fail "metadata not blocked: $out"
sid=$(echo "$out" | sed -n 's/.*"session_id":"\(sess_[0-9a-f]*\)".*/\1/p' | head -1)
expect_event egress_attached "session_id=$sid" policy=web level=L2
expect_event dns_query decision=allow "session_id=$sid" name=allowed.test pinned~203.0.113.10
expect_event egress_denied "session_id=$sid" rule=metadata dst_ip=169.254.169.254 dst_port=80
note "gvisor L2 session: allowed.test fetched by name, 169.254.169.254 dropped by netguard and audited"
