# vkit's Lua modules precompiled into the binary: compiling them was half of
# the instructions of a cold `vkit vac verify`.  csrc/main.c loads a module
# from this table only when its file still has the source it was compiled
# from (mk/vacperf_luabc.lua), so an edited module runs from its source.
# the policies too: vkit.policy takes a policy's chunk from the table
# (boot.precompiled) when the file still holds the text it was compiled from
LUABC_SOURCES := $(sort $(shell find lua -name '*.lua') $(wildcard policies/*.lua))
EXTRA_OBJECTS += $(BUILD)/obj/luabc.o
ASAN_EXTRA_OBJECTS += $(BUILD)/asan/luabc.o
FRONT_EXTRA_OBJECTS += $(BUILD)/front/luabc.o

$(BUILD)/luabc.c: mk/vacperf_luabc.lua $(LUABC_SOURCES) | $(DEPS_STAMP)
	@mkdir -p $(BUILD)
	lua5.4 mk/vacperf_luabc.lua $@ "$$(lua5.4 -v | cut -d' ' -f1-2)" $(LUABC_SOURCES)

$(BUILD)/obj/luabc.o: $(BUILD)/luabc.c csrc/luabc.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/front/luabc.o: $(BUILD)/luabc.c csrc/luabc.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/asan/luabc.o: $(BUILD)/luabc.c csrc/luabc.h
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -O2,$(CFLAGS)) $(ASAN) -c $< -o $@

clean: clean-luabc
.PHONY: clean-luabc
clean-luabc:
	rm -f $(BUILD)/luabc.c
