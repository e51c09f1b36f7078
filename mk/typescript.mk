# The pinned TypeScript native compiler (paired execution, seed 001).
#
#   make typescript   fetch, verify against deps/typescript.lock, extract to
#                     build/typescript/<version>/ (bin: lib/tsc)
# The tarball is checked BEFORE tar reads it; nothing is vendored in Git.
TSC_LOCK := deps/typescript.lock
TSC_NAME := @typescript/typescript-linux-x64
TSC_VER := $(or $(shell awk '$$1 == "$(TSC_NAME)" { print $$2 }' $(TSC_LOCK)),$(error $(TSC_LOCK) has no $(TSC_NAME)))
TSC_SHA := $(shell awk '$$1 == "$(TSC_NAME)" { print $$3 }' $(TSC_LOCK))
TSC_ROOT := $(BUILD)/typescript
TSC_TGZ := $(TSC_ROOT)/dl/typescript-typescript-linux-x64-$(TSC_VER).tgz
TSC_DIR := $(TSC_ROOT)/typescript-linux-x64-$(TSC_VER)

.PHONY: typescript
all: typescript
typescript: $(TSC_DIR)/.verified

$(TSC_TGZ): | $(DEPS_STAMP)
	@mkdir -p $(@D)
	npm pack --silent --ignore-scripts --pack-destination $(@D) $(TSC_NAME)@$(TSC_VER) >/dev/null

$(TSC_DIR)/.verified: $(TSC_TGZ) $(TSC_LOCK) | $(DEPS_STAMP)
	@actual=$$(sha256sum $< | cut -d' ' -f1); \
	if [ "$$actual" != "$(TSC_SHA)" ]; then \
	  echo "$<: sha256 $$actual differs from $(TSC_LOCK) ($(TSC_SHA)); refusing to extract." >&2; exit 1; \
	fi
	@rm -rf $(@D) $(@D).tmp && mkdir -p $(@D).tmp
	tar -xzf $< -C $(@D).tmp --no-same-owner
	@mv $(@D).tmp/package $(@D) && rmdir $(@D).tmp
	@test -x $(@D)/lib/tsc
	@touch $@
