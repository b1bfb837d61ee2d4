#!/bin/bash
# The manifests' fast checks (`make check`; the stand-in that plays them is
# kube_play.sh, `make kube-play`):
#  - every overlay renders offline (render.sh: pinned kustomize) and each
#    object validates against the Kubernetes API schemas and the least
#    privilege written in validate.mjs; planted defects (a type error, a
#    capability too many, a privileged container, a mount of no volume)
#    are each refused, so the validator can fail;
#  - the ConfigMaps carry every file of rules/ (principals.yaml comes from
#    a Secret), and the tree rules-sync makes of them passes `stockade
#    rules check`;
#  - rules-sync, in a process namespace of its own with stand-ins for the
#    daemons, against a directory laid out as the kubelet lays out a
#    ConfigMap volume: a checked tree at once (--once), a swapped ..data
#    link applied and signalled, a policy that does not check left out.
set -eu
: "${BUILD:=build}"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/tests/kubernetes"
B="$ROOT/$BUILD"
T=$(mktemp -d "${TMPDIR:-/tmp}/stockade-k8s.XXXXXX")
trap '{ [ -z "${sync:-}" ] || kill -KILL "$sync" 2>/dev/null; } || true; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "  $*"; }
render() {
	"$HERE/render.sh" "$1"
}
# What operators run (docs/kubernetes.md), where this machine has it:
# kubectl's own kustomize, 4 or later, must render the same bytes.
kz=$(command -v kubectl >/dev/null &&
    kubectl version --client 2>/dev/null | sed -n 's/^Kustomize Version: v\([0-9]*\).*/\1/p')
n=0
for o in "$ROOT"/deploy/kubernetes/overlays/*/; do
	name=$(basename "$o")
	render "$o" >"$T/$name.yaml" || fail "overlay $name does not render"
	out=$(node "$HERE/validate.mjs" "$T/$name.yaml") || fail "overlay $name: $out"
	n=$((n + 1))
done
[ $n -ge 2 ] || fail "only $n overlays"
note "$n overlays render offline; every object valid (API schemas, least privilege)"
if [ "${kz:-0}" -ge 4 ]; then
	for o in "$ROOT"/deploy/kubernetes/overlays/*/; do
		KUBECONFIG=/dev/null kubectl kustomize \
		    --load-restrictor=LoadRestrictionsNone "$o" |
		    cmp -s - "$T/$(basename "$o").yaml" ||
		    fail "kubectl kustomize renders $(basename "$o") otherwise than kustomize 4.5.4"
	done
	note "kubectl's kustomize (v$kz) renders the same bytes"
fi

# plant NAME SED: the containerd overlay with one defect must be refused.
plant() {
	sed "$2" "$T/containerd.yaml" >"$T/planted.yaml"
	cmp -s "$T/containerd.yaml" "$T/planted.yaml" && fail "plant $1: sed changed nothing"
	out=$(node "$HERE/validate.mjs" "$T/planted.yaml") && fail "plant $1 went through"
	echo "$out" | grep -q "^FAIL" || fail "plant $1: $out"
}
plant "runAsUser a string" 's/runAsUser: 990/runAsUser: "990"/'
plant "a capability too many" '0,/- SYS_PTRACE/s//- SYS_PTRACE\n              - SYS_MODULE/'
plant "privileged" '0,/readOnlyRootFilesystem: true/s//readOnlyRootFilesystem: true\n          privileged: true/'
plant "a mount of no volume" '0,/name: live$/s//name: alive/'
plant "no node id" 's/- --node-id$/- --no-node-id/'
note "planted defects refused: a type error, a capability too many, privileged, a mount of no volume, no node id"

# The policy as the pod assembles it: every file of rules/ in a ConfigMap.
node "$HERE/rules_tree.mjs" "$T/containerd.yaml" "$T/tree"
cp "$ROOT/rules/principals.yaml" "$T/tree/"
diff -r "$ROOT/rules" "$T/tree" >"$T/diff" ||
    fail "the ConfigMaps and rules/ differ (add the file to deploy/kubernetes/base): $(cat "$T/diff")"
"$B/stockade" rules check "$T/tree" >/dev/null || fail "the rendered policy does not check"
note "the ConfigMaps carry all of rules/, and it checks"

# rules-sync against a kubelet-like volume: FILE -> ..data/FILE, ..data ->
# ..<timestamp>/ (atomic_writer.go's layout), swapped by a rename.
publish() {	# publish DIR SRC: a new timestamped copy of SRC, then the swap
	local v="..$(date +%s%N)"
	cp -R "$2" "$1/$v"
	ln -sfn "$v" "$1/..data_tmp"
	mv -T "$1/..data_tmp" "$1/..data"
	for f in "$2"/*; do ln -sfn "..data/$(basename "$f")" "$1/$(basename "$f")"; done
}
mkdir -p "$T/cm" "$T/cm-p" "$T/cm-n" "$T/sec" "$T/live" "$T/bin" "$T/cm.src" "$T/sec.src"
cp "$ROOT"/rules/*.yaml "$T/cm.src/"
mv "$T/cm.src/principals.yaml" "$T/sec.src/"
publish "$T/cm" "$T/cm.src"
publish "$T/cm-p" "$ROOT/rules/profiles"
publish "$T/cm-n" "$ROOT/rules/network"
publish "$T/sec" "$T/sec.src"
srcs=("$T/cm:." "$T/cm-p:profiles" "$T/cm-n:network" "$T/sec:.")
# The image's layout: stockade on PATH, rules-sync as installed.
ln -s "$B/stockade" "$T/bin/stockade"
export PATH="$T/bin:$PATH" RULES_SYNC_INTERVAL=0.2
"$ROOT/deploy/image/rules-sync" --once "$T/live" "${srcs[@]}" >/dev/null
diff -r "$ROOT/rules" "$T/live/rules" >/dev/null || fail "--once: the live tree is not rules/"
mkdir "$T/bad.src" && cp "$T/cm.src"/* "$T/bad.src/" && printf 'rules: [ {id: X\n' >"$T/bad.src/patterns.yaml"
if "$ROOT/deploy/image/rules-sync" --once "$T/live2" "$T/bad.src:." >"$T/once.out" 2>&1 ||
    [ -e "$T/live2/rules" ]; then
	fail "--once took a policy that does not check"
fi
note "rules-sync --once: a checked tree, or exit 1 and none"
# The sidecar, in a process namespace of its own (it signals by name, and
# must not reach this machine's daemons) beside stand-ins that record
# their SIGHUP, each a container's first process there as in a pod
# (started from outside: parent 0), and a sandbox's process of the same
# name beneath one of them, which must get none.  SIGKILL to unshare (it
# ignores SIGTERM) kills the namespace's first process (--kill-child), and
# with it the namespace.
cat >"$T/daemon" <<'EOF'
#!/bin/bash
trap 'echo hup >>"$0.$1"' HUP
[ "$1" != hups ] || [ "${0##*/}" != mcp-exec-server ] || "$0" sandbox &
while :; do sleep 0.05; done
EOF
chmod +x "$T/daemon"
for d in stockade-auditd netguard mcp-exec-server; do cp "$T/daemon" "$T/bin/$d"; done
unshare --pid --fork --kill-child --mount-proc sleep 600 &
sync=$!
ns=""
for _ in $(seq 1 50); do
	ns=$(pgrep -P "$sync" -x sleep) && break
	sleep 0.1
done
[ -n "$ns" ] || fail "no process namespace for rules-sync"
for d in stockade-auditd netguard mcp-exec-server; do
	# comm is the script's name: bash runs it as $d.
	nsenter --target "$ns" --pid --mount -- "$T/bin/$d" hups &
done
nsenter --target "$ns" --pid --mount -- \
    "$ROOT/deploy/image/rules-sync" "$T/live" "${srcs[@]}" >"$T/sync.out" 2>&1 &
disown -a	# they die with the namespace: no word from the shell then
sleep 0.5
first=$(readlink "$T/live/rules")
cp -R "$T/cm.src" "$T/cm.v2"
printf '\n  - id: K8S-SYNC-001\n    description: t\n    severity: low\n    action: flag\n    regex: '"'"'k8s_sync'"'"'\n' >>"$T/cm.v2/patterns.yaml"
publish "$T/cm" "$T/cm.v2"
for _ in $(seq 1 50); do
	[ "$(readlink "$T/live/rules")" != "$first" ] && break
	sleep 0.1
done
grep -q "K8S-SYNC-001" "$T/live/rules/patterns.yaml" || fail "an update was not applied: $(cat "$T/sync.out")"
for _ in $(seq 1 50); do
	[ "$(cat "$T"/bin/*.hups 2>/dev/null | wc -l)" = 3 ] && break
	sleep 0.1
done
[ "$(cat "$T"/bin/*.hups 2>/dev/null | wc -l)" = 3 ] ||
    fail "not every daemon got one SIGHUP: $(cat "$T/sync.out")"
sleep 0.5	# a trap runs between commands: the sandbox's would have by now
[ ! -e "$T/bin/mcp-exec-server.sandbox" ] || fail "a sandbox's process got SIGHUP"
[ "$(find "$T/live" -maxdepth 1 -name 'rules.*' | wc -l)" = 1 ] || fail "an old tree was left in $T/live"
second=$(readlink "$T/live/rules")
publish "$T/cm" "$T/bad.src"
for _ in $(seq 1 50); do
	grep -q "rules not applied" "$T/sync.out" && break
	sleep 0.1
done
grep -q "rules not applied: .*patterns.yaml:[0-9]*:[0-9]*" "$T/sync.out" ||
    fail "a policy that does not check was not refused: $(cat "$T/sync.out")"
[ "$(readlink "$T/live/rules")" = "$second" ] || fail "a policy that does not check went live"
[ "$(cat "$T"/bin/*.hups | wc -l)" = 3 ] || fail "a daemon was signalled for a refused policy"
kill -KILL "$sync"
note "rules-sync: a swapped ConfigMap checked, swapped in, each daemon signalled once (a sandbox's process not); a bad one refused with file:line:column"
