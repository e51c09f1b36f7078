# vkit: a verification kit, C core with Lua 5.4 embedded.
#
#   make            build ./vkit (installs missing Debian packages when root)
#   make test       run every Busted spec through ./vkit
#   make sanitize   build ./vkit-asan (ASan + UBSan) and run the specs with it
#   make demo       run the main job on the bundled example
#   make bench      run the benchmarks in bench/
#   make install PREFIX=/usr/local
#   make clean

PREFIX   ?= /usr/local
CC       ?= gcc
BUILD    := build
PKGS     := lua5.4 libcrypto libgit2
CFLAGS   ?= -O2
CFLAGS   += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter \
            -fno-strict-aliasing -I$(BUILD) -Icsrc
LDLIBS   += -l:liblua5.4-cjson.a -lreadline -lz -lm -ldl

SOURCES  := $(wildcard csrc/*.c)
OBJECTS  := $(SOURCES:csrc/%.c=$(BUILD)/obj/%.o)
ASAN_OBJ := $(SOURCES:csrc/%.c=$(BUILD)/asan/%.o)
ASAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1

.PHONY: all deps test sanitize sanitize-build demo bench install clean
all: vkit

# Fragments (mk/*.mk) add vendored objects to EXTRA_OBJECTS / ASAN_EXTRA_OBJECTS,
# libraries to EXTRA_LDLIBS, and targets of their own.
EXTRA_OBJECTS :=
ASAN_EXTRA_OBJECTS :=
EXTRA_LDLIBS :=
-include $(sort $(wildcard mk/*.mk))

# Package checks run once per change of the package list.
$(BUILD)/.deps: scripts/debian-packages scripts/deps
	@mkdir -p $(BUILD)
	@scripts/deps
	@touch $@
deps: $(BUILD)/.deps

# Every C module defines `int luaopen_vkit_<name>(lua_State *L)`; main.c
# preloads each one as `vkit.<name>` from this generated list.
$(BUILD)/modules.inc: $(SOURCES) | $(BUILD)/.deps
	@mkdir -p $(BUILD)
	@grep -ho '^int luaopen_vkit_[a-z_0-9]*' $(SOURCES) | sed 's/^int luaopen_vkit_\(.*\)/VKIT_MODULE(\1)/' | sort > $@.tmp
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp

$(BUILD)/obj/%.o: csrc/%.c csrc/*.h $(BUILD)/modules.inc | $(BUILD)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(shell pkg-config --cflags $(PKGS)) -c $< -o $@

$(BUILD)/asan/%.o: csrc/%.c csrc/*.h $(BUILD)/modules.inc | $(BUILD)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -O2,$(CFLAGS)) $(ASAN) $(shell pkg-config --cflags $(PKGS)) -c $< -o $@

vkit: $(OBJECTS) $(EXTRA_OBJECTS)
	$(CC) $(LDFLAGS) -Wl,-E -o $@ $(OBJECTS) $(EXTRA_OBJECTS) $(shell pkg-config --libs $(PKGS)) $(EXTRA_LDLIBS) $(LDLIBS)

vkit-asan: $(ASAN_OBJ) $(ASAN_EXTRA_OBJECTS)
	$(CC) $(LDFLAGS) $(ASAN) -Wl,-E -o $@ $(ASAN_OBJ) $(ASAN_EXTRA_OBJECTS) $(shell pkg-config --libs $(PKGS)) $(EXTRA_LDLIBS) $(LDLIBS)

# The one test command (README, CI): Busted through vkit, closing with
# a plain "N passed, N failed" line; non-zero exit on any failure or error.
test: vkit
	./vkit script tests/run.lua

sanitize-build: vkit-asan
sanitize: vkit vkit-asan
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ./vkit-asan script tests/run.lua

# The main job on the bundled example: change certification in Rust,
# Python and TypeScript (examples/certify.lua builds the demo repository).
demo: vkit typescript
	./vkit script examples/certify.lua

bench: vkit
	@for b in bench/*.lua; do echo "== $$b"; ./vkit script $$b || exit 1; done

install: vkit
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/vkit
	install -m 0755 vkit $(DESTDIR)$(PREFIX)/bin/vkit
	rm -rf $(DESTDIR)$(PREFIX)/share/vkit/lua $(DESTDIR)$(PREFIX)/share/vkit/policies
	cp -R lua policies $(DESTDIR)$(PREFIX)/share/vkit/

clean:
	rm -rf $(BUILD)/obj $(BUILD)/asan $(BUILD)/modules.inc vkit vkit-asan
