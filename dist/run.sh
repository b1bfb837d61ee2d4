#!/bin/bash
# `make run`: the suite with the policy in rules/, state kept in ./state.
# Generates a checkpoint key on first use, starts what exists of the suite
# (today: stockade-auditd), prints how to use it, and stops everything
# cleanly on Ctrl-C.
set -eu
: "${BUILD:=build}"
cd "$(dirname "$0")/.."
B="$PWD/$BUILD"
S="$PWD/state"
mkdir -p "$S/run" "$S/audit" "$S/offhost"
chmod 0750 "$S"

if [ ! -f "$S/keys/checkpoint.key" ]; then
	"$B/stockade" audit keygen "$S/keys"
fi
# The shipped policy, with the invoking user added as an audit writer.
me=$(id -un)
sed "s/^writers: \[root\]/writers: [root, $me]/" rules/audit.yaml >"$S/audit.yaml"
"$B/stockade" rules check rules >/dev/null

"$B/stockade-auditd" -d -f "$S/audit.yaml" --socket "$S/run/auditd.sock" \
    --log-dir "$S/audit" --key "$S/keys/checkpoint.key" \
    --checkpoints "$S/offhost" &
auditd=$!
trap 'kill -TERM $auditd 2>/dev/null; wait $auditd; echo "stopped; the log verifies with: $B/stockade audit verify $S/audit --pubkey $S/keys/checkpoint.pub --checkpoints $S/offhost"' INT TERM
while [ ! -S "$S/run/auditd.sock" ]; do
	kill -0 $auditd 2>/dev/null || exit 1
	sleep 0.05
done

cat <<MSG

Stockade is running (Ctrl-C stops it).
  stockade-auditd  socket $S/run/auditd.sock, log $S/audit

Try:
  echo '{"event":"operator_note","principal":"user:$me","message":"hello"}' |
      $B/stockade audit send --socket $S/run/auditd.sock
  $B/stockade audit tail $S/audit -f
  $B/stockade audit status --socket $S/run/auditd.sock
  $B/stockade audit verify $S/audit --pubkey $S/keys/checkpoint.pub --checkpoints $S/offhost
  $B/stockade audit export $S/audit --format ecs
  $B/mcp-exec run --rules rules --state-dir $S/mcp-exec -- \
      /usr/bin/python3 -c 'import numpy; print(numpy.arange(5).sum())'

MSG
wait $auditd
