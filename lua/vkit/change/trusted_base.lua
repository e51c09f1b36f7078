--- Whether a base the caller chose stands on the host's trusted target, for
-- the one command (`vkit change certify --base REV --candidate REV
-- --trusted-target REV`).  The base's accepted intents are the ones that
-- bind, so a base the candidate's author picked (a side branch accepting a
-- lax intent) would let them pick their own intents.  With a trusted
-- target named, the base must be it or in its history, and the intent the
-- run binds must still be accepted there, under the same difference policy
-- byte for byte (an intent withdrawn or a policy tightened on the trusted
-- branch since the base is not the one that binds).  Git objects only.
--
--   contains(repo, trusted, base)        -> true | nil, code, message
--   still_accepted(repo, trusted, base, digest) -> true | nil, code, message
--   describe(base, trusted)              -> the sentence naming the trusted
--                                           target (trusted nil: none named)
-- codes: base-not-in-trusted-target, intent-not-accepted-at-trusted-target,
--        difference-policy-differs-at-trusted-target, and a read's code.
local intent_mod = require "vkit.change.intent"
local policy = require("vkit.policy").change

local M = {}

local CAP = policy.caps.document_bytes

local function short(id) return id:sub(1, 12) end

function M.contains(repo, trusted, base)
  local yes, message, code = repo:is_ancestor(base, trusted)
  if yes == nil then return nil, code or "git-error", message end
  if not yes then
    return nil, "base-not-in-trusted-target", ("the base %s is not the trusted target %s nor in its history: "
      .. "its accepted intents are not the trusted branch's"):format(short(base), short(trusted))
  end
  return true
end

function M.still_accepted(repo, trusted, base, digest)
  if trusted == base then return true end
  local layout = policy.layout
  local blob, message = repo:read(trusted, layout.accepted_list, CAP)
  local accepted = blob and intent_mod.parse_accepted(blob.bytes, layout.accepted_list)
  local listed = false
  for _, d in ipairs(accepted and accepted.list or {}) do listed = listed or d == digest end
  if not listed then
    return nil, "intent-not-accepted-at-trusted-target", ("the intent %s is accepted at the base %s but not at "
      .. "the trusted target %s (%s)"):format(short(digest), short(base), short(trusted),
      blob and "not in its list" or tostring(message))
  end
  local path = ("%s/%s.v1.json"):format(layout.differences_dir, digest)
  local at_base, _, bcode = repo:read(base, path, CAP)
  local at_trusted, _, tcode = repo:read(trusted, path, CAP)
  local same = (at_base and at_trusted and at_base.blob == at_trusted.blob)
    or (not at_base and not at_trusted and bcode == "missing-path" and tcode == "missing-path")
  if not same then
    return nil, "difference-policy-differs-at-trusted-target", ("the difference policy %s differs between the "
      .. "base %s and the trusted target %s"):format(path, short(base), short(trusted))
  end
  return true
end

function M.describe(base, trusted)
  if not trusted then
    return ("the base %s as the caller gave it (no --trusted-target named the trusted branch)"):format(base)
  end
  if trusted == base then return ("%s, the base"):format(base) end
  return ("%s; the base %s is in its history and its intent still accepted there"):format(trusted, base)
end

return M
