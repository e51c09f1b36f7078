# Microsoft's SARIF multitool, whose `validate` command the SARIF spec
# (tests/report_sarif_spec.lua) checks vkit's SARIF output with.
#
#   make sarif-multitool   fetch, verify against deps/sarif.lock, extract to
#                          build/sarif-multitool/<version>/ (Sarif.Multitool)
# The tarball is checked BEFORE tar reads it; nothing is vendored in Git.
# Not part of `all`: only the spec needs it, and it runs this target itself.
SARIF_LOCK := deps/sarif.lock
SARIF_NAME := @microsoft/sarif-multitool-linux
SARIF_VER := $(or $(shell awk '$$1 == "$(SARIF_NAME)" { print $$2 }' $(SARIF_LOCK)),$(error $(SARIF_LOCK) has no $(SARIF_NAME)))
SARIF_SHA := $(shell awk '$$1 == "$(SARIF_NAME)" { print $$3 }' $(SARIF_LOCK))
SARIF_ROOT := $(BUILD)/sarif-multitool
SARIF_TGZ := $(SARIF_ROOT)/dl/microsoft-sarif-multitool-linux-$(SARIF_VER).tgz
SARIF_DIR := $(SARIF_ROOT)/$(SARIF_VER)

.PHONY: sarif-multitool
sarif-multitool: $(SARIF_DIR)/.verified

$(SARIF_TGZ): | $(DEPS_STAMP)
	@mkdir -p $(@D)
	npm pack --silent --ignore-scripts --pack-destination $(@D) $(SARIF_NAME)@$(SARIF_VER) >/dev/null

$(SARIF_DIR)/.verified: $(SARIF_TGZ) $(SARIF_LOCK) | $(DEPS_STAMP)
	@actual=$$(sha256sum $< | cut -d' ' -f1); \
	if [ "$$actual" != "$(SARIF_SHA)" ]; then \
	  echo "$<: sha256 $$actual differs from $(SARIF_LOCK) ($(SARIF_SHA)); refusing to extract." >&2; exit 1; \
	fi
	@rm -rf $(@D) $(@D).tmp && mkdir -p $(@D).tmp
	tar -xzf $< -C $(@D).tmp --no-same-owner
	@mv $(@D).tmp/package $(@D) && rmdir $(@D).tmp
	@chmod 0755 $(@D)/Sarif.Multitool
	@touch $@
