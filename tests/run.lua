--- The test command: every Busted spec under tests/, run by this vkit
--  binary (so the specs exercise exactly the build under test, sanitized
--  or not).  Extra arguments go to Busted: `vkit script tests/run.lua
--  --filter json` or a spec path.  The last line is "N passed, N failed,
--  N skipped"; the exit status is non-zero on any failure or error.
local user = { ... }
local has_root = false
for _, a in ipairs(user) do
  if not a:match "^%-" then has_root = true end
end
local argv = { [0] = "busted", "--output=tests/support/summary.lua", "--pattern=_spec", "--keep-going" }
for _, a in ipairs(user) do argv[#argv + 1] = a end
if not has_root then argv[#argv + 1] = "tests" end
_G.arg = argv
require "busted.runner" { standalone = false }
