# SPDX-License-Identifier: GPL-2.0-only
# floodgate build: BPF objects -> libbpf skeletons -> one userspace binary.
# `make V=1` shows the commands.

PREFIX  ?= /usr/local
DESTDIR ?=
SYSCONFDIR ?= /etc
UNITDIR ?= $(PREFIX)/lib/systemd/system
DOCDIR  ?= $(PREFIX)/share/doc/floodgate
BUILD   := build

CLANG     ?= clang
CC        ?= cc
BPFTOOL   ?= bpftool
ARCH      := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)

WARNINGS  := -Wall -Wextra -Werror
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) $(WARNINGS) \
	-Iinclude -Ibpf -I/usr/include/$(MULTIARCH)
PKGS      := libbpf libxdp libsystemd libmicrohttpd
CFLAGS    ?= -O2 -g
CFLAGS    += -std=gnu11 $(WARNINGS) -Iinclude -Iuser -I$(BUILD) \
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
.PHONY: all deps test unit-test prog-test integration-test demo bench install clean format check-format

all: $(BUILD)/floodgate

# Installs what is missing; a no-op when everything is present.
deps:
	$(Q)scripts/install-deps.sh

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_HDRS  := $(wildcard bpf/*.h) $(wildcard include/*.h) user/flood.h
SKELS     := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))
USER_SRCS := $(filter-out user/main.c,$(wildcard user/*.c))
USER_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(USER_SRCS))
USER_HDRS := $(wildcard user/*.h) $(wildcard include/*.h)

$(BUILD) $(BUILD)/user $(BUILD)/tests:
	$(Q)mkdir -p $@

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .bpf.o,,$(notdir $<))_bpf > $@

$(BUILD)/user/%.o: user/%.c $(USER_HDRS) $(SKELS) | $(BUILD)/user
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/floodgate: $(BUILD)/user/main.o $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# --- tests -----------------------------------------------------------------
UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/*.c))
PROG_HDRS  := $(wildcard tests/prog/*.h)
PROG_TESTS := $(patsubst tests/prog/%.c,$(BUILD)/tests/%,$(wildcard tests/prog/*.c))

$(BUILD)/tests/%: tests/unit/%.c $(USER_OBJS) $(USER_HDRS) | $(BUILD)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(USER_OBJS) $(CMOCKA) $(LDLIBS) -o $@

$(BUILD)/tests/%: tests/prog/%.c $(USER_OBJS) $(USER_HDRS) $(PROG_HDRS) $(SKELS) | $(BUILD)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(USER_OBJS) $(CMOCKA) $(LDLIBS) -o $@

$(BUILD)/bench_prog: tests/bench/bench_prog.c $(USER_OBJS) $(USER_HDRS) $(SKELS) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(USER_OBJS) $(LDLIBS) -o $@

tests: $(UNIT_TESTS) $(PROG_TESTS) $(BUILD)/floodgate $(BUILD)/bench_prog

unit-test: $(UNIT_TESTS)
	$(Q)set -e; for t in $(UNIT_TESTS); do echo "== $$t"; $$t; done

prog-test: $(PROG_TESTS)
	$(Q)set -e; for t in $(PROG_TESTS); do echo "== $$t"; $$t; done

integration-test: $(BUILD)/floodgate
	$(Q)set -e; for t in tests/integration/test_*.sh; do bash $$t; done

# The one test command (README, .ci/run): installs what is missing first.
test:
	$(Q)scripts/install-deps.sh
	$(Q)$(MAKE) --no-print-directory tests
	$(Q)scripts/run-tests.sh

demo:
	$(Q)scripts/install-deps.sh
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh

bench:
	$(Q)scripts/install-deps.sh
	$(Q)$(MAKE) --no-print-directory tests
	$(Q)scripts/bench.sh

# The unit goes where systemd looks for a PREFIX (/usr/local/lib/systemd/system
# by default), with the binary's path filled in. The sample config is not
# made /etc/floodgate/IFACE.conf: that is the operator's to write.
install: $(BUILD)/floodgate
	install -D -m 0755 $(BUILD)/floodgate $(DESTDIR)$(PREFIX)/sbin/floodgate
	install -D -m 0644 floodgate.conf.sample $(DESTDIR)$(DOCDIR)/floodgate.conf.sample
	install -D -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/floodgate
	install -m 0600 floodgate.conf.sample $(DESTDIR)$(SYSCONFDIR)/floodgate/example.conf.sample
	install -d -m 0755 $(DESTDIR)$(UNITDIR)
	sed -e 's|@SBINDIR@|$(PREFIX)/sbin|g' -e 's|@DOCDIR@|$(DOCDIR)|g' \
		systemd/floodgate@.service >$(DESTDIR)$(UNITDIR)/floodgate@.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/floodgate@.service

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

check-format:
	clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD)
