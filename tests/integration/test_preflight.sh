#!/bin/bash
# mcp-exec checks every path it will need when it starts (and with -n),
# not at the first tool call: the driver (found beside the program when
# driver_dir is unset, as in the shipped rules), the state directory, the
# daemons' socket directories, the profile's input roots and, for a networked
# profile, the host's CA bundle.  Each refusal names the path and what is
# wrong; the server does not start.
. "$(dirname "$0")/lib.sh"

chmod 0711 "$T"
ok() { "$MX" -nv --rules "$1" --state-dir "$T/state" --audit-socket "$T/a.sock" 2>&1; }
refuse() {	# refuse WANT RULES [ARGS...]: -n and a real start both exit 1
	local want=$1 rules=$2 st; shift 2
	for mode in -n --stdio; do
		st=0; msg=$("$MX" $mode --rules "$rules" --state-dir "$T/state" \
		    --audit-socket "$T/a.sock" "$@" </dev/null 2>&1) || st=$?
		[ $st = 1 ] || fail "$mode exit $st with $rules $*: $msg"
		echo "$msg" | grep -q -- "$want" || fail "$mode: '$msg' lacks '$want'"
	done
}
conf() {	# conf DIR SED: a copy of the shipped rules, edited
	cp -R "$ROOT/rules" "$1"
	sed -i "$2" "$1/mcp-exec.yaml"
}

# The shipped rules, from the build tree: the driver beside the program.
out=$(ok "$ROOT/rules") || fail "shipped rules: $out"
echo "$out" | grep -q "driver $BIN/share/stockade/driver" || fail "driver: $out"
echo "$out" | grep -q "configuration OK" || fail "no OK: $out"
note "shipped rules from the build tree: the driver found beside the program"

# A copy of the program with no driver beside it.
mkdir "$T/bin"
cp "$MX" "$T/bin/mcp-exec"
cp "$MX-server" "$T/bin/mcp-exec-server"	# what mcp-exec execs
st=0; msg=$("$T/bin/mcp-exec" -n --rules "$ROOT/rules" --state-dir "$T/state" \
    --audit-socket "$T/a.sock" 2>&1) || st=$?
[ $st = 1 ] && echo "$msg" | grep -q "no session driver beside $T/bin" ||
    fail "no driver beside the program: exit $st: $msg"

conf "$T/r1" "s|^  driver_dir:.*|  driver_dir: $T/nowhere|"
refuse "driver_dir $T/nowhere: No such file" "$T/r1"
mkdir "$T/drv" && cp "$ROOT/mcp-exec/driver/driver.py" "$T/drv/" && chmod 0777 "$T/drv"
conf "$T/r2" "s|^  driver_dir:.*|  driver_dir: $T/drv|"
refuse "writable by group or others" "$T/r2"
chmod 0755 "$T/drv"
out=$(ok "$T/r2") || fail "a good driver_dir refused: $out"
note "a missing or writable driver: refused at start, naming it"

mkdir -m 0700 "$T/closed"
refuse "$T/closed is not searchable by other users" "$ROOT/rules" --state-dir "$T/closed/state"
refuse "the directory $T/none does not exist" "$ROOT/rules" --audit-socket "$T/none/a.sock"
cp -R "$ROOT/rules" "$T/r3"
sed -i "s|^  roots: \[\]|  roots: [$T/no-inputs]|" "$T/r3/profiles/default.yaml"
refuse "inputs.roots entry $T/no-inputs: No such file" "$T/r3"
note "state_dir, socket directories, input roots: refused at start, naming them"

# A profile with a netguard policy needs the host's CA bundle: without
# ca-certificates (hidden here by a tmpfs in a mount namespace of this
# check's own) it is refused at start; tls.ca_bundle: none starts.
cp -R "$ROOT/rules" "$T/r4"
sed -i "s|^  netguard_socket:.*|  netguard_socket: $T/ng.sock|" "$T/r4/mcp-exec.yaml"
sed -i "s|^network:.*|network: mirror|" "$T/r4/profiles/default.yaml"
out=$(ok "$T/r4") || fail "an L2 profile with ca-certificates refused: $out"
hidden() { unshare -m --propagation private sh -c \
    'mount -t tmpfs none /etc/ssl/certs && exec "$@"' sh "$@"; }
st=0; msg=$(hidden "$MX" -n --rules "$T/r4" --state-dir "$T/state" \
    --audit-socket "$T/a.sock" 2>&1) || st=$?
[ $st = 1 ] && echo "$msg" | grep -q "tls: /etc/ssl/certs/ca-certificates.crt: No such file.*install ca-certificates" ||
    fail "no CA bundle: exit $st: $msg"
printf 'tls:\n  ca_bundle: none\n' >>"$T/r4/profiles/default.yaml"
out=$(hidden "$MX" -nv --rules "$T/r4" --state-dir "$T/state" --audit-socket "$T/a.sock" 2>&1) ||
    fail "tls.ca_bundle: none refused without a bundle: $out"
note "an L2 profile without the host's CA bundle: refused at start; ca_bundle: none starts"

# SIGTERM ends the stdio server as cleanly as stdin's end does: exit 0,
# nothing left for the sanitizers to report (the transport is freed).
mkfifo "$T/in"
"$MX" --stdio --rules "$ROOT/rules" --state-dir "$T/state" --audit-socket "$T/a.sock" \
    <"$T/in" >/dev/null 2>"$T/term.err" &
pid=$!
exec 3>"$T/in"
for _ in $(seq 1 250); do
	ls "$T/state"/sessions-*.json >/dev/null 2>&1 && break
	sleep 0.02
done
kill -TERM $pid
st=0; wait $pid || st=$?
exec 3>&-
[ $st = 0 ] && ! grep -q "Sanitizer" "$T/term.err" || fail "SIGTERM: exit $st: $(tail -5 "$T/term.err")"
note "SIGTERM: mcp-exec --stdio exits 0, its transport freed"
