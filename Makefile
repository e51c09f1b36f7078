# vkit: a verification kit, C core with Lua 5.4 embedded.
#
#   make            build ./vkit and its lazily loaded shared modules in
#                   build/lib/ (installs missing Debian packages when root)
#   make test       run every Busted spec through ./vkit
#   make test-loaded  the suite 5 times under stress-ng (every core busy)
#   make sanitize   build ./vkit-asan (ASan + UBSan) and run the specs with it
#   make demo       run the main job on the bundled example
#   make demo-external  an external solver/checker pair through vkit verify
#   make bench      run the benchmarks in bench/
#   make docs       the Lua API reference (LDoc) in build/docs/api/
#   make install PREFIX=/usr/local   (make uninstall PREFIX=... removes it)
#   make clean

PREFIX   ?= /usr/local
CC       ?= gcc
BUILD    := build
PKGS     := lua5.4 libgit2 libpq libcrypto
CFLAGS   ?= -O2
CFLAGS   += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter \
            -fno-strict-aliasing -I$(BUILD) -Icsrc
# zlib (vkit.archive's gzip) linked statically and kept private:
# one shared library fewer to map and relocate at every exec;
# libgit2 loads libz.so for itself when vkit.git is first required.
LDLIBS   += -l:liblua5.4-cjson.a -Wl,--exclude-libs,libz.a -l:libz.a -lm -ldl -pthread
# SHA-256 is OpenSSL's (EVP, csrc/util.c).  libcrypto is linked statically
# and kept private, as zlib is: the shared library would cost its loading
# and relocation at every exec, and no shared module needs it for itself
# (they reach SHA-256 through vkit_sha256*, csrc/vkit.h).
CRYPTO_LIBS := -Wl,--exclude-libs,libcrypto.a -l:libcrypto.a
# Relative relocations packed (DT_RELR, glibc 2.36).
EXE_LDFLAGS := -Wl,-E -Wl,-z,pack-relative-relocs
# Lua linked statically, whole (every API function exported by -E, for the
# shared modules and Lua C modules such as Busted's): calls into the VM are
# direct, not through the PLT of liblua5.4.so, and one library fewer is
# loaded at exec (a cold `vkit vac verify` ~5% faster, bench/vac.lua).
LUA_LIBS := -Wl,--whole-archive -l:liblua5.4.a -Wl,--no-whole-archive

# Shared modules: vkit.<name>, built from csrc/<name>.c and csrc/<name>_*.c
# into $(BUILD)/lib/vkit_<name>.so (./vkit-asan: $(BUILD)/asan-lib/) with
# the libraries SHARED_LIBS_<name>, which csrc/main.c loads when the module
# is first required: linked into vkit, libgit2's dependency tree (mbedTLS,
# krb5, libssh2, pcre2...) and readline's (the REPL's alone) cost every
# command milliseconds at exec.  An object resolves the Lua API and the
# vkit_* helpers from the executable (linked with -Wl,-E) and exports only
# its luaopen_vkit_<name>.  `make install` puts them in PREFIX/lib/vkit.
SHARED_MODULES := git term pg
SHARED_LIBS_git = $(shell pkg-config --libs libgit2)
SHARED_LIBS_term = -lreadline
SHARED_LIBS_pg = $(shell pkg-config --libs libpq)
shared_sources = $(wildcard csrc/$(1).c csrc/$(1)_*.c)

SOURCES  := $(wildcard csrc/*.c)
CORE_SOURCES := $(filter-out $(foreach m,$(SHARED_MODULES),$(call shared_sources,$(m))),$(SOURCES))
OBJECTS  := $(CORE_SOURCES:csrc/%.c=$(BUILD)/obj/%.o)
ASAN_OBJ := $(CORE_SOURCES:csrc/%.c=$(BUILD)/asan/%.o)
SHARED_OBJECTS := $(SHARED_MODULES:%=$(BUILD)/lib/vkit_%.so)
ASAN_SHARED_OBJECTS := $(SHARED_MODULES:%=$(BUILD)/asan-lib/vkit_%.so)
ASAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1

.PHONY: all deps test test-loaded sanitize sanitize-build demo demo-external bench docs install uninstall clean
all: vkit

# Fragments (mk/*.mk) add vendored objects to EXTRA_OBJECTS / ASAN_EXTRA_OBJECTS,
# libraries to EXTRA_LDLIBS, and targets of their own.
EXTRA_OBJECTS :=
ASAN_EXTRA_OBJECTS :=
EXTRA_LDLIBS :=
# What a rule that runs a packaged tool (npm, tar, lua5.4) waits for
# (order-only): the package check below.  Empty when a fragment is run on
# its own (make -f mk/treesitter.mk, as tests/ts_spec.lua does).
DEPS_STAMP := $(BUILD)/.deps
-include $(sort $(wildcard mk/*.mk))

# Package checks run once per change of the package list.
$(BUILD)/.deps: scripts/debian-packages scripts/deps
	@mkdir -p $(BUILD)
	@scripts/deps
	@touch $@
deps: $(BUILD)/.deps

# Every C module defines `int luaopen_vkit_<name>(lua_State *L)`; main.c
# preloads each one as `vkit.<name>` from this generated list, linked in
# (VKIT_MODULE) or loaded from its shared object (VKIT_SHARED_MODULE).
$(BUILD)/modules.inc: $(CORE_SOURCES) Makefile | $(BUILD)/.deps
	@mkdir -p $(BUILD)
	@{ grep -ho '^int luaopen_vkit_[a-z_0-9]*' $(CORE_SOURCES) | sed 's/^int luaopen_vkit_\(.*\)/VKIT_MODULE(\1)/'; \
	  for m in $(SHARED_MODULES); do echo "VKIT_SHARED_MODULE($$m)"; done; } | sort > $@.tmp
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp

$(BUILD)/obj/%.o: csrc/%.c csrc/*.h $(BUILD)/modules.inc | $(BUILD)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(shell pkg-config --cflags $(PKGS)) -c $< -o $@

$(BUILD)/asan/%.o: csrc/%.c csrc/*.h $(BUILD)/modules.inc | $(BUILD)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -O2,$(CFLAGS)) $(ASAN) $(shell pkg-config --cflags $(PKGS)) -c $< -o $@

$(BUILD)/pic/%.o: csrc/%.c csrc/*.h | $(BUILD)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden $(shell pkg-config --cflags $(PKGS)) -c $< -o $@

$(BUILD)/asan-pic/%.o: csrc/%.c csrc/*.h | $(BUILD)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -O2,$(CFLAGS)) $(ASAN) -fPIC -fvisibility=hidden $(shell pkg-config --cflags $(PKGS)) -c $< -o $@

define shared_module
$(BUILD)/lib/vkit_$(1).so: $(patsubst csrc/%.c,$(BUILD)/pic/%.o,$(call shared_sources,$(1)))
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS) -shared -o $$@ $$^ $$(SHARED_LIBS_$(1))

$(BUILD)/asan-lib/vkit_$(1).so: $(patsubst csrc/%.c,$(BUILD)/asan-pic/%.o,$(call shared_sources,$(1)))
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS) $$(ASAN) -shared -o $$@ $$^ $$(SHARED_LIBS_$(1))
endef
$(foreach m,$(SHARED_MODULES),$(eval $(call shared_module,$(m))))

# main.c finds the shared objects of a build tree in <root>/<this directory>.
$(BUILD)/obj/main.o: CFLAGS += -DVKIT_SHARED_BUILD_DIR='"$(BUILD)/lib"'
$(BUILD)/asan/main.o: CFLAGS += -DVKIT_SHARED_BUILD_DIR='"$(BUILD)/asan-lib"'

# One executable, linked dynamically against glibc; the shared modules it
# loads on first use live in $(BUILD)/lib.
vkit: $(OBJECTS) $(EXTRA_OBJECTS) $(SHARED_OBJECTS)
	$(CC) $(LDFLAGS) $(EXE_LDFLAGS) -o $@ $(OBJECTS) $(EXTRA_OBJECTS) $(LUA_LIBS) $(EXTRA_LDLIBS) $(LDLIBS) $(CRYPTO_LIBS)

vkit-asan: $(ASAN_OBJ) $(ASAN_EXTRA_OBJECTS) $(ASAN_SHARED_OBJECTS)
	$(CC) $(LDFLAGS) $(ASAN) $(EXE_LDFLAGS) -o $@ $(ASAN_OBJ) $(ASAN_EXTRA_OBJECTS) $(LUA_LIBS) $(EXTRA_LDLIBS) $(LDLIBS) $(CRYPTO_LIBS)

# The one test command (README, CI): Busted through vkit, closing with
# a plain "N passed, N failed" line; non-zero exit on any failure or error.
test: vkit
	./vkit script tests/run.lua

# The suite five times in a row while stress-ng loads every core
# (LOOPS=n to change the count): no spec may depend on host speed or load.
LOOPS ?= 5
test-loaded: vkit
	scripts/under-load -n $(LOOPS)

sanitize-build: vkit-asan
sanitize: vkit vkit-asan
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ./vkit-asan script tests/run.lua

# The main job on the bundled example: change certification in Rust,
# Python and TypeScript (examples/certify.lua builds the demo repository).
demo: vkit typescript
	./vkit script examples/certify.lua

# The external verifier protocol on the bundled backend: z3 produces,
# cvc5 re-checks and writes the receipt (examples/external/demo.lua).
demo-external: vkit
	./vkit script examples/external/demo.lua

bench: vkit
	@for b in bench/*.lua; do echo "== $$b"; ./vkit script $$b || exit 1; done

# The public Lua API reference, generated by LDoc from the doc comments of
# lua/vkit/init.lua and lua/vkit/api/*.lua (docs/config.ld);
# tests/api_docs_spec.lua checks that it documents every public function.
DOCS_DIR ?= $(BUILD)/docs/api
docs: $(BUILD)/.deps
	@mkdir -p $(DOCS_DIR)
	cd docs && ldoc --dir $(abspath $(DOCS_DIR)) . >/dev/null
	@echo "the API reference: $(DOCS_DIR)/index.html"

# Everything an installed vkit needs (scripts/install.lua says where each
# part goes and records it in PREFIX/share/vkit/install-manifest.txt); the
# man page and the bash completion are generated from each command's
# --help.  `make uninstall` removes exactly what the manifest lists, each
# entry walked beneath PREFIX with no link followed, after checking them
# all: an entry that leaves PREFIX or crosses a link refuses it, named, and
# nothing is removed (scripts/install_manifest.lua).
install: vkit typescript docs
	@mkdir -p $(BUILD)/man $(BUILD)/completion
	./vkit script scripts/manual.lua man $(BUILD)/man/vkit.1
	./vkit script scripts/manual.lua bash $(BUILD)/completion/vkit
	./vkit script scripts/install.lua install "$(DESTDIR)$(PREFIX)"

uninstall: vkit
	./vkit script scripts/install.lua uninstall "$(DESTDIR)$(PREFIX)"

clean:
	rm -rf $(BUILD)/obj $(BUILD)/asan $(BUILD)/pic $(BUILD)/asan-pic $(BUILD)/lib $(BUILD)/asan-lib \
	  $(BUILD)/modules.inc vkit vkit-asan
