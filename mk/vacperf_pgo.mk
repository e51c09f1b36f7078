# The front (./vkit) compiled with profile feedback: gcc lays out Lua's VM,
# its tables, strings and loader, and vkit's JSON reader and allocator by
# how a verification runs them (hot paths straight, cold code out of the
# way), and, the same objects being compiled for link-time optimisation,
# inlines across them (the JSON reader into Lua's API, the allocator into
# Lua's memory manager).  A cold `vkit vac verify` runs 8-12% fewer
# instructions (docs/vac-performance.md); the code is the same, only its
# layout and inlining differ, and the whole suite runs on the result.
#
# 1. A training executable: the front's code with Lua's core, json.c and
#    lua_alloc.c instrumented (-fprofile-generate).  gcc's profiling runtime
#    is glibc's, so it is a glibc build: the full executable's objects, but
#    main.c, front_malloc.c and front_string.c compiled as the front's
#    (VKIT_FRONT), so it allocates and loads modules as the front does.  It
#    lives in $(BUILD)/lib/, where main.c finds the tree it belongs to.
# 2. It verifies vkit's own VAC fixtures (fixtures/vac: valid, tampered and
#    archived bundles), not the conformance corpus the benchmark measures.
# 3. The front's objects are compiled with its counts (-fprofile-use).  gcc
#    names a profile, and keys each static function in it, by the object's
#    auxiliary name: the training objects take the front's (-dumpdir), or
#    no static function would find its counts.  A function whose shape
#    differs under musl's headers keeps no profile (-Wno-coverage-mismatch);
#    a file gcc cannot compile with its profile is compiled without, with a
#    warning.
#
# The profile follows the C sources, not the Lua modules: editing a module
# does not retrain (the training executable keeps its older precompiled
# modules, and a profile only steers layout).
PGO := $(BUILD)/pgo
PGO_CC := $(CC)
PGO_PROFILE := $(abspath $(PGO)/profile)
PGO_STAMP := $(PGO)/profile/.trained
PGO_TRAINER := $(BUILD)/lib/vkit-pgo-train
PGO_CSRC := json lua_alloc
PGO_GENERATE := -fprofile-generate=$(PGO_PROFILE) -fprofile-update=atomic
PGO_FRONT_MODE := main front_malloc front_string
PGO_LUA_OBJECTS := $(LUA_MODULES:%=$(PGO)/lua/%.o)
PGO_CORE_OBJECTS := $(PGO_CSRC:%=$(PGO)/%.o)
PGO_FRONT_MODE_OBJECTS := $(PGO_FRONT_MODE:%=$(PGO)/front-mode/%.o)
PGO_OTHER_OBJECTS := $(filter-out $(foreach s,$(PGO_CSRC) $(PGO_FRONT_MODE),$(BUILD)/obj/$(s).o),$(OBJECTS))
PGO_TRAINING := $(wildcard fixtures/vac/valid/* fixtures/vac/tampered/* fixtures/vac/archives/*)

$(PGO_LUA_OBJECTS): $(PGO)/lua/%.o: $(LUA_SRC)/.verified | $(FRONT_INC)/.made $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(PGO_CC) -O2 -std=gnu99 -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -idirafter $(FRONT_INC) $(PGO_GENERATE) \
	  -dumpdir $(FRONT)/lua/ -c $(LUA_SRC)/src/$*.c -o $@

$(PGO_CORE_OBJECTS): $(PGO)/%.o: csrc/%.c csrc/*.h $(BUILD)/modules.inc $(LUA_SRC)/.verified | $(FRONT_INC)/.made $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(PGO_CC) $(filter-out -Werror,$(CFLAGS)) -I$(LUA_SRC)/src -idirafter $(FRONT_INC) $(PGO_GENERATE) \
	  -dumpdir $(FRONT)/ -c $< -o $@

$(PGO_FRONT_MODE_OBJECTS): $(PGO)/front-mode/%.o: csrc/%.c csrc/*.h $(BUILD)/modules.inc $(LUA_SRC)/.verified | $(FRONT_INC)/.made $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(PGO_CC) $(filter-out -Werror,$(CFLAGS)) -I$(LUA_SRC)/src -idirafter $(FRONT_INC) -DVKIT_FRONT \
	  -DVKIT_SHARED_BUILD_DIR='"$(BUILD)/lib"' -c $< -o $@

# The instrumented objects in place of the full executable's and of
# Debian's liblua5.4.a.  The precompiled modules are order-only (see above).
$(PGO_TRAINER): $(PGO_LUA_OBJECTS) $(PGO_CORE_OBJECTS) $(PGO_FRONT_MODE_OBJECTS) $(PGO_OTHER_OBJECTS) \
    | $(filter-out $(BUILD)/obj/luabc.o,$(EXTRA_OBJECTS)) $(BUILD)/obj/luabc.o
	@mkdir -p $(@D)
	$(PGO_CC) $(LDFLAGS) $(PGO_GENERATE) -Wl,-E -o $@ $(PGO_LUA_OBJECTS) $(PGO_CORE_OBJECTS) $(PGO_FRONT_MODE_OBJECTS) \
	  $(PGO_OTHER_OBJECTS) $(EXTRA_OBJECTS) $(EXTRA_LDLIBS) $(LDLIBS)

$(PGO_STAMP): $(PGO_TRAINER)
	@rm -rf $(PGO_PROFILE) && mkdir -p $(PGO_PROFILE)
	@for b in $(PGO_TRAINING); do $(PGO_TRAINER) vac verify $$b > /dev/null 2>&1; done; \
	  n=$$(ls $(PGO_PROFILE) | grep -c '\.gcda$$'); \
	  for o in lua/lvm json; do ls $(PGO_PROFILE) | grep -q "#front#$$(echo $$o | tr / '#')\.gcda$$" || \
	    { echo "profile training wrote no counts for $(FRONT)/$$o.o (see $(PGO_PROFILE))" >&2; exit 1; }; done; \
	  echo "profile: counts for $$n objects from $(words $(PGO_TRAINING)) bundles verified by $(PGO_TRAINER)"
	@touch $@

# The front's objects that take the profile (mk/front.mk's recipes run
# $(FRONT_PGO) when it is set), as link-time-optimisation objects: the
# front's link (FRONT_LINK) optimises them together.
FRONT_PGO_FLAGS := -flto -fprofile-use=$(PGO_PROFILE) -fprofile-partial-training -Wno-missing-profile \
  -Wno-coverage-mismatch
FRONT_LTO := -flto=auto -O2
$(LUA_FRONT_OBJECTS) $(PGO_CSRC:%=$(FRONT)/%.o): $(PGO_STAMP)
$(LUA_FRONT_OBJECTS) $(PGO_CSRC:%=$(FRONT)/%.o): private FRONT_PGO = $(FRONT_PGO_FLAGS)

clean: clean-pgo
.PHONY: clean-pgo
clean-pgo:
	rm -rf $(PGO)
