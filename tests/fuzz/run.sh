#!/bin/sh
# `make fuzz`: runs each libFuzzer target (built by the Makefile with clang,
# ASan + UBSan, into $BUILD/fuzz) for FUZZ_SECONDS (default 60) over a copy
# of its seed corpus.  New interesting inputs land in $BUILD/corpus/NAME;
# crashes in $BUILD.  FUZZ_SECONDS=600 tests/fuzz/run.sh tests/fuzz/fuzz_mcp.c
# runs one target for ten minutes.
set -eu
: "${BUILD:=build/fuzz}" "${FUZZ_SECONDS:=60}"
# The targets are built with UBSan in its recovering mode, where a finding
# is printed and the run goes on: make it stop, and keep the input, as
# `make check` (-fno-sanitize-recover) would.  The caller's options follow
# and may add to these.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
for src in "$@"; do
	name=$(basename "$src" .c)
	corpus="tests/fuzz/corpus/${name#fuzz_}"
	echo "== $name ($FUZZ_SECONDS s)"
	mkdir -p "$BUILD/corpus/$name"
	(cd "$BUILD" && "./fuzz/$name" -max_total_time="$FUZZ_SECONDS" \
	    "corpus/$name" "$OLDPWD/$corpus")
done
