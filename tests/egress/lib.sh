# Shared by the egress tests: a closed topology of network namespaces,
#
#   sandbox netns(es) ==netguard's veths== gateway netns ==veth== world netns
#
# The world holds the fake hosts (documentation and metadata addresses) and
# dnsmasq; it has no route out.  Nothing is ever linked to the root
# namespace, and the cleanup trap removes every namespace, /etc/netns dir
# and process of this run, also on failure.  Sources the integration lib
# for the per-test stockade-auditd (start_auditd, verify, fail, note).
. "$(dirname "$0")/../integration/lib.sh"

EG="$ROOT/tests/egress"
NETGUARD="$BIN/netguard"
NG_SOCK="$T/netguard.sock"
NG_PID=""
DNSMASQ_PID=""
# Unique per run: several suites may run at once.
NS_W="stk-world-$$"
NS_G="stk-gw-$$"
NSES=""				# every namespace of this run, for cleanup
HOSTS="$T/world.hosts"		# dnsmasq --addn-hosts (moving.test)
PROBE_TIMEOUT=20		# seconds: no probe.py run may take longer
WAIT_EVENT=5			# seconds to wait for an asynchronous audit record

# The fake hosts and what each serves (tests/egress/world.py).
WORLD_V4="203.0.113.10 203.0.113.100 203.0.113.101 198.51.100.20
	169.254.169.254 100.100.100.200 168.63.129.16 192.0.0.192 10.0.0.5"
WORLD_V6="2001:db8::10 fd00:ec2::254"
# 169.254.169.254 as inet_aton (and so getaddrinfo and curl) accept it.
META_SPELLINGS="169.254.169.254 0xA9FEA9FE 2852039166 0251.0376.0251.0376 0xa9.0xfe.0xa9.0xfe"
WORLD_SPECS="echo:203.0.113.10:853 echo:192.0.2.53:853
	echo:203.0.113.10:7000 echo:198.51.100.20:7000 uecho:198.51.100.20:7000
	echo:203.0.113.100:7000 echo:203.0.113.101:7000"

root_links() { ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | sort; }
root_tables() { nft list tables 2>/dev/null | sort; }

# Stops netguard (TERM, then KILL after 3 s); returns its exit status.
stop_netguard() {
	local st=0
	[ -n "$NG_PID" ] || return 0
	kill -TERM "$NG_PID" 2>/dev/null || true
	for _ in $(seq 1 30); do
		kill -0 "$NG_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$NG_PID" 2>/dev/null || true
	wait "$NG_PID" || st=$?
	NG_PID=""
	return $st
}

# What netguard said before it failed: a sanitizer report first.
ng_stderr_summary() {
	local f="$T/netguard.err"
	[ -s "$f" ] || return 0
	if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$f"; then
		echo "--- netguard: sanitizer report"
		grep -m1 -B3 -A16 -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$f" |
		    grep -vE '^ +(Shadow|Stack|Global|Heap|Freed|Poisoned|Container|Array|Intra|ASan|Left|Right|Partially|Addressable)'
	else
		echo "--- netguard stderr (tail)"
		tail -12 "$f"
	fi
}

egress_cleanup() {
	local st=$? l t ns p
	set +e
	# Messages go to fd 3; stderr is closed to the shell's "Killed" notices
	# for the jobs this cleanup ends.
	exec 3>&2 2>/dev/null
	stop_netguard >/dev/null 2>&1
	if [ "$st" != 0 ] && [ "$st" != 77 ]; then
		ng_stderr_summary >&3
		# EGRESS_KEEP=DIR: keep this test's logs for a closer look.
		if [ -n "${EGRESS_KEEP:-}" ]; then
			mkdir -p "$EGRESS_KEEP/$(basename "$0" .sh)"
			cp -R "$T"/*.err "$T"/*.log "$LOG" "$R" \
			    "$EGRESS_KEEP/$(basename "$0" .sh)/" 2>/dev/null
		fi
	fi
	if [ -n "$AUDITD_PID" ]; then
		kill -9 "$AUDITD_PID" 2>/dev/null
		{ wait "$AUDITD_PID"; } 2>/dev/null
		AUDITD_PID=""
	fi
	# Anything netguard (wrongly) made in the root namespace that points
	# into ours is removed and fails the test.
	if [ -n "${ROOT_LINKS+x}" ]; then
		for l in $(comm -13 <(echo "$ROOT_LINKS") <(root_links)); do
			if ip -d link show "$l" 2>/dev/null | grep -q "link-netns stk-"; then
				echo "FAIL: link $l left in the root namespace" >&3
				ip link del "$l" 2>/dev/null
				st=1
			fi
		done
		for t in $(comm -13 <(echo "$ROOT_TABLES") <(root_tables) |
		    awk '$3 ~ /^netguard/ {print $2 "/" $3}'); do
			echo "FAIL: nft table $t left in the root namespace" >&3
			nft delete table "${t%/*}" "${t#*/}" 2>/dev/null
			st=1
		done
	fi
	for ns in $NSES; do
		for p in $(ip netns pids "$ns" 2>/dev/null); do
			kill -9 "$p" 2>/dev/null
		done
	done
	for ns in $NSES; do
		ip netns del "$ns" 2>/dev/null
		rm -rf "/etc/netns/$ns"
	done
	rmdir /etc/netns 2>/dev/null
	cleanup
	exit $st
}
trap egress_cleanup EXIT

skip() { echo "$*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, nftables)"
command -v nft >/dev/null || skip "nft not installed"
command -v dnsmasq >/dev/null || skip "dnsmasq not installed"
ROOT_LINKS=$(root_links)
ROOT_TABLES=$(root_tables)

# ns_add NAME: a new, empty namespace, removed at exit.
ns_add() {
	ip netns add "$1" || skip "cannot create network namespaces"
	NSES="$NSES $1"
}

# in_ns NS CMD...: runs CMD inside NS, bounded.
in_ns() { local ns=$1; shift; ip netns exec "$ns" timeout "$PROBE_TIMEOUT" "$@"; }
probe() { local ns=$1; shift; in_ns "$ns" "$PY" "$EG/probe.py" "$@"; }

# ---------------------------------------------------------------- topology
# topo_up: the world (fake hosts, dnsmasq) and the gateway, linked by a
# veth; the gateway routes everything to the world and forwards.
topo_up() {
	ns_add "$NS_W"
	ns_add "$NS_G"
	ip -n "$NS_G" link add up0 type veth peer name w0 netns "$NS_W"
	ip -n "$NS_W" link set lo up
	ip -n "$NS_W" link set w0 up
	ip -n "$NS_W" addr add 192.0.2.254/24 dev w0
	ip -n "$NS_W" addr add 192.0.2.53/24 dev w0
	for a in $WORLD_V4; do ip -n "$NS_W" addr add "$a/32" dev w0; done
	ip -n "$NS_W" -6 addr add 2001:db8:ff::2/64 dev w0 nodad
	for a in $WORLD_V6; do ip -n "$NS_W" -6 addr add "$a/128" dev w0 nodad; done
	ip -n "$NS_G" link set lo up
	ip -n "$NS_G" link set up0 up
	ip -n "$NS_G" addr add 192.0.2.1/24 dev up0
	ip -n "$NS_G" route add default via 192.0.2.254
	ip -n "$NS_G" -6 addr add 2001:db8:ff::1/64 dev up0 nodad
	ip -n "$NS_G" -6 route add default via 2001:db8:ff::2
	ip netns exec "$NS_G" sysctl -qw net.ipv4.ip_forward=1
	world_start
	dns_start
}

world_start() {
	local specs="" a
	for a in $WORLD_V4; do specs="$specs http:$a:80"; done
	for a in $WORLD_V6; do specs="$specs http:[$a]:80"; done
	ip netns exec "$NS_W" "$PY" "$EG/world.py" "$T/world.log" "$T/world.ready" \
	    $specs $WORLD_SPECS 2>>"$T/world.err" &
	disown $!		# killed by namespace at exit, without job notices
	for _ in $(seq 1 100); do
		[ -s "$T/world.ready" ] && return 0
		sleep 0.05
	done
	cat "$T/world.err" >&2
	fail "world servers did not start"
}

# dns_start: dnsmasq in the world on 192.0.2.53, the upstream of every
# policy, with the test zone.  moving.test lives in $HOSTS (dns_move).
dns_start() {
	echo "203.0.113.100 moving.test" >"$HOSTS"
	ip netns exec "$NS_W" dnsmasq -k --conf-file=/dev/null --user=root --group=root \
	    --no-resolv --no-hosts --pid-file= --listen-address=192.0.2.53 --local=/test/ \
	    --bind-interfaces --local-ttl=2 --log-queries --log-facility="$T/dnsmasq.log" \
	    --addn-hosts="$HOSTS" \
	    --host-record=allowed.test,203.0.113.10,300 \
	    --host-record=denied.test,198.51.100.20,300 \
	    --host-record=private.test,10.0.0.5,300 \
	    --host-record=meta.test,169.254.169.254,300 \
	    --host-record=v6.test,2001:db8::10,300 \
	    --cname=alias.test,allowed.test \
	    --address=/wild.test/203.0.113.10 \
	    --txt-record=txt.test,"stockade test" \
	    --txt-record=txt.wild.test,"stockade test" 2>>"$T/dnsmasq.err" &
	DNSMASQ_PID=$!
	disown $!
	for _ in $(seq 1 50); do
		probe "$NS_G" dns -t 0.2 192.0.2.53 allowed.test 2>/dev/null |
		    grep -q '^rcode=NOERROR answers=A:203.0.113.10' && return 0
		kill -0 "$DNSMASQ_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$T/dnsmasq.err" >&2
	fail "dnsmasq did not answer"
}

# dns_move ADDR: moving.test now resolves to ADDR (TTL 2 s).
dns_move() {
	echo "$1 moving.test" >"$HOSTS"
	kill -HUP "$DNSMASQ_PID"
	for _ in $(seq 1 50); do
		probe "$NS_G" dns -t 0.2 192.0.2.53 moving.test 2>/dev/null |
		    grep -q "answers=A:$1 " && return 0
		sleep 0.1
	done
	fail "dnsmasq still does not answer moving.test with $1"
}

# dns_saw PATTERN: dnsmasq logged a query matching PATTERN (grep -E).
dns_saw() { grep -qE "$1" "$T/dnsmasq.log"; }

# serve NS NAME SPEC...: world.py inside NS (e.g. a sandbox's own
# listener), logging to $T/NAME.log.
serve() {
	local ns=$1 name=$2; shift 2
	ip netns exec "$ns" "$PY" "$EG/world.py" "$T/$name.log" "$T/$name.ready" "$@" \
	    2>>"$T/$name.err" &
	disown $!
	for _ in $(seq 1 100); do
		[ -s "$T/$name.ready" ] && return 0
		sleep 0.05
	done
	fail "$name: listener did not start: $(cat "$T/$name.err")"
}

# world_saw PROTO ADDR PORT: a fake host got a connection (or datagram).
world_saw() { grep -q "^$1 $2 $3 " "$T/world.log"; }
# world_never PROTO ADDR PORT: ... and fails the test if it did.
world_never() {
	! world_saw "$@" || fail "$2:$3 ($1) was reached: netguard let it through"
}

# ---------------------------------------------------------------- netguard
# ng_rules: the shipped rules/ copied to $R, with network/ emptied so that
# only the policies a test writes with policy() exist, and no warm pool.
ng_rules() {
	[ -d "$R" ] && return 0
	cp -R "$ROOT/rules" "$R"
	rm -rf "$R/network"
	mkdir -p "$R/network"
	# No warm pool unless a test asks for one (test_pool.sh).
	sed -i '/^pool:$/,/^  size: [0-9]*$/d' "$R/profiles/default.yaml"
}

# policy NAME LEVEL [YAML LINE...]: writes $R/network/NAME.yaml.
policy() {
	local f="$R/network/$1.yaml" line
	ng_rules
	printf 'level: %s\n' "$2" >"$f"
	shift 2
	for line in "$@"; do printf '%s\n' "$line" >>"$f"; done
}

# The standard L2 allowlist of the tests.
L2_ALLOW='allow:
  - names: [allowed.test, alias.test, "*.wild.test", moving.test, private.test, meta.test]
    ports: [80, 7000]
  - cidrs: [203.0.113.0/28]
    ports: [80, 7000]
resolver:
  upstreams: [192.0.2.53]'
L3_DNS='resolver:
  upstreams: [192.0.2.53]'

need_netguard() {
	[ -x "$NETGUARD" ] || skip "netguard not built ($NETGUARD)"
	"$STOCKADE" net 2>&1 | grep -q 'stockade net attach' || skip "stockade net not built"
}

# start_netguard [ARGS]: netguard in the foreground on $NG_SOCK, the
# gateway namespace as its uplink, writing to this test's auditd.
start_netguard() {
	need_netguard
	ng_rules
	rm -f "$NG_SOCK"
	"$NETGUARD" -d --rules "$R" --socket "$NG_SOCK" --audit-socket "$SOCK" \
	    --uplink-netns "$NS_G" --state-dir "$T/ngstate" "$@" \
	    2>>"$T/netguard.err" &
	NG_PID=$!
	for _ in $(seq 1 250); do
		[ -S "$NG_SOCK" ] && return 0
		kill -0 "$NG_PID" 2>/dev/null || { NG_PID=""; fail "netguard died at start"; }
		sleep 0.02
	done
	fail "netguard did not create $NG_SOCK"
}

net() { timeout 20 "$STOCKADE" net "$@"; }

# attach NS POLICY: `stockade net attach`; the JSON reply is kept in
# $T/attach.NS and the namespace's resolv.conf points at the resolver.
attach() {
	net attach --socket "$NG_SOCK" --netns "/run/netns/$1" --policy "$2" \
	    --session "s-$1" --sandbox "sb-$1" --principal user:egress \
	    >"$T/attach.$1" 2>"$T/attach.$1.err" ||
	    fail "attach $1 $2: $(cat "$T/attach.$1.err")"
	"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ok"] is True, d' \
	    "$T/attach.$1" || fail "attach $1 replied: $(cat "$T/attach.$1")"
	local res
	res=$(att "$1" resolver)
	mkdir -p "/etc/netns/$1"
	if [ -n "$res" ]; then
		printf 'nameserver %s\noptions timeout:1 attempts:2\n' "$res" \
		    >"/etc/netns/$1/resolv.conf"
	else
		# L0/L1: no resolver; names must not leak to the host's.
		printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' \
		    >"/etc/netns/$1/resolv.conf"
	fi
}

# att NS KEY: a field of NS's attach reply ("" when absent).
att() {
	"$PY" -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]) or "")' \
	    "$T/attach.$1" "$2"
}

# ng_set KEY VALUE: sets an indented or top-level KEY of $R/netguard.yaml.
ng_set() {
	ng_rules
	sed -i "s|^\( *$1:\).*|\1 $2|" "$R/netguard.yaml"
	grep -q "^ *$1: $2\$" "$R/netguard.yaml" || fail "ng_set $1 missed"
}

# sb_v6 NS: gives NS an IPv6 address and default route on netguard's veth
# (as a sandbox with IPv6 would have), so v6 packets reach nft's output hook.
sb_v6() {
	ip netns exec "$1" sysctl -qw net.ipv6.conf.eth0.disable_ipv6=0
	ip -n "$1" -6 addr add 2001:db8:5b::2/64 dev eth0 nodad
	ip -n "$1" -6 route add default dev eth0
}

# has_table NS FAMILY NAME: nft table FAMILY NAME exists in NS.
has_table() { ip netns exec "$1" nft list tables 2>/dev/null | grep -qx "table $2 $3"; }

# sandbox NS POLICY: a new namespace attached under POLICY.
sandbox() { ns_add "$1"; attach "$1" "$2"; }

# ---------------------------------------------------------------- checks
# expect_connect NS ok|fail [-t S] TARGET...: every target connects (ok)
# or none does (fail).  Each result line (with the answering host's body
# for HTTP) is appended to $T/probe.log for closer checks.
expect_connect() {
	local ns=$1 want=$2 out target res addr extra; shift 2
	out=$(probe "$ns" connect "$@") || fail "probe connect $*: $out"
	echo "$out" >>"$T/probe.log"
	while read -r target res addr extra; do
		[ "$res" = "$want" ] || fail "$ns: $target: expected $want, got $res $addr $extra"
	done <<<"$out"
}

# expect_dns NS REGEX ARGS...: probe.py dns ARGS prints a line matching REGEX.
expect_dns() {
	local ns=$1 re=$2 out; shift 2
	out=$(probe "$ns" dns "$@")
	echo "dns $* -> $out" >>"$T/probe.log"
	echo "$out" | grep -qE "$re" || fail "$ns: dns $*: expected /$re/, got: $out"
}

# expect_event EVENT COND...: an audit record (waits up to $WAIT_EVENT s);
# see events.py for COND.  no_event: none, after a short wait.
# EGRESS_CONTINUE=1 (triage only): a missing record is reported and the
# test goes on, so one run shows every broken event; the test still fails.
expect_event() {
	"$PY" "$EG/events.py" "$LOG" --wait "$WAIT_EVENT" "$@" >/dev/null ||
	    event_fail "audit record $* missing"
}
no_event() {
	"$PY" "$EG/events.py" "$LOG" --wait 1 --none "$@" >/dev/null ||
	    event_fail "unexpected audit record $*"
}
EVENT_FAILS=0
event_fail() {
	[ -n "${EGRESS_CONTINUE:-}" ] || fail "$*"
	echo "FAIL (continuing): $*" >&2
	EVENT_FAILS=$((EVENT_FAILS + 1))
}

# denied NS RULE PROTO DST [DPORT]: netguard audited a drop from NS.
denied() {
	set -- "$1" "$2" "$3" "$4" "${5:-}"
	expect_event egress_denied "session_id=s-$1" "rule=$2" "protocol=$3" \
	    "dst_ip=$4" ${5:+"dst_port=$5"}
}

# egress_finish: netguard and auditd stop cleanly, the sanitizers were
# quiet, and the audit log verifies.
egress_finish() {
	if [ -n "$NG_PID" ]; then
		kill -0 "$NG_PID" 2>/dev/null || fail "netguard died during the test"
		stop_netguard || fail "netguard exit status $? on SIGTERM"
	fi
	! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$T/netguard.err" 2>/dev/null ||
	    fail "sanitizer report in netguard's stderr"
	stop_auditd || fail "auditd exit status $?"
	out=$(verify 2>&1) || fail "audit verify: $out"
	[ "$EVENT_FAILS" = 0 ] || fail "$EVENT_FAILS audit record check(s) failed"
}
