#!/bin/sh
# `make fuzz`: builds each libFuzzer target with clang (ASan + UBSan) and
# runs it for FUZZ_SECONDS (default 60) over a copy of its seed corpus.
# New interesting inputs land in $BUILD/corpus/NAME; crashes in $BUILD.
set -eu
: "${BUILD:=build/fuzz}" "${FUZZ_SECONDS:=60}"
PKGS="jansson yaml-0.1 openssl libevent libevent_pthreads libseccomp libpcre2-8
    libnftnl libmnl libpcap ldns"
mkdir -p "$BUILD"
for src in "$@"; do
	name=$(basename "$src" .c)
	corpus="tests/fuzz/corpus/${name#fuzz_}"
	echo "== $name ($FUZZ_SECONDS s)"
	clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
	    -Ilib -Iauditd -Icli -Imcp-exec -Inetguard \
	    -o "$BUILD/$name" "$src" lib/*.c \
	    $(ls auditd/*.c | grep -v main.c) \
	    $(ls cli/*.c | grep -v stockade.c) \
	    $(ls mcp-exec/*.c mcp-exec/*/*.c | grep -v "main.c\|seccomp_gen.c") \
	    $(ls netguard/*.c | grep -v main.c) \
	    $(pkg-config --cflags --libs $PKGS) -lpthread
	mkdir -p "$BUILD/corpus/$name"
	(cd "$BUILD" && "./$name" -max_total_time="$FUZZ_SECONDS" \
	    "corpus/$name" "$OLDPWD/$corpus")
done
