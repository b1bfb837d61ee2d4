#!/bin/sh
# Runs each unit-test binary (Check suites, fuzz-corpus replays) with a
# private scratch directory; prints one line per binary and fails if any did.
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/stockade-unit.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export TMPDIR="$scratch" CK_FORK=yes
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=""
for t in "$@"; do
	name=$(basename "$t")
	log="$scratch/$name.log"
	case "$name" in
	replay_fuzz_*) corpus="tests/fuzz/corpus/${name#replay_fuzz_}"
		set -- "$t" "$corpus" ;;
	*) set -- "$t" ;;
	esac
	start=$(date +%s)
	if "$@" >"$log" 2>&1; then
		echo "PASS $name ($(( $(date +%s) - start ))s)"
	else
		echo "FAIL $name"; sed 's/^/    /' "$log" | tail -40
		failed="$failed $name"
	fi
done
[ -z "$failed" ] || { echo "unit tests failed:$failed"; exit 1; }
