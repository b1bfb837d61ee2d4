#!/bin/bash
# Runs every egress test (tests/egress/test_*.sh): netguard in a closed
# topology of network namespaces, one scratch directory and one set of
# namespaces per test.  Prints one line per test and fails if any failed.
# A test exits 77 to say the machine cannot run it (printed as SKIP).
set -u
cd "$(dirname "$0")/../.."
TEST_TIMEOUT=60			# seconds per test; the suite must stay well under 3 min
failed=""
for t in tests/egress/test_*.sh; do
	name=$(basename "$t" .sh)
	start=$(date +%s)
	# KILL after a grace period: the test's trap gets TERM first and
	# removes its namespaces.
	st=0; out=$(timeout -k 10 "$TEST_TIMEOUT" bash "$t" 2>&1) || st=$?
	if [ $st = 0 ]; then
		echo "PASS $name ($(( $(date +%s) - start ))s)"
		echo "$out" | sed -n 's/^  /    /p'
	elif [ $st = 77 ]; then
		echo "SKIP $name: $(echo "$out" | tail -1)"
	else
		[ $st = 124 ] && out="$out
timed out after ${TEST_TIMEOUT}s"
		echo "FAIL $name ($(( $(date +%s) - start ))s)"
		echo "$out" | tail -30 | sed 's/^/    /'
		failed="$failed $name"
	fi
done
[ -z "$failed" ] || { echo "egress tests failed:$failed"; exit 1; }
