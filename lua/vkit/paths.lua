--- Normalised repository-relative POSIX paths (seed 000: "Normalized
-- repository-relative POSIX path"; evidence paths relative to run_dir/evidence/).
--
-- check(p) -> true | nil, reason, message.  A normalised path is non-empty,
-- relative, uses "/" only as a separator, and has no empty, "." or ".."
-- component, no NUL, backslash or control character, no trailing "/", no
-- ".git" component in any case, and at most 4,096 bytes.  Nothing is
-- resolved: a path either is already normal or is refused, so two spellings
-- can never name one file.
local M = {}

M.MAX_BYTES = require("vkit.policy").protocol.max_path_bytes

function M.check(p)
  if type(p) ~= "string" then return nil, "invalid-path", "path must be a string" end
  if p == "" then return nil, "invalid-path", "path is empty" end
  if #p > M.MAX_BYTES then return nil, "invalid-path", ("path is longer than %d bytes"):format(M.MAX_BYTES) end
  if p:sub(1, 1) == "/" then return nil, "invalid-path", ("%q is absolute"):format(p) end
  if p:find "[%z\1-\31\127\\]" then return nil, "invalid-path", ("%q holds a control character or backslash"):format(p) end
  if p:sub(-1) == "/" then return nil, "invalid-path", ("%q ends with /"):format(p) end
  for part in (p .. "/"):gmatch "([^/]*)/" do
    if part == "" then return nil, "invalid-path", ("%q has an empty component"):format(p) end
    if part == "." or part == ".." then return nil, "invalid-path", ("%q has a %q component"):format(p, part) end
    if part:lower() == ".git" then return nil, "invalid-path", ("%q has a .git component"):format(p) end
  end
  return true
end

--- Joins a checked relative path under a root directory.
function M.under(root, p)
  assert(M.check(p))
  return root .. "/" .. p
end

return M
