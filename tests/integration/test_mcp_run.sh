#!/bin/bash
# `mcp-exec run` as a command: the result's shape, input files staged
# read-only, artifacts, and clear refusals (exit 1, a message naming the
# rule) for requests the profile does not allow.
. "$(dirname "$0")/lib.sh"

# The escape suite's fixtures, made here for this test alone.
"$PY" "$ROOT/tests/escape/run.py" --prepare "$T/esc"
R="$T/esc/rules"
S="$T/mx-state"
IN="$T/esc/inputs"
printf 'a,b\n1,2\n' >"$IN/run-test.csv"
run() { "$MX" run --rules "$R" --state-dir "$S" "$@"; }
# Sandbox cgroups below this test's own cgroups (where `mcp-exec run` makes
# them); it judges only those it made, not a concurrent run's.
own_cgroups() {
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		sed -n 's|^0::|/sys/fs/cgroup|p' /proc/self/cgroup
	else
		awk -F: '{ n = split($2, c, ","); for (i = 1; i <= n; i++)
		    if (c[i] == "memory" || c[i] == "pids" || c[i] == "cpu" ||
		        c[i] == "cpuacct")
			print "/sys/fs/cgroup/" c[i] $3 }' /proc/self/cgroup
	fi
}
cgroups_now() {
	for d in $(own_cgroups); do
		find "$d" -maxdepth 3 -type d -name 'stockade-*' 2>/dev/null
	done | sort
}
cgroups_now >"$T/cgroups.before"
expect_refusal() {
	local want=$1; shift
	st=0; msg=$("$@" 2>&1 >/dev/null) || st=$?
	[ $st = 1 ] || fail "exit $st for: $* ($msg)"
	echo "$msg" | grep -q "$want" || fail "message '$msg' lacks '$want'"
}
# Sandbox uids must reach the state directory: a closed parent is refused.
chmod 0700 "$T"
expect_refusal "not searchable by other users" run -- /bin/true
chmod 0711 "$T"

out=$(run --file "$IN/run-test.csv" --artifacts "$T/art" -- /usr/bin/python3 -I -c '
import os
print(open("/inputs/run-test.csv").read(), end="")
try:
    open("/inputs/run-test.csv", "a")
except OSError as e:
    print("ro", e.errno)
open("/workspace/out.json", "w").write("{\"x\": 1}")
') || fail "run: $out"
echo "$out" | "$PY" -c '
import json, sys
r = json.load(sys.stdin)
for k in ("stdout", "stderr", "exit_code", "timed_out", "oom_killed", "truncated",
          "stdout_bytes", "stderr_bytes", "duration_ms", "artifacts", "limits"):
    assert k in r, k
assert r["stdout"] in ("a,b\n1,2\nro 30\n", "a,b\n1,2\nro 13\n"), r["stdout"]
assert r["inputs"] == ["/inputs/run-test.csv"], r["inputs"]
a = r["artifacts"]
assert len(a) == 1 and a[0]["name"] == "out.json" and a[0]["mime"] == "application/json", a
assert a[0]["uri"].startswith("file://"), a
' || fail "result: $out"
[ -f "$T/art/out.json" ] || fail "artifact not copied"

expect_refusal "absolute path" run -- python3 -c 1
expect_refusal "above the profile's maximum" run --timeout-ms 999999 -- /bin/true
expect_refusal "not beneath an input root" run --file /etc/passwd -- /bin/true
expect_refusal "symlink" run --file "$IN/passwd-link" -- /bin/true
expect_refusal "profiles/nosuch.yaml" run --profile nosuch -- /bin/true
expect_refusal "must run as root" setpriv --reuid=65534 --regid=65534 \
    --clear-groups "$MX" run --rules "$R" -- /bin/true
# The state left behind: no sandbox directory, no cgroup, and no
# artifact directory for runs that made no artifact.
[ -z "$(ls "$S/sandboxes")" ] || fail "sandbox directories left: $(ls "$S/sandboxes")"
run -- /usr/bin/python3 -I -S -c 'import os; os.symlink("/etc/passwd", "/workspace/link")' \
    | grep -q '"artifacts_skipped"' || fail "the symlink was not skipped"
[ -z "$(ls "$S/artifacts")" ] || fail "artifact directories left: $(ls "$S/artifacts")"
left=$(cgroups_now | comm -13 "$T/cgroups.before" -)
[ -z "$left" ] || fail "cgroups left behind: $left"
note "mcp-exec run: result, inputs, artifacts, refusals, cleanup"

# A one-shot run loads none of the server's libraries (HTTP, TLS, OAuth,
# libcrypto: sandbox/trust.c opens it only for a profile's extra CA), nor
# libseccomp (the filter it loads was compiled at build time): each cost
# mappings and relocations at every start.  The server is mcp-exec-server,
# exec'd from beside mcp-exec, and only when neither group nor others can
# write it.
libs=$(ldd "$MX" | awk '{ print $1 }')
for l in libcrypto libssl libcurl libh2o libcjose libevent libldns libpcap libnftnl \
    libarchive libnetfilter libseccomp libhiredis; do
	! echo "$libs" | grep -q "^$l" || fail "mcp-exec links $l"
done
mkdir "$T/front"
cp -R "$MX" "$MX-server" "$BIN/share" "$T/front/"
chmod g+w "$T/front/mcp-exec-server"
# The server's getopt answers an unknown flag (exit 2, its usage); the
# front refusing the server is exit 1 and says why.
st=0; msg=$("$T/front/mcp-exec" --no-such-flag 2>&1) || st=$?
[ $st = 1 ] && echo "$msg" | grep -q "writable by group or others" ||
    fail "a group-writable server was run (exit $st: $msg)"
chmod g-w "$T/front/mcp-exec-server"
st=0; msg=$("$T/front/mcp-exec" --no-such-flag 2>&1) || st=$?
[ $st = 2 ] && echo "$msg" | grep -q "unrecognized option" ||
    fail "mcp-exec-server not exec'd through the front (exit $st: $msg)"
note "mcp-exec run links no server library; the server is checked, then exec'd"
