#!/bin/bash
# Runs every integration test (tests/integration/test_*.sh), each in its own
# scratch directory; prints one line per test and fails if any failed.
set -u
cd "$(dirname "$0")/../.."
failed=""
for t in tests/integration/test_*.sh; do
	name=$(basename "$t" .sh)
	start=$(date +%s)
	if out=$(timeout 300 bash "$t" 2>&1); then
		echo "PASS $name ($(( $(date +%s) - start ))s)"
		echo "$out" | sed -n 's/^  /    /p'
	else
		echo "FAIL $name"
		echo "$out" | tail -30 | sed 's/^/    /'
		failed="$failed $name"
	fi
done
[ -z "$failed" ] || { echo "integration tests failed:$failed"; exit 1; }
