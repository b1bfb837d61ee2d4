#!/bin/bash
# The podman stand-in for a cluster (issue 34; `make kube-play`): the node
# agent's pod, as overlays/podman renders it and standin.mjs wraps it, is
# played by podman 4.3 `kube play` from the image `make image` built, on a
# private --internal podman network (documentation addresses; nothing
# leaves the machine), and
#  - the image: labelled with this commit, lists its packages, holds no
#    compiler and no package manager, runs each of our programs;
#  - the pod becomes ready (`stockade status --ready`: audit trail,
#    netguard, warm pool), every container under the least privilege the
#    manifest gives it (no privileged container);
#  - an MCP client in a container on that network calls execute_python
#    with a bearer token and gets numpy's answer; without the token, 401;
#  - a pattern rule added to the ConfigMap's volume is checked and applied
#    by rules-sync without a restart (the next call is refused), and a
#    policy that does not check is left out (the rule stays in force);
#  - after `kube down` the audit log on the claim's volume verifies and
#    holds the call and both policy loads.
# podman's state is build/podman (deploy/image/podman.sh); the pod, its
# volumes and the network are removed at the end, pass or fail.
set -eu
: "${BUILD:=build}"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# One mount namespace for every podman call of the flow (podman.sh).
[ -n "${STOCKADE_PODMAN_NS:-}" ] || exec "$ROOT/deploy/image/podman.sh" --netns "$0" "$@"
HERE="$ROOT/tests/kubernetes"
B="$ROOT/$BUILD"
T=$(mktemp -d "${TMPDIR:-/tmp}/stockade-kube.XXXXXX")
NET=stockade-kube-$$
SUBNET=198.51.100.224/28
IMAGE=localhost/stockade:dev
POD=stockade-node-0
podman() { "$ROOT/deploy/image/podman.sh" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "  $*"; }
start=$(date +%s)

teardown() {
	st=$?
	if [ $st != 0 ]; then
		for c in stockade-auditd netguard mcp-exec rules-sync; do
			echo "--- $c" >&2
			podman logs --tail 15 "$POD-$c" >&2 2>&1 || true
		done
	fi
	[ ! -f "$T/pod.yaml" ] || podman kube down "$T/pod.yaml" >/dev/null 2>&1 || true
	podman pod rm --force --ignore "$POD" >/dev/null 2>&1 || true
	for v in audit-log-$POD stockade-rules stockade-rules-profiles \
	    stockade-rules-network; do
		podman volume rm --force "$v" >/dev/null 2>&1 || true
	done
	podman network rm --force "$NET" >/dev/null 2>&1 || true
	rm -rf "$T"
	exit $st
}
trap teardown EXIT

podman image exists "$IMAGE" || fail "no $IMAGE: run make image"
[ -d "$HERE/node_modules/kubernetes-models" ] ||
    (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)
# A stand-in of an earlier run (killed before its teardown) holds the names.
! podman pod exists "$POD" || fail "a pod $POD exists already (podman.sh pod rm -f $POD)"

# ---------------------------------------------------------------- image
rev=$(podman image inspect "$IMAGE" --format '{{index .Labels "org.opencontainers.image.revision"}}')
[ "${rev%-dirty}" = "$(git -C "$ROOT" rev-parse HEAD)" ] ||
    fail "$IMAGE is of commit $rev, not HEAD: run make image"
found=$(podman run --rm --network none "$IMAGE" sh -c \
    'for c in cc gcc c++ g++ clang ld as make apt apt-get; do command -v $c; done; true')
[ -z "$found" ] || fail "the image holds: $found"
podman run --rm --network none "$IMAGE" sh -c \
    '[ "$(dpkg-query -W | wc -l)" = "$(wc -l </usr/share/stockade/packages.txt)" ] &&
     grep -q "^python3-numpy=" /usr/share/stockade/packages.txt' ||
    fail "packages.txt does not list the image's packages"
for p in /usr/sbin/stockade-auditd /usr/sbin/netguard /usr/sbin/mcp-exec \
    /usr/sbin/mcp-exec-server /usr/bin/stockade; do
	st=0; podman run --rm --network none "$IMAGE" "$p" --no-such-option \
	    >/dev/null 2>&1 || st=$?
	# 2 is its usage error: it ran; 127 a library it could not load.
	[ $st = 2 ] || fail "$p in the image exits $st, not 2 (usage)"
done
note "image of commit ${rev:0:12}: packages listed, no compiler or apt, every program runs"

# ---------------------------------------------------------------- the pod
"$HERE/render.sh" "$ROOT/deploy/kubernetes/overlays/podman" >"$T/rendered.yaml"
node "$HERE/validate.mjs" "$T/rendered.yaml" >/dev/null ||
    node "$HERE/validate.mjs" "$T/rendered.yaml"
# The Secrets, as the operator makes them (docs/kubernetes.md).
mkdir -p "$T/key" "$T/principals"
"$B/stockade" audit keygen "$T/keys" >/dev/null
cp "$T/keys/checkpoint.key" "$T/key/"
TOKEN=tok-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
cat >"$T/principals/principals.yaml" <<EOF
tokens:
  - sha256: "$(printf %s "$TOKEN" | sha256sum | cut -d' ' -f1)"
    principal: "user:standin@example.org"
EOF
node "$HERE/standin.mjs" "$T/rendered.yaml" \
    "stockade-checkpoint-key=$T/key" "stockade-principals=$T/principals" \
    >"$T/pod.yaml"
podman network create --internal --subnet "$SUBNET" "$NET" >/dev/null
timeout 180 "$ROOT/deploy/image/podman.sh" kube play --network "$NET" "$T/pod.yaml" \
    >"$T/play.out" 2>&1 || fail "kube play: $(tail -5 "$T/play.out")"
for i in $(seq 1 240); do
	out=$(podman exec "$POD-mcp-exec" stockade status --ready 2>&1) && break
	sleep 0.5
done
[ "$out" = ready ] || fail "not ready after 2 minutes: $out"
note "kube play: ready (audit trail, netguard, warm pool) after $(( $(date +%s) - start ))s"
# Each daemon's bounding set is what the manifest adds, nothing more.
caps() {
	/usr/bin/python3 - "$T/pod.yaml" "$1" <<'PYEOF'
import sys, yaml
BITS = {"CHOWN": 0, "DAC_OVERRIDE": 1, "FOWNER": 3, "KILL": 5, "SETGID": 6,
        "SETUID": 7, "NET_BIND_SERVICE": 10, "NET_ADMIN": 12,
        "SYS_PTRACE": 19, "SYS_ADMIN": 21}
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "Pod":
        c = [c for c in d["spec"]["containers"] if c["name"] == sys.argv[2]][0]
        add = c["securityContext"]["capabilities"].get("add", [])
        print("%016x" % sum(1 << BITS[a] for a in add))
PYEOF
}
for c in stockade-auditd netguard mcp-exec rules-sync; do
	[ "$(podman inspect "$POD-$c" --format '{{.HostConfig.Privileged}}')" = false ] ||
	    fail "$c is privileged"
	bnd=$(awk '/^CapBnd:/ {print $2}' "/proc/$(podman inspect "$POD-$c" --format '{{.State.Pid}}')/status")
	[ "$bnd" = "$(caps "$c")" ] || fail "$c: bounding set $bnd, the manifest's $(caps "$c")"
done
note "no container privileged; each daemon's capabilities exactly the manifest's"
mcp_pid=$(podman inspect "$POD-mcp-exec" --format '{{.State.Pid}}')

# ---------------------------------------------------------------- a call
infra=$(podman pod inspect "$POD" --format '{{.InfraContainerID}}')
ip=$(podman inspect "$infra" --format "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}")
[ -n "$ip" ] || fail "the pod has no address on $NET"
# client.py URL TOKEN CODE: one execute_python; prints its structured result.
cat >"$T/client.py" <<'EOF'
import json, sys
sys.path.insert(0, "/mcp")
from mcpclient import Http, McpError, structured
url, token, code = sys.argv[1:4]
try:
    Http(url).initialize()
    print("no token: accepted")
except McpError as e:
    print("no token:", e)
c = Http(url, token)
c.initialize()
try:
    print(json.dumps(structured(c.tool("execute_python", {"code": code}))))
except McpError as e:
    print("refused:", e)
EOF
call() {
	podman run --rm --network "$NET" -v "$ROOT/tests/integration:/mcp:ro" \
	    -v "$T/client.py:/client.py:ro" "$IMAGE" \
	    python3 /client.py "http://$ip:8080/mcp" "$TOKEN" "$1"
}
out=$(call 'import numpy; print(int(numpy.arange(10).sum()))')
echo "$out" | grep -q "^no token: HTTP 401" || fail "without a token: $out"
res=$(echo "$out" | tail -1)
python3 -c 'import json, sys; r = json.loads(sys.argv[1]); assert r["exit_code"] == 0 and r["stdout"].strip() == "45", r' "$res" ||
    fail "execute_python: $res"
note "MCP call at $ip:8080 from another container: execute_python says 45; no token, 401"
# A session's whole life, for the privileges it takes: an artifact, a
# call that overruns its time with a child that ignores SIGTERM (the
# sandbox's processes are another uid), close_session; then nothing of it
# is left: as many sandbox directories and processes of sandbox uids as
# before it (the warm pool's, the first call's session).
sandboxes() {
	podman exec "$POD-mcp-exec" sh -c 'ls /run/stockade/mcp-exec/sandboxes | wc -l
	    cat /proc/[0-9]*/status 2>/dev/null | awk "/^Uid:/ && \$2 >= 200000 { n++ } END { print n + 0 }"' |
	    tr '\n' ' '
}
before=$(sandboxes)
cat >"$T/life.py" <<'PYEOF'
import sys
sys.path.insert(0, "/mcp")
from mcpclient import Http, structured
c = Http(sys.argv[1], sys.argv[2])
c.initialize()
r = structured(c.tool("execute_python", {"code": "open('t.csv', 'w').write('a,b\\n1,2\\n')"}))
assert r["exit_code"] == 0 and [a for a in r["artifacts"] if a["name"] == "t.csv"], r
sid = r["session_id"]
r = c.tool("execute_python", {"session_id": sid, "timeout_ms": 1500, "code":
    "import subprocess, time\n"
    "subprocess.Popen(['python3', '-c', 'import signal, time; "
    "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)'])\n"
    "time.sleep(600)"})
assert r["structuredContent"]["timed_out"], r
c.tool("close_session", {"session_id": sid})
print("ok")
PYEOF
out=$(podman run --rm --network "$NET" -v "$ROOT/tests/integration:/mcp:ro" \
    -v "$T/life.py:/life.py:ro" "$IMAGE" python3 /life.py "http://$ip:8080/mcp" "$TOKEN" 2>&1) || true
[ "$out" = ok ] || fail "a session's life: $out"
for _ in $(seq 1 50); do
	left=$(sandboxes)
	[ "$left" = "$before" ] && break
	sleep 0.2
done
[ "$left" = "$before" ] ||
    fail "after close_session, sandbox directories and sandbox-uid processes: $left(before: $before)"
note "a session with an artifact and a timed-out call that left a child: closed, nothing of it left ($before)"

# ---------------------------------------------------------------- policy
# What the kubelet does on a ConfigMap update, done to podman's volume of
# it: the file changes; rules-sync checks the tree, swaps it in, SIGHUPs.
cm=$(podman volume inspect stockade-rules --format '{{.Mountpoint}}')
cat >>"$cm/patterns.yaml" <<'EOF'

  - id: STANDIN-001
    description: the stand-in's own rule (tests/kubernetes/kube_play.sh)
    severity: high
    action: deny
    regex: 'standin_forbidden'
EOF
good=$(sha256sum "$cm/patterns.yaml" | cut -d' ' -f1)
# wait_log CONTAINER PATTERN: until the container's log has it (20 s).
wait_log() {
	for _ in $(seq 1 100); do
		podman logs "$POD-$1" 2>&1 | grep -q "$2" && return 0
		sleep 0.2
	done
	fail "$1 never said \"$2\": $(podman logs --tail 5 "$POD-$1" 2>&1)"
}
wait_log rules-sync "SIGHUP to stockade-auditd"
wait_log mcp-exec "reloaded: .* $(grep -c '^  - id:' "$cm/patterns.yaml") pattern rules"
out=$(call 'standin_forbidden = 1' | tail -1)
echo "$out" | grep -q "STANDIN-001" || fail "the new rule is not in force: $out"
[ "$(podman inspect "$POD-mcp-exec" --format '{{.State.Pid}}')" = "$mcp_pid" ] ||
    fail "mcp-exec restarted"
note "a rule added to the ConfigMap: checked, applied by SIGHUP, the next call refused; no restart"
printf 'rules: [ {id: BAD\n' >"$cm/patterns.yaml"
wait_log rules-sync "rules not applied: .*patterns.yaml"
out=$(call 'standin_forbidden = 2' | tail -1)
echo "$out" | grep -q "STANDIN-001" || fail "the checked rule fell out: $out"
note "a policy that does not check is left out, and said so; the last good one stays"

# ---------------------------------------------------------------- the log
podman kube down "$T/pod.yaml" >/dev/null 2>&1
log=$(podman volume inspect "audit-log-$POD" --format '{{.Mountpoint}}')
"$B/stockade" audit verify "$log" --pubkey "$T/keys/checkpoint.pub" >"$T/verify.out" 2>&1 ||
    fail "the audit log does not verify: $(cat "$T/verify.out")"
# The active file is zero-filled ahead of its records (flush.zero_ahead).
cat "$log"/audit-*.log | tr -d '\0' >"$T/all.log"
grep '"event":"code_execution"' "$T/all.log" | grep -q '"principal":"user:standin@example.org"' ||
    fail "no code_execution of the stand-in's principal in the log"
# Each daemon recorded the reload; mcp-exec's names the new patterns.yaml.
for d in stockade-auditd netguard mcp-exec; do
	grep '"event":"policy_load"' "$T/all.log" | grep -q "\"program\":\"$d\"" ||
	    fail "no policy_load of $d"
done
grep '"event":"policy_load"' "$T/all.log" | grep '"program":"mcp-exec"' | grep -q "$good" ||
    fail "no policy_load of mcp-exec with the edited patterns.yaml ($good)"
note "kube down: the audit log on the claim's volume verifies, with the call and the reload"
podman pod exists "$POD" && fail "the pod outlived kube down"
note "stand-in done in $(( $(date +%s) - start ))s"
