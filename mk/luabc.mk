# vkit's Lua modules precompiled into the binary: compiling them is most of
# the instructions of a cold `vkit vac verify` (docs/vac-performance.md).
# csrc/main.c runs a module's entry only while its file holds, byte for
# byte, the source the entry was compiled from (mk/luabc.lua), so an
# edited module runs from its source.  policies/ are never precompiled:
# vkit.policy reads them as text.
LUABC_SOURCES := $(sort $(shell find lua -name '*.lua'))
EXTRA_OBJECTS += $(BUILD)/obj/luabc.o
ASAN_EXTRA_OBJECTS += $(BUILD)/asan/luabc.o

$(BUILD)/luabc.c: mk/luabc.lua $(LUABC_SOURCES) | $(DEPS_STAMP)
	@mkdir -p $(BUILD)
	lua5.4 mk/luabc.lua $@ "$$(lua5.4 -v | cut -d' ' -f1-2)" $(LUABC_SOURCES)

$(BUILD)/obj/luabc.o: $(BUILD)/luabc.c csrc/luabc.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/asan/luabc.o: $(BUILD)/luabc.c csrc/luabc.h
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -O2,$(CFLAGS)) $(ASAN) -c $< -o $@

clean: clean-luabc
.PHONY: clean-luabc
clean-luabc:
	rm -f $(BUILD)/luabc.c
