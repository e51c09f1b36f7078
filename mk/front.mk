# The front, ./vkit (csrc/main.c, VKIT_FRONT): the core objects compiled a
# second time against musl and linked statically (-static-pie: still at a
# random address), with a Lua built here from Debian's source package.
#
# Why musl: glibc's start-up, static or dynamic, reads the processor's
# features and cache geometry with 68 CPUID instructions, and on a virtual
# machine every CPUID traps to the hypervisor (~12 us each on this
# project's machines): 0.9 ms of every process, a third of a cold `vkit vac
# verify`.  An empty static glibc program takes 1.1 ms, a musl one 0.16 ms.
# musl's start-up executes no CPUID; vkit's SHA-256 executes two, at the
# first block it hashes (csrc/sha256.c).
#
# Lua: deps/lua.lock pins Debian's lua5.4 source package, the one
# liblua5.4-dev (which the full executable links) is built from.  Each file
# is fetched from Debian's archive with curl and its SHA-256 compared with
# the lock BEFORE tar reads it; Debian's patches are applied
# (debian/patches/series) and the library compiled with Debian's defines
# (LUA_COMPAT_5_3, LUA_USE_LINUX).  The build refuses a lock whose Lua
# release differs from the installed liblua5.4-dev's (one Lua, one
# bytecode: build/luabc.c is compiled by lua5.4) and warns when only
# Debian's revision differs.  Offline, put the exact files in
# build/front/dl/ yourself; they are checked the same way.
#
# zlib is Debian's libz.a (inflate and crc32 only: plain C, no stdio);
# lua-cjson is not in the front (none of its commands use it).

FRONT := $(BUILD)/front
FRONT_CC := musl-gcc
MUSL_LIB := /usr/lib/$(shell $(CC) -dumpmachine | sed 's/-gnu$$/-musl/')
MULTIARCH := $(shell $(CC) -print-multiarch)
LUA_LOCK := deps/lua.lock
LUA_DEB_VERSION := $(or $(shell awk '$$1 == "version" { print $$2 }' $(LUA_LOCK)),$(error $(LUA_LOCK) has no version line))
LUA_RELEASE := $(firstword $(subst -, ,$(LUA_DEB_VERSION)))
LUA_FILES := $(shell awk '$$1 ~ /^lua5\.4_/ { print $$1 }' $(LUA_LOCK))
LUA_SRC := $(FRONT)/src/lua-$(LUA_RELEASE)
FRONT_INC := $(FRONT)/include

# Lua's library: its Makefile's CORE_O and LIB_O (not lua.c or luac.c).
LUA_MODULES := lapi lcode lctype ldebug ldo ldump lfunc lgc llex lmem lobject lopcodes lparser lstate \
  lstring ltable ltm lundump lvm lzio lauxlib lbaselib lcorolib ldblib liolib lmathlib loadlib loslib \
  lstrlib ltablib lutf8lib linit
LUA_FRONT_OBJECTS := $(LUA_MODULES:%=$(FRONT)/lua/%.o)

FRONT_OBJECTS = $(CORE_SOURCES:csrc/%.c=$(FRONT)/%.o) $(FRONT_EXTRA_OBJECTS) $(LUA_FRONT_OBJECTS)
FRONT_CFLAGS = $(CFLAGS) -isystem $(FRONT_INC) -I$(LUA_SRC)/src
FRONT_LINK = $(CC) $(LDFLAGS) $(FRONT_LTO) -static-pie -nostdlib $(MUSL_LIB)/rcrt1.o $(MUSL_LIB)/crti.o \
  $(shell $(CC) -print-file-name=crtbeginS.o)
FRONT_LIBS = $(shell $(CC) -print-file-name=libz.a) -L$(MUSL_LIB) -lc $(shell $(CC) -print-libgcc-file-name) \
  $(shell $(CC) -print-file-name=crtendS.o) $(MUSL_LIB)/crtn.o

# Every object under $(FRONT) is compiled by musl-gcc (tree-sitter's too:
# mk/treesitter.mk's rules for $(FRONT); mk/vacperf.mk's luabc.o).
$(FRONT)/%.o: private CC := $(FRONT_CC)

$(FRONT)/dl/%: | $(DEPS_STAMP)
	@mkdir -p $(@D)
	curl -fsSL --retry 3 -o $@.tmp http://deb.debian.org/debian/pool/main/l/lua5.4/$* && mv $@.tmp $@

$(LUA_SRC)/.verified: $(LUA_FILES:%=$(FRONT)/dl/%) $(LUA_LOCK) | $(DEPS_STAMP)
	@installed=$$(dpkg-query -W -f='$${Version}' liblua5.4-dev 2>/dev/null); \
	case "$$installed" in \
	  $(LUA_RELEASE)-*) [ "$$installed" = "$(LUA_DEB_VERSION)" ] || \
	    echo "warning: $(LUA_LOCK) pins lua5.4 $(LUA_DEB_VERSION), liblua5.4-dev is $$installed (same Lua release)" >&2;; \
	  *) echo "$(LUA_LOCK) pins Lua $(LUA_RELEASE) ($(LUA_DEB_VERSION)) but liblua5.4-dev is '$$installed':" \
	       "the front and the full executable must run one Lua; update the lock" >&2; exit 1;; \
	esac
	@for f in $(LUA_FILES); do \
	  want=$$(awk -v f="$$f" '$$1 == f { print $$2 }' $(LUA_LOCK)); \
	  echo "$$want" | grep -Eq '^[0-9a-f]{64}$$' || { echo "$(LUA_LOCK): $$f needs a 64-digit lowercase sha256" >&2; exit 1; }; \
	  got=$$(sha256sum $(FRONT)/dl/$$f | cut -d' ' -f1); \
	  if [ "$$got" != "$$want" ]; then \
	    echo "$(FRONT)/dl/$$f: sha256 $$got differs from $(LUA_LOCK) ($$want); refusing to unpack." >&2; \
	    echo "Remove the file to fetch it again, or correct the lock after reviewing the package." >&2; \
	    exit 1; \
	  fi; \
	done
	@rm -rf $(@D) $(@D).tmp && mkdir -p $(@D).tmp
	tar -xzf $(FRONT)/dl/$(filter %.orig.tar.gz,$(LUA_FILES)) -C $(@D).tmp --no-same-owner --no-same-permissions
	tar -xJf $(FRONT)/dl/$(filter %.debian.tar.xz,$(LUA_FILES)) -C $(@D).tmp/lua-$(LUA_RELEASE) --no-same-owner --no-same-permissions
	cd $(@D).tmp/lua-$(LUA_RELEASE) && for p in $$(grep -v '^#' debian/patches/series); do \
	  patch -p1 -s --no-backup-if-mismatch < debian/patches/$$p || exit 1; done
	@mv $(@D).tmp/lua-$(LUA_RELEASE) $(@D) && rmdir $(@D).tmp
	@touch $@

# The headers musl lacks: the kernel's (linux/, asm/, asm-generic/) and
# zlib's, by link; Debian's lua5.4-deb-multiarch.h (luaconf.h includes it).
$(FRONT_INC)/.made: | $(DEPS_STAMP)
	@rm -rf $(@D) && mkdir -p $(@D)
	ln -s /usr/include/linux /usr/include/asm-generic /usr/include/zlib.h /usr/include/zconf.h $(@D)/
	ln -s /usr/include/$(MULTIARCH)/asm $(@D)/asm
	@printf '#ifndef _LUA_DEB_MULTIARCH_\n#define _LUA_DEB_MULTIARCH_\n#define DEB_HOST_MULTIARCH "%s"\n#endif\n' \
	  $(MULTIARCH) > $(@D)/lua5.4-deb-multiarch.h
	@touch $@

# A compile with the profile in $(FRONT_PGO) when an object has one
# (mk/vacperf_pgo.mk); a file gcc cannot compile with it is compiled
# without, said on stderr.
front_compile = $(if $(FRONT_PGO),$(1) $(FRONT_PGO) || { echo "warning: $@ compiled without its profile" >&2; $(1); },$(1))

$(LUA_FRONT_OBJECTS): $(FRONT)/lua/%.o: $(LUA_SRC)/.verified | $(FRONT_INC)/.made $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(call front_compile,$(FRONT_CC) -O2 -std=gnu99 -Wall -Wextra -DLUA_COMPAT_5_3 -DLUA_USE_LINUX \
	  -isystem $(FRONT_INC) -c $(LUA_SRC)/src/$*.c -o $@)

$(FRONT)/%.o: csrc/%.c csrc/*.h $(BUILD)/modules.inc $(LUA_SRC)/.verified | $(FRONT_INC)/.made $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(call front_compile,$(FRONT_CC) $(FRONT_CFLAGS) -c $< -o $@)

$(FRONT)/front_string.o $(FRONT)/front_malloc.o: CFLAGS += -DVKIT_FRONT
$(FRONT)/main.o: CFLAGS += -DVKIT_FRONT -DVKIT_SHARED_BUILD_DIR='"$(BUILD)/lib"'
