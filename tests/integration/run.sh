#!/bin/bash
# Runs every integration test (tests/integration/test_*.sh), each in its own
# scratch directory; prints one line per test and fails if any failed.
# A test exits 77 to say the machine cannot run it (printed as SKIP).
set -u
cd "$(dirname "$0")/../.."
failed=""
for t in tests/integration/test_*.sh; do
	name=$(basename "$t" .sh)
	start=$(date +%s)
	st=0; out=$(timeout 300 bash "$t" 2>&1) || st=$?
	if [ $st = 0 ]; then
		echo "PASS $name ($(( $(date +%s) - start ))s)"
		echo "$out" | sed -n 's/^  /    /p'
	elif [ $st = 77 ]; then
		echo "SKIP $name: $(echo "$out" | tail -1)"
	else
		echo "FAIL $name"
		# The failure itself first: a server's log may bury it.
		echo "$out" | grep -E '^ *FAIL' | head -10 | sed 's/^/    /'
		echo "$out" | tail -30 | sed 's/^/    /'
		failed="$failed $name"
	fi
done
[ -z "$failed" ] || { echo "integration tests failed:$failed"; exit 1; }
