#!/bin/bash
# Benchmarks, each printed as a ratio against a baseline measured in the
# same run (docs/benchmarks.md records the results and how to read them).
#
#   audit append: events/s with synchronous acks from 8 writers, against
#     bench/append_baseline writing the same bytes with the same number of
#     lines per fdatasync (the disk's limit).  Target >= 0.5.
#   audit durable ack: one synchronous writer (window 1), acks/s of the
#     daemon as shipped (appending) against the same lines appended with
#     one fdatasync each.  Target >= 0.9.  Beside it, round by round: the
#     daemon with flush.zero_ahead: true against the lines overwriting a
#     pre-zeroed file, and a raw append into blocks fallocate'd ahead
#     (FALLOC_FL_KEEP_SIZE): what each way of preparing the file gains.
#   audit retention: events/s of execution_started with 4 KiB of code
#     each, code.retention full (a blob written and fsynced per event,
#     one folder fsync per batch) against hash, same daemon, same load.
#   audit verify: `stockade audit verify` against `openssl dgst -sha256` of
#     the same files.  Target <= 1.5x its time.
#   sandbox start: `mcp-exec run -- python3 -I -S -c pass` against the bare
#     command and against bwrap with comparable isolation.  Target <= 1.10x.
#     Twice: state_dir on this checkout's disk, and on a tmpfs, as the
#     shipped /run/stockade is on a host (each run makes and removes a
#     few directories there; ext4's journal on a shared disk makes that
#     1-2 ms).
#   parallel one-shots: 64 `mcp-exec run`s at once, none refused; their
#     wall time against 64 bare Pythons at once.
#   mcp calls: execute_python `1+1` through the MCP server (bench/mcp_load)
#     in an existing session and in a new one, against the bare Python
#     start.  Targets for the existing session: p50 <= 0.05x, p99 <= 0.1x; its
#     calls once more with state_dir on a tmpfs, as shipped.
#     Then a new session
#     from the warm pool (pool: {size: 2}, each call after a pause long
#     enough for the refill) against the same bare start (target <= 0.3x),
#     and one whose pool pre-imported numpy and pandas, running `import
#     numpy, pandas`, against a bare `python3 -c "import numpy, pandas"`
#     (target <= 0.1x).  Each pooled call, the bare start it is measured
#     against, and an existing session's call shown beside it come after
#     the same pause: a process woken after an idle spell pays ~1.5 ms
#     here, bare Python as much as a call.  Also: calls in an existing session while a new
#     session (no pool) starts beside them, p50/p99/max: how long a
#     sandbox build holds the server's loop.
#   netguard attach: nft_open + nft_apply of an L2 policy with 1,000
#     allowlisted addresses in a fresh netns (bench/ng_attach), against
#     `nft -f` of the same ruleset in another.  Target >= 20x faster.
#   netguard connections: new TCP connections/s through L2 with 10 and
#     with 10,000 addresses (bench/ng_connrate, two private namespaces and
#     a veth).  Target: within 5% of each other.
#
#   egress proxy: a GET through netguard's HTTPS egress proxy (Squid, an
#     http destination with an injected token) from a sandbox, against
#     the same GET sent straight to the server with the token, in the
#     closed test world of tests/egress/test_l7.sh (L7_BENCH); p50 of
#     curl's time_total each way, and the ratio.  No target: the price of
#     method and path rules and a credential the code never holds.
#   fleet: one node (mcp-exec --http --node-id) behind the shipped router
#     (deploy/router/render-haproxy, Debian's haproxy), on loopback, the
#     shipped warm pool on (bench/fleet_load.py, 2026-07-28 clients on
#     kept-alive connections): an existing session's call through the
#     router against the same call straight to the node, interleaved
#     (p50, p99; target: the router adds <= 1 ms at p50); new sessions
#     per second sustained by 4 clients, and the time to a first command
#     (a new session's first call) alone and under that load; idle
#     sessions per GiB (the
#     proportional set size of their sandboxes' processes and of what
#     mcp-exec grew by, for 32 sessions).  What a fleet is sized with.
#
#   gvisor: the same one-shot start and MCP calls on a `runtime: gvisor`
#     profile, against the native runtime measured beside it (skipped,
#     saying why, where runsc cannot run).  No target: the price of the
#     stronger wall, for docs/runtimes.md.
#
#   quota: existing-session calls of a principal whose quotas are in Redis
#     (fleet.redis) over a unix socket and over TLS (fleet.tls), against
#     the same calls with quotas per node.  No target: what a fleet's
#     shared count costs a call.
#
#   wasm: native, gvisor and wasm in the same run: one-shot start, a new
#     session without and with a pool, a call in an existing session
#     (ms and ratio to native), and an idle session's memory (its
#     cgroup's, after one call).  No target: docs/runtimes.md's table.
#
# Arguments name the sections to run (append ack retention verify sandbox
# parallel mcp netguard l7 fleet gvisor wasm quota);
# none: all.
set -eu
: "${BUILD:=build}"
cd "$(dirname "$0")/.."
B="$PWD/$BUILD"
# On the real disk, not a tmpfs: fdatasync must cost what it costs.
T="$PWD/$BUILD/bench-tmp"
rm -rf "$T"
mkdir -p "$T"
trap 'kill -9 ${pid:-} ${zpid:-} 2>/dev/null || true; rm -rf "$T" ${MT:+"$MT"}' EXIT
EVENTS=${BENCH_EVENTS:-20000}		# per writer
RUNS=${BENCH_RUNS:-5}

"$B/stockade" audit keygen "$T/keys" >/dev/null
printf 'writers: [root]\ncheckpoint: {every_events: 10000}\n' >"$T/audit.yaml"

start() {
	rm -rf "$T/log"
	"$B/stockade-auditd" -d -f "$T/audit.yaml" --socket "$T/sock" \
	    --log-dir "$T/log" --key "$T/keys/checkpoint.key" 2>/dev/null &
	pid=$!
	while [ ! -S "$T/sock" ]; do sleep 0.02; done
}

field() { sed -n "s/.*\"$1\": \([0-9]*\).*/\1/p" | head -1; }

want() { [ -z "$SECTIONS" ] || [[ " $SECTIONS " == *" $1 "* ]]; }
SECTIONS="$*"
median() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
# Nanoseconds a command takes; EPOCHREALTIME costs no fork of its own.
ns() {
	local s e
	s=${EPOCHREALTIME/./}; "$@" >/dev/null; e=${EPOCHREALTIME/./}
	echo $(( (e - s) * 1000 ))
}

bench_append() {
echo "== audit append: 8 writers, synchronous acks"
printf '%-8s %12s %10s %14s %8s\n' window "events/s" "lines/sync" "baseline/s" ratio
for window in 1 16 64; do
	start
	out=$("$B/bench/audit_load" --socket "$T/sock" --writers 8 \
	    --events "$EVENTS" --window $window)
	st=$("$B/stockade" audit status --socket "$T/sock")
	kill $pid; wait $pid || true
	eps=$(echo "$out" | sed -n 's/.*events_per_sec \([0-9]*\).*/\1/p')
	records=$(echo "$st" | field records)
	batches=$(echo "$st" | field batches)
	per=$(( (records + batches / 2) / batches ))
	cat "$T"/log/audit-*.log >"$T/lines"
	base=$("$B/bench/append_baseline" "$T/lines" "$T/baseline.out" "$per" |
	    sed -n 's/.*lines_per_sec \([0-9]*\).*/\1/p')
	printf '%-8s %12s %10s %14s %8.2f\n' $window "$eps" "$per" "$base" \
	    "$(echo "$eps $base" | awk '{print $1 / $2}')"
done

}

# One synchronous writer: each event's ack waits for its own fdatasync.
# The baseline is the disk's limit for that: the same lines appended, one
# fdatasync each (append_baseline), as the shipped daemon appends.  Beside
# it, the two ways to spare a growing file's fdatasync its work: zeros
# written ahead (the daemon with flush.zero_ahead: true, against a raw
# overwrite of a pre-zeroed file), and blocks allocated ahead without
# changing the size (a raw append after fallocate KEEP_SIZE).
bench_ack() {
echo "== audit durable ack: 1 writer, window 1 (load $(cut -d' ' -f1-3 /proc/loadavg))"
# A shared disk's fdatasync swings tenfold from one second to the next:
# daemons and baselines take turns in short rounds, the ratio is per round.
local chunk=$(( EVENTS / 50 )) r e ez z a k d
local ra=() rz=() rg=() rk=() rkz=() es=() ezs=()
start
printf 'writers: [root]\ncheckpoint: {every_events: 10000}\nflush: {zero_ahead: true}\n' \
    >"$T/audit-zero.yaml"
rm -rf "$T/zlog"
"$B/stockade-auditd" -d -f "$T/audit-zero.yaml" --socket "$T/zsock" \
    --log-dir "$T/zlog" --key "$T/keys/checkpoint.key" 2>/dev/null &
zpid=$!
while [ ! -S "$T/zsock" ]; do sleep 0.02; done
# Give the I/O thread its idle moment to zero ahead, as a running daemon has.
for d in sock zsock; do
	"$B/bench/audit_load" --socket "$T/$d" --writers 1 --events 10 --window 1 >/dev/null
done
sleep 0.5
ack() {
	"$B/bench/audit_load" --socket "$T/$1" --writers 1 --events $chunk \
	    --window 1 | sed -n 's/.*events_per_sec \([0-9]*\).*/\1/p'
}
raw() {
	"$B/bench/append_baseline" "$T/lines" "$T/baseline.out" 1 "$@" |
	    sed -n 's/.*lines_per_sec \([0-9]*\).*/\1/p'
}
ratio() { awk -v x="$1" -v y="$2" 'BEGIN { printf "%.3f", x / y }'; }
for r in $(seq 1 $(( RUNS * 2 ))); do
	# Who goes first alternates: neither daemon always meets a disk
	# the other has just left busy.
	if [ $((r % 2)) = 1 ]; then e=$(ack sock); ez=$(ack zsock)
	else ez=$(ack zsock); e=$(ack sock); fi
	cat "$T"/log/audit-*.log | tail -n $chunk >"$T/lines"
	a=$(raw); k=$(raw keepsize); z=$(raw zeroed)
	es+=("$e"); ezs+=("$ez")
	ra+=("$(ratio "$e" "$a")"); rz+=("$(ratio "$ez" "$z")")
	rg+=("$(ratio "$ez" "$e")")
	rk+=("$(ratio "$k" "$a")"); rkz+=("$(ratio "$k" "$z")")
done
kill $pid $zpid; wait $pid $zpid || true
zpid=""
echo "as shipped (appending), acks/s per round: ${es[*]}"
echo "  ratio to a raw append+fdatasync, per round: ${ra[*]}"
echo "  median $(median "${ra[@]}") (target >= 0.9)"
echo "flush.zero_ahead: true, acks/s per round: ${ezs[*]}"
echo "  ratio to a raw pre-zeroed overwrite+fdatasync: median $(median "${rz[@]}");" \
    "to the daemon as shipped: median $(median "${rg[@]}")"
echo "raw append into blocks fallocate'd ahead (KEEP_SIZE): to a raw append," \
    "median $(median "${rk[@]}"); to a raw pre-zeroed overwrite, median $(median "${rkz[@]}")"
}

bench_retention() {
echo "== audit retention: execution_started with 4 KiB code, 8 writers, window 16"
local r
declare -A rate
for r in hash full; do
	printf 'writers: [root]\ncheckpoint: {every_events: 10000}\ncode: {retention: %s}\n' \
	    "$r" >"$T/audit-$r.yaml"
	rm -rf "$T/log"
	"$B/stockade-auditd" -d -f "$T/audit-$r.yaml" --socket "$T/sock" \
	    --log-dir "$T/log" --key "$T/keys/checkpoint.key" 2>/dev/null &
	pid=$!
	while [ ! -S "$T/sock" ]; do sleep 0.02; done
	out=$("$B/bench/audit_load" --socket "$T/sock" --writers 8 \
	    --events $(( EVENTS / 4 )) --window 16 --code 4096)
	kill $pid; wait $pid || true
	rate[$r]=$(echo "$out" | sed -n 's/.*events_per_sec \([0-9]*\).*/\1/p')
done
printf 'hash %s events/s, full %s events/s (%s blobs), ratio %.2f\n' \
    "${rate[hash]}" "${rate[full]}" "$(find "$T/log/blobs" -type f | wc -l)" \
    "$(echo "${rate[full]} ${rate[hash]}" | awk '{print $1 / $2}')"
}

bench_verify() {
echo "== audit verify vs openssl dgst -sha256 (same files)"
start
"$B/bench/audit_load" --socket "$T/sock" --writers 8 --events $(( EVENTS * 3 )) \
    --window 64 >/dev/null
kill $pid; wait $pid || true
size=$(cat "$T"/log/audit-*.log | wc -c)
v=(); o=()
for _ in $(seq 1 "$RUNS"); do
	v+=("$(ns "$B/stockade" audit verify "$T/log")")
	o+=("$(ns openssl dgst -sha256 "$T"/log/audit-*.log)")
done
vm=$(median "${v[@]}"); om=$(median "${o[@]}")
awk -v v="$vm" -v o="$om" -v s="$size" 'BEGIN {
	printf "log %.0f MB: verify %.1f ms (%.0f MB/s), openssl %.1f ms (%.0f MB/s), ratio %.2f\n",
	    s / 1e6, v / 1e6, s / (v / 1e9) / 1e6, o / 1e6, s / (o / 1e9) / 1e6, v / o }'

}

# unpooled DIR: rules DIR without the shipped default profile's warm pool:
# "new session" measures a build on the request path; pooled() sets its own.
unpooled() { sed -i '/^pool:$/,/^  size: [0-9]*$/d' "$1/profiles/default.yaml"; }

# A copy of the shipped rules that talks to this run's auditd.
bench_rules() {
	rm -rf "$T/rules"
	cp -R rules "$T/rules"
	unpooled "$T/rules"
	sed -i -e "s#^  audit_socket: .*#  audit_socket: $T/sock#" \
	    -e "s#^  driver_dir: .*#  driver_dir: $PWD/mcp-exec/driver#" \
	    -e "s#^    max_per_principal: .*#    max_per_principal: 16#" \
	    "$T/rules/mcp-exec.yaml"
}

bench_sandbox() {
echo "== sandbox: one-shot start, audited (median of $(( RUNS * 4 )) runs each, interleaved; load $(cut -d' ' -f1-3 /proc/loadavg))"
M="$T/mcp-state"
start
bench_rules
PY="/usr/bin/python3 -I -S -c pass"
bw() {
	bwrap --unshare-all --die-with-parent --new-session --cap-drop ALL \
	    --ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
	    --symlink usr/bin /bin --proc /proc --dev /dev --tmpfs /tmp \
	    --tmpfs /workspace --chdir /workspace --clearenv \
	    --setenv PATH /usr/bin --hostname sandbox $PY
}
# A tmpfs of this run's own for the second state_dir (sandbox uids walk
# down to their directories: 0711 all the way).
MT=$(mktemp -d /dev/shm/stockade-bench.XXXXXX)
chmod 0711 "$MT"
mx() { "$B/mcp-exec" run --rules "$T/rules" --state-dir "$M" -- $PY >/dev/null; }
mt() { "$B/mcp-exec" run --rules "$T/rules" --state-dir "$MT/s" -- $PY >/dev/null; }
bare() { $PY; }
a=(); b=(); c=(); d=()
for _ in $(seq 1 $(( RUNS * 4 ))); do
	a+=("$(ns mx)"); b+=("$(ns bare)"); c+=("$(ns bw)"); d+=("$(ns mt)")
done
rm -rf "$MT"
am=$(median "${a[@]}"); bm=$(median "${b[@]}"); cm=$(median "${c[@]}")
dm=$(median "${d[@]}")
awk -v a="$am" -v b="$bm" -v c="$cm" -v d="$dm" 'BEGIN {
	printf "bare %.1f ms, mcp-exec run %.1f ms (%.2fx bare; target <= 1.10x), bwrap %.1f ms (%.2fx bare); mcp-exec/bwrap %.2f\n",
	    b / 1e6, a / 1e6, a / b, c / 1e6, c / b, a / c
	printf "state_dir on a tmpfs: mcp-exec run %.1f ms (%.2fx bare), mcp-exec/bwrap %.2f\n",
	    d / 1e6, d / b, d / c }'
peak=$("$B/mcp-exec" run --rules "$T/rules" --state-dir "$M" -- /bin/true |
    sed -n 's/.*"memory_peak":\([0-9]*\).*/\1/p')
peakpy=$("$B/mcp-exec" run --rules "$T/rules" --state-dir "$M" -- $PY |
    sed -n 's/.*"memory_peak":\([0-9]*\).*/\1/p')
kill $pid; wait $pid || true
echo "sandbox memory (cgroup peak): /bin/true $(( peak / 1024 )) KiB, python -c pass $(( peakpy / 1024 )) KiB"
}

# 64 one-shot `mcp-exec run`s at once against one auditd: every one must
# run (no refusal, no failure); the wall time for all of them against 64
# bare Pythons started at once, in the same run.
bench_parallel() {
local n=${BENCH_PARALLEL:-64} i fails=0 s e bs be
echo "== sandbox: $n one-shot runs in parallel (load $(cut -d' ' -f1-3 /proc/loadavg))"
M="$T/mcp-state"
PY="/usr/bin/python3 -I -S -c pass"
start
bench_rules
local bare=()
bs=${EPOCHREALTIME/./}
for i in $(seq 1 "$n"); do $PY & bare+=($!); done
wait "${bare[@]}"
be=${EPOCHREALTIME/./}
local runs=()
s=${EPOCHREALTIME/./}
for i in $(seq 1 "$n"); do
	"$B/mcp-exec" run --rules "$T/rules" --state-dir "$M" -- $PY \
	    >"$T/par-$i.out" 2>"$T/par-$i.err" &
	runs+=($!)
done
for job in "${runs[@]}"; do
	wait "$job" || fails=$((fails + 1))
done
e=${EPOCHREALTIME/./}
kill $pid; wait $pid || true
ok=$(grep -l '"exit_code":0' "$T"/par-*.out | wc -l)
awk -v n="$n" -v ok="$ok" -v f="$fails" -v t=$((e - s)) -v b=$((be - bs)) 'BEGIN {
	printf "%d of %d ran (exit 0), %d failed or refused; all done in %.0f ms, bare %d at once %.0f ms (%.2fx)\n",
	    ok, n, f, t / 1e3, n, b / 1e3, t / b }'
[ "$fails" = 0 ] || sed -n 1p "$T"/par-*.err | sort | uniq -c | head -5
}

bench_mcp() {
echo "== mcp-exec: execute_python 1+1 over stdio, audited (sync execution_started; load $(cut -d' ' -f1-3 /proc/loadavg))"
start
bench_rules
out=$("$B/bench/mcp_load" --calls $(( RUNS * 400 )) --new $(( RUNS * 8 )) \
    --sessions 8 -- "$B/mcp-exec" --stdio --rules "$T/rules" \
    --state-dir "$T/mcp-state")
kill $pid; wait $pid || true
# The same calls with state_dir on a tmpfs, as the shipped /run/stockade
# is on a host: here / holds /run, and the status file's rename every
# 200 ms costs this disk's journal 0.4-1 ms of the loop (p99).
start
local st
st=$(mktemp -d /dev/shm/stockade-bench.XXXXXX)
tmpfs=$("$B/bench/mcp_load" --calls $(( RUNS * 400 )) --new 1 --sessions 1 \
    -- "$B/mcp-exec" --stdio --rules "$T/rules" --state-dir "$st" |
    sed -n 's/^existing/tmpfs/p')
kill $pid; wait $pid || true
rm -rf "$st"
printf '%s\n%s\n' "$out" "$tmpfs" | awk '
	$1 == "bare" { b50 = $2; b99 = $3 }
	$1 == "tmpfs" { t50 = $2; t99 = $3 }
	$1 == "new" || $1 == "existing" { p50[$1] = $2; p99[$1] = $3 }
	$1 == "calls_per_sec" { cps = $2 }
	$1 == "beside" { s50 = $2; s99 = $3; smax = $4 }
	END {
		printf "bare python3 -I -S -c pass: p50 %.2f ms\n", b50 / 1e6
		tgt["new"] = "; target p50 <= 0.3x"
		tgt["existing"] = "; targets p50 <= 0.05x, p99 <= 0.1x"
		for (k in p50)
			printf "%-8s session call: p50 %.2f ms (%.3fx bare), p99 %.2f ms (%.3fx bare)%s\n",
			    k, p50[k] / 1e6, p50[k] / b50, p99[k] / 1e6, p99[k] / b50, tgt[k]
		printf "existing session call while a new session starts beside it: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
		    s50 / 1e6, s99 / 1e6, smax / 1e6
		printf "existing session call, state_dir on a tmpfs: p50 %.2f ms (%.3fx bare), p99 %.2f ms (%.3fx bare)\n",
		    t50 / 1e6, t50 / b50, t99 / 1e6, t99 / b50
		printf "8 sessions, one call in flight each: %d calls/s\n", cps
	}'
pooled "pool: {size: 2}" 400 "1+1" "" \
    "pooled  new session (warm pool)" "0.3x" "python3 -I -S -c pass"
if /usr/bin/python3 -c "import numpy, pandas" 2>/dev/null; then
	pooled "pool: {size: 2, preimport: [numpy, pandas]}" 2500 \
	    "import numpy, pandas" "import numpy, pandas" \
	    "pooled  new session, numpy+pandas preimported" "0.1x" \
	    'python3 -c "import numpy, pandas"'
else
	echo "numpy+pandas pool: skipped (python3-numpy, python3-pandas not installed)"
fi
}

# pooled POOL PAUSE_MS CODE BARE_CODE LABEL TARGET BARE_LABEL: new sessions
# of a profile with POOL, each after PAUSE_MS (untimed: the refill).
pooled() {
start
bench_rules
printf '\n%s\n' "$1" >>"$T/rules/profiles/default.yaml"
local bare=()
[ -z "$4" ] || bare=(--bare-code "$4")
# mcp-exec's state_dir on a tmpfs, as the shipped /run/stockade is on a
# host (here / holds /run): every hand-out rewrites the status file, ~1 ms
# on this disk, ~0.2 ms on tmpfs.  The audit log stays on the disk.
local st
st=$(mktemp -d /dev/shm/stockade-bench.XXXXXX)
out=$("$B/bench/mcp_load" --only-new --new $(( RUNS * 4 )) --pause-ms "$2" \
    --code "$3" "${bare[@]}" -- "$B/mcp-exec" --stdio --rules "$T/rules" \
    --state-dir "$st")
kill $pid; wait $pid || true
rm -rf "$st"
echo "$out" | awk -v label="$5" -v tgt="$6" -v bl="$7" '
	$1 == "bare" { b50 = $2 }
	$1 == "new" { n50 = $2; n99 = $3 }
	$1 == "paused" { e50 = $2 }
	END {
		printf "%s: p50 %.2f ms (%.3fx bare %s %.2f ms; target <= %s), p99 %.2f ms; an existing session after the same pause %.2f ms\n",
		    label, n50 / 1e6, n50 / b50, bl, b50 / 1e6, tgt, n99 / 1e6, e50 / 1e6
	}'
}

bench_netguard() {
if [ "$(id -u)" != 0 ]; then
	echo "== netguard: skipped (needs root for network namespaces)"
	return
fi
echo "== netguard: attach L2, 1000 addresses, fresh netns (median of $(( RUNS * 4 )) runs each, interleaved)"
out=$("$B/bench/ng_attach" --runs $(( RUNS * 4 )))
echo "$out" | awk '
	{ for (i = 1; i < NF; i += 2) v[$i] = $(i + 1) }
	END {
		printf "netguard %.2f ms (of which nft_open %.2f ms), nft -f %.2f ms; nft -f / netguard %.1fx\n",
		    v["netguard_ns"] / 1e6, v["open_ns"] / 1e6, v["nft_ns"] / 1e6,
		    v["nft_ns"] / v["netguard_ns"]
	}'
echo "== netguard: new TCP connections/s through L2, 10 vs 10,000 addresses"
out=$("$B/bench/ng_connrate")
echo "$out" | awk '
	$1 == "connections" { printf "no table: %d/s\n", $6 }
	$1 == "mode" {
		printf "%-8s (%s set): 10 addresses %d/s, 10,000 addresses %d/s, ratio %.3f (paired %.3f)\n",
		    $2, $2 == "hosts" ? "hash" : "interval", $4, $6, $6 / $4, $8
	}'
}

bench_l7() {
echo "== egress proxy: a GET through it, against the same GET sent directly"
if [ "$(id -u)" != 0 ] || [ ! -x /usr/sbin/squid ]; then
	echo "SKIP l7: needs root and squid-openssl"
	return 0
fi
out=$(tests/clean-slate.sh env BUILD="$BUILD" L7_BENCH=$(( RUNS * 20 )) \
    bash tests/egress/test_l7.sh 2>&1) || { echo "l7 failed: $(echo "$out" | tail -3)"; return 0; }
echo "$out" | sed -n 's/^bench l7: //p'
}

# pss_kib UID_FIRST UID_COUNT PID: KiB of proportional set size of the
# processes of those uids (a node's sandboxes) and of PID (the node).
pss_kib() {
	/usr/bin/python3 - "$@" <<'PYEOF'
import glob, sys
first, count, node = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
total = 0
for d in glob.glob("/proc/[0-9]*"):
    try:
        uid = int([l for l in open(d + "/status") if l.startswith("Uid:")][0].split()[1])
        if d != "/proc/" + node and not first <= uid < first + count:
            continue
        total += sum(int(l.split()[1]) for l in open(d + "/smaps_rollup")
                     if l.startswith("Pss:"))
    except (OSError, IndexError):
        pass
print(total)
PYEOF
}

bench_fleet() {
echo "== fleet: one node behind the router, HTTP on loopback, warm pool as shipped (load $(cut -d' ' -f1-3 /proc/loadavg))"
if ! command -v haproxy >/dev/null; then
	echo "SKIP fleet: no haproxy (make deps)"
	return 0
fi
local first=700000 count=1000 idle=32 np rp tok node hp st base grown lw
start
bench_rules
# The shipped pool, room for the idle sessions, and uids of this node's
# own (its sandboxes' memory is counted by uid).
cp rules/profiles/default.yaml "$T/rules/profiles/default.yaml"
sed -i -e "s#^  first: .*#  first: $first#" -e "s#^  count: .*#  count: $count#"     -e "s#^    max_total: 32\$#    max_total: 64#"     -e "s#^    max_per_principal: .*#    max_per_principal: 64#" "$T/rules/mcp-exec.yaml"
tok=bench-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf 'tokens:\n  - sha256: "%s"\n    principal: "user:bench"\n' \
    "$(printf %s "$tok" | sha256sum | cut -d' ' -f1)" >"$T/rules/principals.yaml"
port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
np=$(port); rp=$(port)
st=$(mktemp -d /dev/shm/stockade-bench.XXXXXX)
"$B/mcp-exec" --http "127.0.0.1:$np" --rules "$T/rules" --state-dir "$st" \
    --node-id node-0 2>"$T/node.err" </dev/null &
node=$!
deploy/router/render-haproxy --listen "127.0.0.1:$rp" "node-0=127.0.0.1:$np" >"$T/haproxy.cfg"
haproxy -f "$T/haproxy.cfg" 2>"$T/haproxy.log" </dev/null &
hp=$!
for _ in $(seq 1 250); do
	curl -s -o /dev/null "http://127.0.0.1:$rp/" && curl -s -o /dev/null "http://127.0.0.1:$np/" && break
	sleep 0.02
done
sleep 1.5	# the pool fills; the router's first check passes
base=$(pss_kib $first $count $node)
coproc LOAD { /usr/bin/python3 bench/fleet_load.py "http://127.0.0.1:$rp/mcp" \
    "http://127.0.0.1:$np/mcp" "$tok" $(( RUNS * 200 )) 10 4 $idle 2>&1; }
local out="" line
while read -r line <&"${LOAD[0]}"; do
	out="$out$line"$'\n'
	case $line in idle*|fleet_load:*|Traceback*) break ;; esac
done
sleep 1	# the pool refills after the last idle session took its sandbox
grown=$(( $(pss_kib $first $count $node) - base ))
lw=${LOAD[1]}
exec {lw}>&-	# its input ends: fleet_load.py exits
wait "$LOAD_PID" 2>/dev/null || true
kill $hp $node; wait $hp $node 2>/dev/null || true
kill $pid; wait $pid || true
rm -rf "$st"
echo "$out" | awk -v grown="$grown" '
	$1 == "existing_direct" { d50 = $2; d99 = $3 }
	$1 == "existing_router" { r50 = $2; r99 = $3 }
	$1 == "new_per_sec" { nps = $2; w = $3 }
	$1 == "first_cmd" { f50 = $2; f99 = $3 }
	$1 == "first_alone" { a50 = $2; a99 = $3 }
	$1 == "idle" { idle = $2 }
	$1 ~ /^fleet_load:|^Traceback/ { print; bad = 1 }
	END {
		if (bad || !idle) { print "fleet: the load failed"; exit }
		printf "existing session call: direct p50 %.2f ms, p99 %.2f ms; through the router p50 %.2f ms (%.2fx, +%.2f ms; target <= +1 ms), p99 %.2f ms (%.2fx)\n",
		    d50 / 1e6, d99 / 1e6, r50 / 1e6, r50 / d50, (r50 - d50) / 1e6, r99 / 1e6, r99 / d99
		printf "time to first command (a new session'"'"'s first call through the router, pool refilled): p50 %.2f ms, p99 %.2f ms\n",
		    a50 / 1e6, a99 / 1e6
		printf "new sessions sustained through the router, %d clients: %.1f/s per node; time to first command under that load p50 %.2f ms, p99 %.2f ms\n",
		    w, nps, f50 / 1e6, f99 / 1e6
		printf "%d idle sessions: %.1f MiB (%.2f MiB each, PSS of their sandboxes and of mcp-exec'"'"'s growth): %d idle sessions per GiB\n",
		    idle, grown / 1024, grown / 1024 / idle, 1048576 / (grown / idle)
	}'
}

bench_gvisor() {
echo "== gvisor: one-shot start and MCP calls, native beside gvisor"
local PY="/usr/bin/python3 -I -S -c pass"
start
cp -R rules "$T/grules"
unpooled "$T/grules"
sed -i -e "s#^  audit_socket: .*#  audit_socket: $T/sock#" \
    -e "s#^  driver_dir: .*#  driver_dir: $PWD/mcp-exec/driver#" \
    -e "s#^    max_per_principal: .*#    max_per_principal: 16#" \
    "$T/grules/mcp-exec.yaml"
cp "$T/grules/profiles/default.yaml" "$T/grules/profiles/gvisor.yaml"
printf 'runtime: gvisor\n' >>"$T/grules/profiles/gvisor.yaml"
if ! why=$("$B/stockade" rules check "$T/grules" 2>&1); then
	echo "SKIP gvisor: $(echo "$why" | grep -m1 'cannot run')"
	kill $pid; wait $pid || true
	return 0
fi
local nat=() gv=() i
for i in $(seq 1 $(( RUNS * 2 ))); do
	nat+=("$(ns "$B/mcp-exec" run --rules "$T/grules" --state-dir "$T/gstate" -- $PY 2>/dev/null)")
	gv+=("$(ns "$B/mcp-exec" run --rules "$T/grules" --state-dir "$T/gstate" --profile gvisor -- $PY 2>/dev/null)")
done
awk -v n="$(median "${nat[@]}")" -v g="$(median "${gv[@]}")" 'BEGIN {
	printf "one-shot python3 -I -S -c pass: native %.1f ms, gvisor %.1f ms (%.2fx native)\n", n / 1e6, g / 1e6, g / n }'
for prof in default gvisor; do
	out=$("$B/bench/mcp_load" --calls $(( RUNS * 40 )) --new $(( RUNS * 2 )) \
	    --sessions 2 -- "$B/mcp-exec" --stdio --rules "$T/grules" \
	    --state-dir "$T/gstate" --profile "$prof" 2>"$T/mcp_load.err") || { echo "mcp_load ($prof) failed: $(grep -v unaudited "$T/mcp_load.err" | tail -2)"; continue; }
	echo "$out" | awk -v prof="$prof" '
		$1 == "new" || $1 == "existing" { printf "%-7s %-8s session call: p50 %.2f ms, p99 %.2f ms\n", prof == "default" ? "native" : prof, $1, $2 / 1e6, $3 / 1e6 }
		$1 == "beside" { printf "%-7s existing session call while a new one starts beside it: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", prof == "default" ? "native" : prof, $2 / 1e6, $3 / 1e6, $4 / 1e6 }'
done
kill $pid; wait $pid || true
}

# An idle session's memory, in bytes: one call, a pause, then its
# sandbox's cgroup (memory.current on v2, usage_in_bytes on v1).
IDLE_MEM='
import glob, os, sys, time
sys.path.insert(0, "tests/integration")
from mcpclient import Stdio, structured
mx, rules, state, prof = sys.argv[1:5]
c = Stdio([mx, "--stdio", "--rules", rules, "--state-dir", state, "--profile", prof])
c.initialize()
structured(c.tool("execute_python", {"code": "1+1", "timeout_ms": 30000}))
time.sleep(2)
sid = os.listdir(os.path.join(state, "sandboxes"))[0]
for f in glob.glob("/sys/fs/cgroup/**/stockade-%s/memory.current" % sid, recursive=True) + \
        glob.glob("/sys/fs/cgroup/memory/**/stockade-%s/memory.usage_in_bytes" % sid, recursive=True):
    print(open(f).read().strip())
    break
c.close()
'

bench_wasm() {
echo "== wasm: native, gvisor and wasm in the same run"
local PY="/usr/bin/python3 -I -S -c pass" rt prof i
local -A one=() mem=()
start
rm -rf "$T/wrules" "$T/wstate"
cp -R rules "$T/wrules"
unpooled "$T/wrules"
sed -i -e "s#^  audit_socket: .*#  audit_socket: $T/sock#" \
    -e "s#^  driver_dir: .*#  driver_dir: $B/share/stockade/driver#" \
    -e "s#^    max_per_principal: .*#    max_per_principal: 16#" \
    "$T/wrules/mcp-exec.yaml"
local profs=(default)
for rt in gvisor wasm; do
	# Pyodide's interpreter alone holds ~180 MB.
	sed -e "s/^  memory: .*/  memory: 768M/" \
	    "$T/wrules/profiles/default.yaml" >"$T/wrules/profiles/$rt.yaml"
	printf 'runtime: %s\n' $rt >>"$T/wrules/profiles/$rt.yaml"
	if why=$("$B/stockade" rules check "$T/wrules" 2>&1); then
		profs+=($rt)
	else
		echo "SKIP $rt: $(echo "$why" | grep -m1 'cannot run')"
		rm "$T/wrules/profiles/$rt.yaml"
	fi
done
name() { [ "$1" = default ] && echo native || echo "$1"; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", b ? a / b : 0 }'; }
for prof in "${profs[@]}"; do
	local t=()
	for i in $(seq 1 $(( RUNS * 2 ))); do
		t+=("$(ns "$B/mcp-exec" run --rules "$T/wrules" --state-dir "$T/wstate" --profile $prof -- $PY 2>/dev/null)")
	done
	one[$prof]=$(median "${t[@]}")
	printf 'one-shot python3 -c pass   %-7s %9.1f ms  (%.2fx native)\n' "$(name $prof)" \
	    "$(div ${one[$prof]} 1000000)" "$(div ${one[$prof]} ${one[default]})"
done
local -A nw=() ex=()
for prof in "${profs[@]}"; do
	out=$("$B/bench/mcp_load" --calls $(( RUNS * 20 )) --new $(( RUNS * 2 )) \
	    --sessions 2 -- "$B/mcp-exec" --stdio --rules "$T/wrules" \
	    --state-dir "$T/wstate" --profile "$prof" 2>"$T/mcp_load.err") ||
	    { echo "mcp_load ($prof) failed: $(grep -v unaudited "$T/mcp_load.err" | tail -2)"; continue; }
	nw[$prof]=$(echo "$out" | awk '$1 == "new" { print $2 }')
	ex[$prof]=$(echo "$out" | awk '$1 == "existing" { print $2 }')
	printf 'new session, no pool, p50  %-7s %9.1f ms  (%.2fx native)\n' "$(name $prof)" \
	    "$(div ${nw[$prof]} 1000000)" "$(div ${nw[$prof]} ${nw[default]})"
	printf 'existing-session call, p50 %-7s %9.2f ms  (%.2fx native)\n' "$(name $prof)" \
	    "$(div ${ex[$prof]} 1000000)" "$(div ${ex[$prof]} ${ex[default]})"
done
# The warm pool: each profile with one sandbox ahead; new sessions apart
# by more than a wasm sandbox takes to get ready (~3 s here); the whole
# section takes ~6 minutes.
rm -rf "$T/prules"
cp -R "$T/wrules" "$T/prules"
for prof in "${profs[@]}"; do
	printf '\npool:\n  size: 1\n' >>"$T/prules/profiles/$prof.yaml"
done
local -A pl=()
for prof in "${profs[@]}"; do
	out=$("$B/bench/mcp_load" --only-new --new $RUNS --pause-ms 4000 \
	    -- "$B/mcp-exec" --stdio --rules "$T/prules" --state-dir "$T/wstate" \
	    --profile "$prof" 2>"$T/mcp_load.err") ||
	    { echo "mcp_load pooled ($prof) failed: $(grep -v unaudited "$T/mcp_load.err" | tail -2)"; continue; }
	pl[$prof]=$(echo "$out" | awk '$1 == "new" { print $2 }')
	printf 'pooled new session, p50    %-7s %9.2f ms  (%.2fx native)\n' "$(name $prof)" \
	    "$(div ${pl[$prof]} 1000000)" "$(div ${pl[$prof]} ${pl[default]})"
done
for prof in "${profs[@]}"; do
	rm -rf "$T/istate"
	mem[$prof]=$(/usr/bin/python3 -c "$IDLE_MEM" "$B/mcp-exec" "$T/wrules" "$T/istate" "$prof" 2>/dev/null || true)
	[ -n "${mem[$prof]}" ] || { echo "idle memory ($prof): not measured"; continue; }
	printf 'idle session memory        %-7s %9.1f MB  (%.2fx native)\n' "$(name $prof)" \
	    "$(div ${mem[$prof]} 1048576)" "$(div ${mem[$prof]} ${mem[default]:-${mem[$prof]}})"
done
kill $pid; wait $pid || true
}

# fleet quotas: existing-session calls of a principal with fleet quotas,
# against the same calls with quotas per node only.
bench_quota() {
echo "== fleet quotas: execute_python 1+1 in an existing session, quotas per node / in Redis over a unix socket / over TLS (load $(cut -d' ' -f1-3 /proc/loadavg))"
command -v redis-server >/dev/null || { echo "fleet: skipped (no redis-server)"; return 0; }
local port mode out p50 p99 base=""
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
( cd "$T" &&
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
      -days 1 -subj /CN=bench-ca -keyout ca.key -out ca.pem &&
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
      -subj /CN=localhost -keyout srv.key -out srv.csr &&
  printf 'subjectAltName=IP:127.0.0.1\n' >ext &&
  openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
      -days 1 -extfile ext -out srv.pem ) >/dev/null 2>&1
redis-server --port 0 --unixsocket "$T/redis.sock" --tls-port "$port" \
    --bind 127.0.0.1 --tls-cert-file "$T/srv.pem" --tls-key-file "$T/srv.key" \
    --tls-ca-cert-file "$T/ca.pem" --tls-auth-clients no --save '' \
    --appendonly no --dir "$T" >"$T/redis.log" 2>&1 &
zpid=$!
while ! redis-cli -s "$T/redis.sock" ping 2>/dev/null | grep -q PONG; do sleep 0.02; done
start
for mode in node unix tls; do
	bench_rules
	sed -i 's/^  - name: "user:local"$/&\n    quotas: { calls_per_minute: 1000000, concurrent_calls: 64, wall_seconds_per_hour: 1000000 }/' \
	    "$T/rules/principals.yaml"
	sed -i '/^fleet:/,$d' "$T/rules/mcp-exec.yaml"
	case $mode in
	unix) printf 'fleet:\n  node_id: bench\n  redis: %s\n' "$T/redis.sock" >>"$T/rules/mcp-exec.yaml" ;;
	tls) printf 'fleet:\n  node_id: bench\n  redis: 127.0.0.1:%s\n  tls: { ca: %s }\n' "$port" "$T/ca.pem" >>"$T/rules/mcp-exec.yaml" ;;
	esac
	out=$("$B/bench/mcp_load" --calls $(( RUNS * 400 )) --new 1 --sessions 1 \
	    -- "$B/mcp-exec" --stdio --rules "$T/rules" --state-dir "$T/fleet-$mode")
	p50=$(echo "$out" | awk '$1 == "existing" { print $2 }')
	p99=$(echo "$out" | awk '$1 == "existing" { print $3 }')
	[ -n "$base" ] || base=$p50
	awk -v m="$mode" -v a="$p50" -v b="$p99" -v z="$base" 'BEGIN {
		printf "%-5s existing session call: p50 %.3f ms (%.3fx per node), p99 %.3f ms\n", m, a / 1e6, a / z, b / 1e6 }'
done
kill $pid; wait $pid || true
kill $zpid; wait $zpid 2>/dev/null || true
zpid=""
}

for s in append ack retention verify sandbox parallel mcp netguard l7 fleet gvisor wasm quota; do
	if want $s; then bench_$s; fi
done
