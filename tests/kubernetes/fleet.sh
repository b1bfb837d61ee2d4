#!/bin/bash
# A fleet of node agents on one machine (issue 34's stand-in; `make fleet`,
# and a smaller sweep in `make check`): three pods of the StatefulSet as
# overlays/podman renders it (standin.mjs --pod N), played by podman 4.3
# from the image `make image` built, on a private --internal podman
# network (documentation addresses; nothing leaves it), each with its own
# address and node id (its pod's name, --node-id); the shipped router
# (deploy/router/render-haproxy, Debian's haproxy) and a Redis for fleet
# quotas (Debian's redis-server), each a host process in the network
# namespace of a container of its own on that network; the official SDK
# clients of both eras (tests/mcp/fleet-client.mjs) in the router's.
#  - SESSIONS sessions through the router, half 2025-11-25 (SDK v1), half
#    2026-07-28 (SDK v2), spread over the three; every call lands on its
#    owner: each answered call is in its node's audit log, and no log holds
#    a record of another node's handle;
#  - `podman pod kill` one: its clients get -31001 "session lost: node N is
#    gone", the others go on, new sessions go to the live nodes;
#  - drain one as the kubelet would (SIGTERM to mcp-exec, fleet.drain_grace_s,
#    then the sidecars): its running call finishes, nothing new starts
#    there, its sessions close "drained: ...", its log verifies;
#  - both return on their volumes (the pod played again): ready, serving;
#  - fleet quotas in Redis: a principal at calls_per_minute 30 sends 100
#    calls spread over the three nodes, and exactly 30 run;
#  - at the end every node's log verifies, and every call a client was
#    answered for has its execution_started in its owner's log, in none
#    other: nothing acknowledged was lost, on the killed node either.
# podman's state is build/podman (deploy/image/podman.sh); everything is
# removed at the end, pass or fail.
# usage: tests/kubernetes/fleet.sh [SESSIONS]   (default 100)
set -eu
: "${BUILD:=build}"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# One mount and network namespace for every podman call of the flow
# (podman.sh --netns).
[ -n "${STOCKADE_PODMAN_NS:-}" ] || exec "$ROOT/deploy/image/podman.sh" --netns "$0" "$@"
SESSIONS=${1:-100}
HERE="$ROOT/tests/kubernetes"
MCP="$ROOT/tests/mcp"
B="$ROOT/$BUILD"
T=$(mktemp -d "${TMPDIR:-/tmp}/stockade-fleet.XXXXXX")
NET=stockade-fleet-$$
SUBNET=198.51.100.224/27
IMAGE=localhost/stockade:dev
NODES="stockade-node-0 stockade-node-1 stockade-node-2"
QUOTA=30
podman() { "$ROOT/deploy/image/podman.sh" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "  $*"; }
start=$(date +%s)
HAPROXY_PID="" REDIS_PID=""

teardown() {
	st=$?
	if [ $st != 0 ]; then
		for n in $NODES; do
			echo "--- $n mcp-exec" >&2
			podman logs --tail 8 "$n-mcp-exec" >&2 2>&1 || true
		done
		tail -5 "$T/haproxy.log" >&2 2>/dev/null || true
	fi
	for p in $HAPROXY_PID $REDIS_PID; do
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	# podman.sh --ns removes every pod, container, volume and network.
	rm -rf "$T"
	exit $st
}
trap teardown EXIT

podman image exists "$IMAGE" || fail "no $IMAGE: run make image"
rev=$(podman image inspect "$IMAGE" --format '{{index .Labels "org.opencontainers.image.revision"}}')
[ "${rev%-dirty}" = "$(git -C "$ROOT" rev-parse HEAD)" ] ||
    fail "$IMAGE is of commit $rev, not HEAD: run make image"
command -v haproxy >/dev/null || fail "no haproxy (make deps)"
command -v redis-server >/dev/null || fail "no redis-server (make deps)"
[ -d "$HERE/node_modules/kubernetes-models" ] ||
    (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)
[ -d "$MCP/node_modules/@modelcontextprotocol/client" ] ||
    (cd "$MCP" && npm ci --no-audit --no-fund --loglevel=error)

podman network create --internal --subnet "$SUBNET" "$NET" >/dev/null
# holder NAME: a container on the network whose network namespace a host
# process (haproxy, redis-server, the clients) joins; prints its pid.
holder() {
	podman run -d --name "$1" --network "$NET" "$IMAGE" sleep 3600 >/dev/null
	podman inspect "$1" --format '{{.State.Pid}}'
}
addr() {
	podman inspect "$1" --format "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}"
}
in_ns() { local pid=$1; shift; nsenter --net="/proc/$pid/ns/net" "$@"; }

# ---------------------------------------------------------------- Redis
RPID=$(holder redis)
REDIS=$(addr redis)
# (nsenter becomes the daemon: $! is its pid, for the teardown's kill.)
nsenter --net="/proc/$RPID/ns/net" redis-server --bind "$REDIS" --port 6379 --protected-mode no \
    --save '' --appendonly no --dir "$T" >"$T/redis.log" 2>&1 &
REDIS_PID=$!
for _ in $(seq 1 100); do
	in_ns "$RPID" redis-cli -h "$REDIS" ping 2>/dev/null | grep -q PONG && break
	sleep 0.1
done

# ---------------------------------------------------------------- the pods
# The operator's part, as in docs/kubernetes.md: the Secrets (a checkpoint
# key; bearer tokens, one of them a principal with a fleet quota) and the
# policy's fleet settings in its ConfigMap: room for the sweep's sessions,
# a drain grace, the quota store.  Every pod reads the same ConfigMap; its
# node id is its name.
KUBECONFIG=/dev/null kubectl kustomize --load-restrictor=LoadRestrictionsNone \
    "$ROOT/deploy/kubernetes/overlays/podman" >"$T/rendered.yaml"
/usr/bin/python3 - "$T/rendered.yaml" "$REDIS" <<'EOF' || fail "the fleet's policy"
import re, sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
cm = [d for d in docs if d and d["kind"] == "ConfigMap" and
      d["metadata"]["name"] == "stockade-rules"][0]
y = cm["data"]["mcp-exec.yaml"]
for old, new in [(r"\n    max_total: 32\n", "\n    max_total: 96\n"),
                 (r"\n    max_per_principal: 4\n", "\n    max_per_principal: 96\n"),
                 (r"\n    max_sessions_per_principal: 32 ", "\n    max_sessions_per_principal: 96 "),
                 (r"\n  drain_grace_s: 0 ", "\n  drain_grace_s: 20 "),
                 (r"\n  # redis: [^\n]*", "\n  redis: %s:6379" % sys.argv[2])]:
    y, n = re.subn(old, new, y)
    assert n == 1, old
cm["data"]["mcp-exec.yaml"] = y
yaml.safe_dump_all(docs, open(sys.argv[1], "w"), sort_keys=False)
EOF
mkdir -p "$T/key" "$T/principals"
"$B/stockade" audit keygen "$T/keys" >/dev/null
cp "$T/keys/checkpoint.key" "$T/key/"
tok() { echo "tok-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"; }
sha() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
TOKEN=$(tok) QTOKEN=$(tok)
cat >"$T/principals/principals.yaml" <<EOF
tokens:
  - sha256: "$(sha "$TOKEN")"
    principal: "user:fleet@example.org"
  - sha256: "$(sha "$QTOKEN")"
    principal: "user:quota@example.org"
principals:
  - name: "user:quota@example.org"
    quotas: { calls_per_minute: $QUOTA }
EOF
for n in $NODES; do
	node "$HERE/standin.mjs" --pod "${n##*-}" "$T/rendered.yaml" \
	    "stockade-checkpoint-key=$T/key" "stockade-principals=$T/principals" \
	    >"$T/$n.yaml"
done
# play N [again]: the pod; again: a StatefulSet's replacement pod, on the
# claim that outlived the first (podman would refuse to make it twice),
# with fresh emptyDirs.  ready: audit trail, netguard, warm pool.
play() {
	local y="$T/$1.yaml"
	if [ $# = 2 ]; then
		y="$T/$1.again.yaml"
		/usr/bin/python3 -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1]))
        if d and d["kind"] != "PersistentVolumeClaim"]
yaml.safe_dump_all(docs, open(sys.argv[2], "w"), sort_keys=False)' "$T/$1.yaml" "$y"
	fi
	podman kube play --network "$NET" --ip "${IP[$1]}" "$y" >"$T/play.out" 2>&1 ||
	    fail "kube play $1: $(tail -3 "$T/play.out")"
}
ready() {
	local out=""
	for _ in $(seq 1 240); do
		out=$(podman exec "$1-mcp-exec" stockade status --ready 2>&1) && return 0
		sleep 0.5
	done
	fail "$1 not ready after 2 minutes: $out"
}
ip_of() {
	addr "$(podman pod inspect "$1" --format '{{.InfraContainerID}}')"
}
# Each pod at an address of its own that it keeps when it returns, as its
# name in the headless Service stays (the stand-in has no cluster DNS).
declare -A IP
for n in $NODES; do IP[$n]=198.51.100.$((240 + ${n##*-})); done
for n in $NODES; do play "$n"; done
for n in $NODES; do ready "$n"; done
for n in $NODES; do
	[ "$(ip_of "$n")" = "${IP[$n]}" ] || fail "$n is not at ${IP[$n]}: $(ip_of "$n")"
done
note "3 pods ready in $(( $(date +%s) - start ))s at ${IP[*]}, each its own node id"

# ---------------------------------------------------------------- router
# The router as shipped, for these three; addresses, since the stand-in
# has no cluster DNS (the Kubernetes example resolves the pods' names).
HPID=$(holder router)
args=""
for n in $NODES; do args="$args $n=${IP[$n]}:8080"; done
# shellcheck disable=SC2086
"$ROOT/deploy/router/render-haproxy" --listen 127.0.0.1:8080 --check-ms 300 \
    $args >"$T/haproxy.cfg"
in_ns "$HPID" haproxy -c -q -f "$T/haproxy.cfg" || fail "haproxy -c refused the configuration"
nsenter --net="/proc/$HPID/ns/net" haproxy -f "$T/haproxy.cfg" >"$T/haproxy.log" 2>&1 &
HAPROXY_PID=$!
for _ in $(seq 1 100); do
	in_ns "$HPID" curl -s -o /dev/null http://127.0.0.1:8080/ && break
	sleep 0.1
done
URL=http://127.0.0.1:8080/mcp
client() {
	in_ns "$HPID" node "$MCP/fleet-client.mjs" "$1" "$T/state.json" "$URL" \
	    "${TOKEN_FOR:-$TOKEN}" "${@:2}" || fail "fleet-client $1 (see above)"
}

# ---------------------------------------------------------------- sessions
client open "$SESSIONS"

# ---------------------------------------------------------------- kill
podman pod kill stockade-node-2 >/dev/null
client kill stockade-node-2

# ---------------------------------------------------------------- drain
# As the kubelet drains a pod: SIGTERM to the container, the sidecars
# after it has stopped (podman pod stop would signal them all at once).
(
	for _ in $(seq 1 200); do [ -e "$T/go" ] && break; sleep 0.05; done
	podman stop -t 30 stockade-node-1-mcp-exec >/dev/null 2>&1
	podman pod stop -t 10 stockade-node-1 >/dev/null 2>&1
	touch "$T/stopped"
) &
drainer=$!
client drain stockade-node-1 "$T/go"
wait $drainer
[ -e "$T/stopped" ] || fail "the drained pod did not stop"
client gone stockade-node-1

log_of() { podman volume inspect "audit-log-$1" --format '{{.Mountpoint}}'; }
verify() {
	"$B/stockade" audit verify "$(log_of "$1")" --pubkey "$T/keys/checkpoint.pub" \
	    >"$T/verify.out" 2>&1 || fail "$1's audit log does not verify: $(tail -3 "$T/verify.out")"
}
verify stockade-node-1
/usr/bin/python3 - "$(log_of stockade-node-1)" <<'EOF' || fail "the drain's records (see above)"
import glob, json, sys
recs = [json.loads(l) for p in sorted(glob.glob(sys.argv[1] + "/audit-*.log"))
        for l in open(p, errors="replace").read().replace("\0", "").splitlines() if l]
made = {r["session_id"] for r in recs if r["event"] == "session_created"}
closed = {r["session_id"]: r["reason"] for r in recs if r["event"] == "session_closed"}
want = "drained: the node stopped once its calls had ended"
assert made and all(closed.get(s) == want for s in made), \
    [(s, closed.get(s)) for s in made if closed.get(s) != want][:3]
d = [r for r in recs if r["event"] == "daemon_stop" and r["program"] == "mcp-exec"][-1]
assert d["node"] == "stockade-node-1" and d["drain"]["completed"] and \
    d["drain"]["calls_cut"] == 0, d
print("  stockade-node-1 drained: %d sessions closed \"%s\"; drain %s; its log verifies" %
      (len(made), want, json.dumps(d["drain"])))
EOF

# ---------------------------------------------------------------- return
# Both come back on their volumes, as a StatefulSet's pods do.
for n in stockade-node-1 stockade-node-2; do
	podman pod rm -f "$n" >/dev/null
	for v in run live keys; do podman volume rm -f "$n-$v" >/dev/null; done
	play "$n" again
done
for n in stockade-node-1 stockade-node-2; do ready "$n"; done
sleep 1	# the router's checks (every 300 ms) see them up
note "the killed and the drained pod return on their claims' volumes: ready"

# ---------------------------------------------------------------- quota
# calls_per_minute counts one UTC minute fleet-wide: start early in one.
[ "$(date +%-S)" -lt 40 ] || sleep $(( 61 - $(date +%-S) ))
out=$(TOKEN_FOR=$QTOKEN client quota 100 | tail -1)
/usr/bin/python3 - "$out" "$QUOTA" <<'EOF' || fail "fleet quota: $out"
import json, sys
r, q = json.loads(sys.argv[1]), int(sys.argv[2])
assert sum(r["ran"].values()) == q and r["refused"] == 100 - q, r
assert len(r["ran"]) == 3, ("not spread over the three nodes", r)
print("  calls_per_minute %d in Redis: 100 calls over three nodes, %d ran (%s), %d refused" %
      (q, q, ", ".join("%s %d" % kv for kv in sorted(r["ran"].items())), r["refused"]))
EOF

# ---------------------------------------------------------------- the logs
# Stopped as the kubelet would, then every log verifies; each answered
# call's execution_started (durable before its code ran) is in its owner's
# log, and no log has a record of another node's handle.
for n in $NODES; do
	podman stop -t 30 "$n-mcp-exec" >/dev/null 2>&1
	podman pod stop -t 10 "$n" >/dev/null 2>&1
	verify "$n"
done
for p in $HAPROXY_PID $REDIS_PID; do kill -TERM "$p"; wait "$p" 2>/dev/null || true; done
HAPROXY_PID="" REDIS_PID=""
! pgrep -f "$T/haproxy.cfg" >/dev/null || fail "haproxy outlived its stop"
# shellcheck disable=SC2046 # node=dir words, no spaces
/usr/bin/python3 - "$T/state.json" $(for n in $NODES; do echo "$n=$(log_of "$n")"; done) <<'EOF' ||
import glob, hashlib, json, sys
st = json.load(open(sys.argv[1]))
logs = dict(a.split("=", 1) for a in sys.argv[2:])
started, other = {}, 0
for node, d in logs.items():
    for p in sorted(glob.glob(d + "/audit-*.log")):
        for l in open(p, errors="replace").read().replace("\0", "").splitlines():
            r = json.loads(l)
            h = r.get("session_id") or r.get("task_id")
            if h and "." in h and h.rsplit(".", 1)[1] != node:
                sys.exit("FAIL: %s's log has %s of %s" % (node, r["event"], h))
            if r["event"] == "execution_started":
                started.setdefault((r["session_id"], r["code_hash"]), set()).add(node)
missing = []
for a in st["acks"]:
    key = (a["sid"], "sha256:" + hashlib.sha256(a["code"].encode()).hexdigest())
    if started.get(key) != {a["sid"].rsplit(".", 1)[1]}:
        missing.append((a["sid"], started.get(key)))
if missing:
    sys.exit("FAIL: %d answered calls not (only) in their owner's log: %s" %
             (len(missing), missing[:3]))
print("  all 3 logs verify; %d answered calls, each in its owner's log only "
      "(the killed node's too); no log holds another node's handle" % len(st["acks"]))
EOF
    fail "the logs (see above)"
note "fleet of 3 with $SESSIONS sessions done in $(( $(date +%s) - start ))s"
