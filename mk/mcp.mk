# The official MCP TypeScript SDK client that tests/mcp_e2e_spec.lua drives
# `vkit mcp` with (tests/mcp/client.mjs).
#
#   make mcp-client   npm ci from the committed tests/mcp/package-lock.json:
#                     exact versions, each tarball checked against the
#                     lock's sha512 integrity; no install scripts run.
# The spec runs this target itself, so `make test` needs nothing more.
MCP_CLIENT_DIR := tests/mcp
MCP_CLIENT_STAMP := $(MCP_CLIENT_DIR)/node_modules/.vkit-installed

.PHONY: mcp-client
mcp-client: $(MCP_CLIENT_STAMP)

$(MCP_CLIENT_STAMP): $(MCP_CLIENT_DIR)/package.json $(MCP_CLIENT_DIR)/package-lock.json | $(DEPS_STAMP)
	cd $(MCP_CLIENT_DIR) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@

# junit2json, the JUnit XML consumer tests/report_spec.lua reads vkit's
# JUnit reports with (tests/junit/read.mjs); installed the same way.
JUNIT_DIR := tests/junit
JUNIT_STAMP := $(JUNIT_DIR)/node_modules/.vkit-installed

.PHONY: junit-consumer
junit-consumer: $(JUNIT_STAMP)

$(JUNIT_STAMP): $(JUNIT_DIR)/package.json $(JUNIT_DIR)/package-lock.json | $(DEPS_STAMP)
	cd $(JUNIT_DIR) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@
