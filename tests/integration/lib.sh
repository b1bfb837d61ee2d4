# Shared by the integration tests: an isolated stockade-auditd per test,
# in a scratch directory, with its own key, socket and log.
set -eu

: "${BUILD:=build}"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$BUILD"
STOCKADE="$BIN/stockade"
AUDITD="$BIN/stockade-auditd"
LOAD="$BIN/bench/audit_load"
HERE="$ROOT/tests/integration"
# Debian's interpreter: test clients may run as another uid.
PY=/usr/bin/python3
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

T=$(mktemp -d "${TMPDIR:-/tmp}/stockade-it.XXXXXX")
SOCK="$T/auditd.sock"
LOG="$T/log"
CP="$T/offhost"
KEYS="$T/keys"
CONF="$T/audit.yaml"
AUDITD_PID=""

cleanup() {
	# wait: the shell would otherwise report the killed job on stderr.
	[ -z "$AUDITD_PID" ] || { kill -9 "$AUDITD_PID" 2>/dev/null
		wait "$AUDITD_PID" 2>/dev/null; } || true
	for m in $(awk -v t="$T" '$2 ~ "^"t {print $2}' /proc/mounts); do
		umount -l "$m" 2>/dev/null || true
	done
	rm -rf "$T"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "  $*"; }

# Writes $CONF: the given top-level YAML lines, on top of the built-in
# defaults (socket, log, key and off-host paths come from flags).
make_conf() {
	printf 'writers: [root]\n' >"$CONF"
	for line in "$@"; do
		printf '%s\n' "$line" >>"$CONF"
	done
}

keygen() {
	[ -f "$KEYS/checkpoint.key" ] || "$STOCKADE" audit keygen "$KEYS" >/dev/null
}

# start_auditd [extra args]: starts the daemon, waits for its socket.
start_auditd() {
	keygen
	[ -f "$CONF" ] || make_conf
	rm -f "$SOCK"
	# Not holding an mcp_serve fifo open: mcp-exec must see its stdin close.
	(for v in $(compgen -v IN_); do eval "exec ${!v}>&-"; done
	 exec "$AUDITD" -d -f "$CONF" --socket "$SOCK" --log-dir "$LOG" \
	    --key "$KEYS/checkpoint.key" --checkpoints "$CP" "$@" \
	    2>>"$T/auditd.err") &
	AUDITD_PID=$!
	for _ in $(seq 1 200); do
		[ -S "$SOCK" ] && return 0
		kill -0 "$AUDITD_PID" 2>/dev/null || { cat "$T/auditd.err" >&2; fail "auditd died at start"; }
		sleep 0.02
	done
	fail "auditd did not create $SOCK"
}

# stop_auditd [signal]: stops it and waits; returns its exit status.
stop_auditd() {
	sig=${1:-TERM}
	[ -n "$AUDITD_PID" ] || return 0
	kill -s "$sig" "$AUDITD_PID" 2>/dev/null || true
	st=0
	wait "$AUDITD_PID" || st=$?
	AUDITD_PID=""
	return $st
}

verify() {
	"$STOCKADE" audit verify "$LOG" --pubkey "$KEYS/checkpoint.pub" \
	    --checkpoints "$CP" "$@"
}

# expect_records EVENT MIN: at least MIN records of type EVENT in the log.
expect_records() {
	n=$(cat "$LOG"/audit-*.log | grep -c "\"event\":\"$1\"" || true)
	[ "$n" -ge "$2" ] || fail "expected >= $2 $1 records, found $n"
}

rawclient() { "$PY" "$HERE/rawclient.py" "$SOCK" "$@"; }

# tls_certs: a CA ($T/ca.pem, .key) and the certificate it signed for a
# collector on loopback, localhost and 127.0.0.1 ($T/server.pem, .key).
tls_certs() {
	( cd "$T" &&
	  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	      -days 2 -subj /CN=test-ca -keyout ca.key -out ca.pem &&
	  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	      -subj /CN=localhost -keyout server.key -out server.csr &&
	  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >ext &&
	  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key \
	      -CAcreateserial -days 2 -extfile ext -out server.pem ) \
	    >/dev/null 2>&1 || fail "openssl"
}

# ---------------------------------------------------------------- mcp-exec
MX="$BIN/mcp-exec"
R="$T/rules"			# the shipped policy, pointed at this test
S="$T/state"

# mcp_rules: copies rules/ to $R with this test's audit socket and the
# checkout's driver; sandbox uids must reach $S.
mcp_rules() {
	chmod 0711 "$T"
	cp -R "$ROOT/rules" "$R"
	sed -i -e "s|^\(  audit_socket:\).*|\1 $SOCK|" \
	    -e "s|^\(  driver_dir:\).*|\1 $ROOT/mcp-exec/driver|" "$R/mcp-exec.yaml"
	grep -q "audit_socket: $SOCK" "$R/mcp-exec.yaml" || fail "sed missed audit_socket"
	# No warm pool unless a test asks for one: a test counts only the
	# sandboxes, cgroups and records its own calls make.
	sed -i '/^pool:$/,/^  size: [0-9]*$/d' "$R/profiles/default.yaml"
	! grep -q "^pool:" "$R/profiles/default.yaml" || fail "sed missed pool"
}

# gvisor_or_skip: with rules in $R naming `runtime: gvisor`, skip (exit
# 77), saying why, where runsc cannot run here; any other refusal fails.
# (wasm_or_skip: the same for `runtime: wasm`, where neither the pinned
# node of `make deps` nor the host's is there and 20 or later.)
wasm_or_skip() { gvisor_or_skip; }
gvisor_or_skip() {
	local msg
	msg=$("$STOCKADE" rules check "$R" 2>&1) && return 0
	echo "$msg" | grep -q "runtime: [a-z]* cannot run" || fail "rules check: $msg"
	echo "SKIP: $(echo "$msg" | grep -m1 'cannot run')"
	exit 77
}

# mcp_tokens PRINCIPAL_A PRINCIPAL_B: a bearer token for each ($TOKA,
# $TOKB), written to $R/principals.yaml by their hashes only.
mcp_tokens() {
	TOKA=tokA-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
	TOKB=tokB-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
	cat >"$R/principals.yaml" <<EOF
tokens:
  - sha256: $(printf %s "$TOKA" | sha256sum | cut -d' ' -f1)
    principal: "$1"
  - sha256: $(printf %s "$TOKB" | sha256sum | cut -d' ' -f1)
    principal: "$2"
EOF
}

# mcp_serve NAME: mcp-exec --stdio fed through a fifo held open on fd $IN_NAME.
mcp_serve() {
	mkfifo "$T/$1.in"
	"$MX" --stdio --rules "$R" --state-dir "$S" <"$T/$1.in" >"$T/$1.out" \
	    2>>"$T/mx.err" &
	eval "PID_$1=$!"
	exec {fd}>"$T/$1.in"
	eval "IN_$1=$fd"
	printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	    '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&"$fd"
}
# mcp_call NAME ID ARGUMENTS: one execute_python, waits for its reply.
mcp_call() {
	local fd pid
	eval "fd=\$IN_$1 pid=\$PID_$1"
	printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"execute_python","arguments":%s}}\n' "$2" "$3" >&"$fd"
	# MCP_CALL_TRIES: the guest's emulated CPU is many times slower.
	for _ in $(seq 1 "${MCP_CALL_TRIES:-250}"); do
		grep "\"id\":$2[,}]" "$T/$1.out" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null ||
			fail "mcp-exec $1 is gone, no reply to call $2: $(tail -3 "$T/mx.err")"
		sleep 0.02
	done
	fail "no reply to call $2 of $1: $(tail -3 "$T/mx.err")"
}

# ------------------------------------------------------- mcp-exec --http
MX_PID=""

free_port() {
	"$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_mx [ARGS]: mcp-exec --http on a fresh port ($PORT) with $R, waits
# until it answers.
start_mx() {
	PORT=$(free_port)
	"$MX" -v --http "127.0.0.1:$PORT" --rules "$R" --state-dir "$T/mx-state" \
	    "$@" 2>>"$T/mx.err" </dev/null &
	MX_PID=$!
	for _ in $(seq 1 250); do
		curl -s -o /dev/null "http://127.0.0.1:$PORT/" && return 0
		kill -0 "$MX_PID" 2>/dev/null || { cat "$T/mx.err" >&2; fail "mcp-exec died at start"; }
		sleep 0.02
	done
	fail "mcp-exec did not listen on $PORT"
}

# stop_mx: SIGTERM, then its exit status.
stop_mx() {
	[ -n "$MX_PID" ] || return 0
	kill -TERM "$MX_PID" 2>/dev/null || true
	st=0
	wait "$MX_PID" || st=$?
	MX_PID=""
	return $st
}
