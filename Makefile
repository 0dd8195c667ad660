# SPDX-License-Identifier: GPL-2.0-only
# floodgate build: BPF objects -> libbpf skeletons -> the floodgate binary;
# the traffic generator (tools/flood/) and the benchmark and test fixtures
# (tests/) are built beside it, never into it.
# `make V=1` shows the commands.

PREFIX  ?= /usr/local
DESTDIR ?=
SYSCONFDIR ?= /etc
UNITDIR ?= $(PREFIX)/lib/systemd/system
DOCDIR  ?= $(PREFIX)/share/doc/floodgate
MANDIR  ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
BUILD   := build

CLANG     ?= clang
CC        ?= cc
BPFTOOL   ?= bpftool
ARCH      := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)

VERSION   := 0.1.0
WARNINGS  := -Wall -Wextra -Werror
# Tests only: the layout-b build below adds -DFG_TEST_LAYOUT_PAD.
EXTRA_DEFINES ?=
# The object's DWARF is embedded in the skeleton, so in the binary: no
# absolute build path in it, or two builds of one tree differ by where
# they ran (tests/integration/test_deb.sh compares them byte for byte).
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) $(WARNINGS) $(EXTRA_DEFINES) \
	-ffile-prefix-map=$(CURDIR)=. -Iinclude -Ibpf -I/usr/include/$(MULTIARCH)
PKGS      := libbpf libxdp libpcap libsystemd libmicrohttpd hiredis jansson libmnl libcurl libnftables
CFLAGS    ?= -O2 -g
CFLAGS    += -std=gnu11 $(WARNINGS) $(EXTRA_DEFINES) -DFG_VERSION='"$(VERSION)"' -Iinclude -Iuser -I$(BUILD) \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS    := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lelf -lz -lpthread -lm
CMOCKA    := $(shell pkg-config --libs cmocka 2>/dev/null)

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: FORCE all deps tests test check-layers check-mutants mutants test-kernels unit-test prog-test integration-test demo bench profile install deb test-index clean format check-format soak

# floodgate(8) and floodgate.conf(5): docs/man/'s templates, whose lists
# the binary writes from its tables (user/cli/manpage.c).
MAN_PAGES := $(BUILD)/man/floodgate.8 $(BUILD)/man/floodgate.conf.5

all: $(BUILD)/floodgate $(MAN_PAGES)

# Installs what is missing; a no-op when everything is present.
deps:
	$(Q)scripts/install-deps.sh

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_HDRS  := $(wildcard bpf/*.h) $(wildcard include/*.h)
SKELS     := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))
# The traffic generator: its XDP program, its receiver-side checker (for
# tests/integration/test_flood_gen.sh), and the layout header they share.
FLOOD_DIR   := tools/flood
FLOOD_HDRS  := $(wildcard $(FLOOD_DIR)/*.h)
FLOOD_SRCS  := $(wildcard $(FLOOD_DIR)/*.c)
FLOOD_SRCS  := $(filter-out %.bpf.c,$(FLOOD_SRCS))
FLOOD_OBJS  := $(patsubst $(FLOOD_DIR)/%.c,$(BUILD)/$(FLOOD_DIR)/%.o,$(FLOOD_SRCS))
FLOOD_BIN   := $(BUILD)/floodgate-flood
FLOOD_CHECK := $(BUILD)/flood_check.bpf.o
BENCH_BPF   := $(BUILD)/baseline.bpf.o $(BUILD)/simplest.bpf.o
# tests/fixtures: BPF programs the integration tests attach beside floodgate.
FIXTURES    := $(patsubst tests/fixtures/%.bpf.c,$(BUILD)/%.bpf.o,$(wildcard tests/fixtures/*.bpf.c))
# user/ holds one folder per layer (docs/layout.md, Layout; scripts/check-layers.py).
USER_MAIN := user/cli/main.c
USER_SRCS := $(filter-out $(USER_MAIN),$(wildcard user/*/*.c))
USER_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(USER_SRCS))
USER_HDRS := $(wildcard user/*/*.h) $(wildcard include/*.h)

$(BUILD) $(BUILD)/user $(BUILD)/tests $(BUILD)/$(FLOOD_DIR):
	$(Q)mkdir -p $@

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.bpf.o: $(FLOOD_DIR)/%.bpf.c $(FLOOD_HDRS) | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.bpf.o: tests/bench/%.bpf.c include/fg_bench_source.h | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.bpf.o: tests/fixtures/%.bpf.c | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .bpf.o,,$(notdir $<))_bpf > $@

$(BUILD)/user/%.o: user/%.c $(USER_HDRS) $(SKELS) | $(BUILD)/user
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# What `floodgate --version` says of the build: the git revision (in a
# clone only) and the libxdp built against (libxdp has no version call).
# Rewritten only when it changes, so a build does not relink for nothing.
$(BUILD)/fg_build.h: FORCE | $(BUILD)
	$(Q){ if [ -e .git ] && rev=$$(git describe --always --dirty 2>/dev/null); then \
		echo "#define FG_GIT_REVISION \"$$rev\""; fi; \
		echo "#define FG_LIBXDP_BUILT \"$$(pkg-config --modversion libxdp)\""; } >$@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

$(BUILD)/user/cli/version.o: $(BUILD)/fg_build.h

$(BUILD)/floodgate: $(BUILD)/user/cli/main.o $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/man/%: docs/man/%.in $(BUILD)/floodgate
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BUILD)/floodgate help --man <$< >$@

# --- the traffic generator (its own binary; shares only the logger) ----------
$(BUILD)/$(FLOOD_DIR)/%.o: $(FLOOD_DIR)/%.c $(FLOOD_HDRS) user/base/log.h $(BUILD)/flood.skel.h \
		| $(BUILD)/$(FLOOD_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -I$(FLOOD_DIR) -c $< -o $@

$(FLOOD_BIN): $(FLOOD_OBJS) $(BUILD)/user/base/log.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# --- tests -----------------------------------------------------------------
UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/*.c))
# The BPF_PROG_TEST_RUN tests: one binary, test_prog; each other file of
# tests/prog/ is a feature whose tests list-tests.sh lists from their
# declarations into prog_tests.h (docs/testing.md, Tests).
PROG_HDRS     := $(wildcard tests/prog/*.h)
PROG_SHARED   := tests/prog/main.c tests/prog/fixtures.c
PROG_FEATURES := $(filter-out $(PROG_SHARED),$(sort $(wildcard tests/prog/*.c)))
PROG_OBJS     := $(patsubst tests/prog/%.c,$(BUILD)/tests/prog/%.o,$(PROG_SHARED) $(PROG_FEATURES))
PROG_LIST     := $(BUILD)/tests/prog_tests.h
PROG_TESTS    := $(BUILD)/tests/test_prog

$(BUILD)/tests/%: tests/unit/%.c $(USER_OBJS) $(USER_HDRS) | $(BUILD)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(USER_OBJS) $(CMOCKA) $(LDLIBS) -o $@

$(PROG_LIST): tests/prog/list-tests.sh $(PROG_FEATURES) | $(BUILD)/tests
	$(call msg,GEN,$@)
	$(Q)tests/prog/list-tests.sh $(PROG_FEATURES) >$@.tmp && mv $@.tmp $@

$(BUILD)/tests/prog/%.o: tests/prog/%.c $(USER_HDRS) $(PROG_HDRS) $(SKELS) | $(BUILD)/tests
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -D_GNU_SOURCE -I$(BUILD)/tests -c $< -o $@

$(BUILD)/tests/prog/main.o: $(PROG_LIST)
# The synproxy tests put a connection in conntrack with this fixture.
$(BUILD)/tests/prog/synproxy.o: $(BUILD)/ct_confirm.skel.h

$(PROG_TESTS): $(PROG_OBJS) $(USER_OBJS) | $(BUILD)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(CMOCKA) $(LDLIBS) -o $@

$(BUILD)/bench_prog: tests/bench/bench_prog.c $(USER_OBJS) $(USER_HDRS) $(SKELS) \
		$(BUILD)/baseline.skel.h $(BUILD)/simplest.skel.h | $(BUILD)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(USER_OBJS) $(LDLIBS) -o $@

# Source-line profile of a loaded JITed program (scripts/profile.sh).
$(BUILD)/jit_lines: tests/bench/jit_lines.c | $(BUILD)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(LDLIBS) -o $@

tests: $(UNIT_TESTS) $(PROG_TESTS) $(BUILD)/floodgate $(MAN_PAGES) $(BUILD)/bench_prog $(FLOOD_BIN) \
	$(BUILD)/jit_lines \
	$(FLOOD_CHECK) $(BENCH_BPF) $(FIXTURES) $(BUILD)/layout-b/floodgate \
	$(BUILD)/pre-sources4/floodgate $(BUILD)/pre-maxbans/floodgate

# A second floodgate whose `bans` value is padded (FG_TEST_LAYOUT_PAD): the
# other build tests/integration/test_upgrade.sh upgrades to and from.
$(BUILD)/layout-b/floodgate: $(BPF_SRCS) $(BPF_HDRS) $(USER_SRCS) $(USER_MAIN) $(USER_HDRS)
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/layout-b \
		EXTRA_DEFINES=-DFG_TEST_LAYOUT_PAD $(BUILD)/layout-b/floodgate

# Older releases built from this clone's history: the real old builds that
# test_upgrade.sh upgrades from. pre-sources4: the layout before sources4
# (one `sources` table for every family), whose IPv4 state is split into
# sources4. pre-maxbans: the layout before max_bans (a `bans` trie of
# 65,536, `ban_count` without outside_refused), whose bans are carried
# into a larger trie. Without the history (an archive, not a clone) they
# are not built, and test_upgrade.sh fails and says so.
OLD_COMMIT_pre-sources4 := 28b9c1c74010119125e73d30cf0792a9d64d4fda
OLD_COMMIT_pre-maxbans := 3bf01c699d2a81aae36b53b982c1049c0b8ab366
$(BUILD)/pre-sources4/floodgate $(BUILD)/pre-maxbans/floodgate: $(BUILD)/%/floodgate:
	$(call msg,OLD,$@ from $(OLD_COMMIT_$*))
	$(Q)if git cat-file -e $(OLD_COMMIT_$*)^{commit} 2>/dev/null; then \
		rm -rf $(BUILD)/$* && mkdir -p $(BUILD)/$*/src && \
		git archive $(OLD_COMMIT_$*) | tar -x -C $(BUILD)/$*/src && \
		$(MAKE) --no-print-directory -s -C $(BUILD)/$*/src build/floodgate && \
		cp $(BUILD)/$*/src/build/floodgate $@ && \
		rm -rf $(BUILD)/$*/src; \
	else \
		echo "  $(OLD_COMMIT_$*) is not in this clone's history: $@ not built"; \
	fi

unit-test: $(UNIT_TESTS)
	$(Q)set -e; for t in $(UNIT_TESTS); do echo "== $$t"; $$t; done

prog-test: $(PROG_TESTS)
	$(Q)set -e; for t in $(PROG_TESTS); do echo "== $$t"; $$t; done

integration-test: $(BUILD)/floodgate $(FLOOD_BIN) $(FLOOD_CHECK) $(FIXTURES)
	$(Q)set -e; for t in tests/integration/test_*.sh; do bash $$t; done

# Each file includes only its own layer and those below; no module cycle.
check-layers:
	$(Q)python3 scripts/check-layers.py

# Every mutant of `make mutants` still applies to the tree and compiles
# (syntax only, with this build's flags: some seconds). Needs the built
# tree's generated headers.
check-mutants: $(BUILD)/floodgate.skel.h
	$(Q)CC="$(CC)" CFLAGS="$(CFLAGS)" CLANG="$(CLANG)" BPF_CFLAGS="$(BPF_CFLAGS)" \
		scripts/mutants.sh --check

# The one test command (README, .ci/run): installs what is missing first.
test:
	$(Q)scripts/install-deps.sh
	$(Q)$(MAKE) --no-print-directory check-layers
	$(Q)$(MAKE) --no-print-directory tests
	$(Q)$(MAKE) --no-print-directory check-mutants
	$(Q)scripts/run-tests.sh

# Deliberate breakages, each of which the suite must catch (scripts/mutants.sh).
mutants:
	$(Q)scripts/install-deps.sh
	$(Q)$(MAKE) --no-print-directory tests
	$(Q)scripts/mutants.sh

# The BPF tests on other kernels under qemu (tests/kernels/run.sh says which).
test-kernels:
	$(Q)scripts/install-deps.sh kernels
	$(Q)$(MAKE) --no-print-directory tests
	$(Q)tests/kernels/run.sh

demo:
	$(Q)scripts/install-deps.sh
	$(Q)$(MAKE) --no-print-directory all $(FLOOD_BIN)
	$(Q)scripts/demo.sh

bench:
	$(Q)scripts/install-deps.sh
	$(Q)$(MAKE) --no-print-directory tests
	$(Q)scripts/bench.sh

# perf sampling of the JITed XDP program under a hot-key and a 1M-source
# flood (scripts/profile.sh; docs/benchmarks.md)
profile:
	$(Q)$(MAKE) --no-print-directory $(BUILD)/floodgate $(FLOOD_BIN) $(BUILD)/jit_lines \
		$(BUILD)/simplest.bpf.o
	$(Q)scripts/profile.sh

# The fault-injection soak (scripts/soak.sh), minutes long, not part of
# `make test`: `make soak SOAK_SECONDS=600 SOAK_SEED=24`.
SOAK_SECONDS ?= 600
SOAK_SEED ?= 24
soak:
	$(Q)scripts/install-deps.sh
	$(Q)$(MAKE) --no-print-directory tests
	$(Q)SOAK_SECONDS=$(SOAK_SECONDS) SOAK_SEED=$(SOAK_SEED) scripts/soak.sh

# The unit goes where systemd looks for a PREFIX (/usr/local/lib/systemd/system
# by default), with the binary's path filled in. The sample config is not
# made /etc/floodgate/IFACE.conf: that is the operator's to write. The
# fail2ban action goes where fail2ban looks (used only by a jail naming it).
# The Grafana dashboard and the Prometheus rules go to PREFIX/share/floodgate.
install: $(BUILD)/floodgate $(MAN_PAGES)
	install -D -m 0755 $(BUILD)/floodgate $(DESTDIR)$(PREFIX)/sbin/floodgate
	install -d -m 0755 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man5
	gzip -9n <$(BUILD)/man/floodgate.8 >$(DESTDIR)$(MANDIR)/man8/floodgate.8.gz
	gzip -9n <$(BUILD)/man/floodgate.conf.5 >$(DESTDIR)$(MANDIR)/man5/floodgate.conf.5.gz
	chmod 0644 $(DESTDIR)$(MANDIR)/man8/floodgate.8.gz $(DESTDIR)$(MANDIR)/man5/floodgate.conf.5.gz
	install -D -m 0644 completion/floodgate $(DESTDIR)$(BASHCOMPDIR)/floodgate
	install -D -m 0644 floodgate.conf.sample $(DESTDIR)$(DOCDIR)/examples/floodgate.conf.sample
	install -D -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -d -m 0755 $(DESTDIR)$(DOCDIR)/docs
	install -m 0644 docs/*.md $(DESTDIR)$(DOCDIR)/docs/
	install -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/floodgate
	install -m 0600 floodgate.conf.sample $(DESTDIR)$(SYSCONFDIR)/floodgate/example.conf.sample
	install -D -m 0644 fail2ban/floodgate.conf $(DESTDIR)$(DOCDIR)/fail2ban/floodgate.conf
	install -D -m 0644 fail2ban/floodgate.conf $(DESTDIR)$(SYSCONFDIR)/fail2ban/action.d/floodgate.conf
	install -d -m 0755 $(DESTDIR)$(UNITDIR)
	sed -e 's|@SBINDIR@|$(PREFIX)/sbin|g' -e 's|@DOCDIR@|$(DOCDIR)|g' \
		systemd/floodgate@.service >$(DESTDIR)$(UNITDIR)/floodgate@.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/floodgate@.service
	install -D -m 0644 grafana/floodgate-dashboard.json \
		$(DESTDIR)$(PREFIX)/share/floodgate/grafana/floodgate-dashboard.json
	install -D -m 0644 prometheus/floodgate-rules.yml \
		$(DESTDIR)$(PREFIX)/share/floodgate/prometheus/floodgate-rules.yml

# The Debian package (debian/; docs/service.md "Debian package"): built
# without the tests from a copy of the tree (tracked and new files) in
# build/deb/src, since dpkg-buildpackage writes its files to the parent of
# the tree: two builds from sibling checkouts would take each other's.
DEB_VERSION = $(shell dpkg-parsechangelog -S Version)
DEB_SRC = $(BUILD)/deb/src/floodgate
deb:
	$(Q)rm -rf $(BUILD)/deb && mkdir -p $(DEB_SRC)
	$(Q)git ls-files -z --cached --others --exclude-standard | \
		tar --null --ignore-failed-read -T - -cf - | tar -xf - -C $(DEB_SRC)
	$(Q)cd $(DEB_SRC) && DEB_BUILD_OPTIONS="nocheck $(DEB_BUILD_OPTIONS)" dpkg-buildpackage -us -uc -b
	$(Q)mv -t $(BUILD)/deb/ $(BUILD)/deb/src/floodgate*_$(DEB_VERSION)_*
	$(Q)rm -rf $(BUILD)/deb/src
	$(Q)ls $(BUILD)/deb/*.deb

# Each test file's opening comment, file by file: the tests' only index
# (docs/testing.md).
test-index:
	$(Q)scripts/test-index.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

check-format:
	clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD)
