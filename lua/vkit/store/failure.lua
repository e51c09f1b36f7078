--- A shared store's refusal, raised as an error: {message, code}.
--
-- The PostgreSQL store raises one whenever a statement fails or the store
-- cannot do what was asked (the database cannot be reached, the role lacks
-- a privilege, a guard of the schema refused, the evidence root cannot be
-- used).  It is the command's answer, not a bug: a command that meets one
-- says its message and exits 3 instead of printing a traceback
-- (vkit.commands.run), and a worker tells a lost connection (code below)
-- from a refusal.  tostring(failure) is its message.
local M = {}

local Failure = { __name = "vkit.store.failure", __tostring = function(e) return e.message end }

--- Raises a failure with a message and a code (an SQLSTATE, or a vkit
--  code such as "no-evidence-root").
function M.raise(message, code)
  error(setmetatable({ message = message, code = code }, Failure), 0)
end

--- Whether an error object is a store failure.
function M.is(e)
  return getmetatable(e) == Failure
end

return M
