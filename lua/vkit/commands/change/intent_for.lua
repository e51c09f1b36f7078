--- Which accepted intent a change is about, for the one-command flow
-- (`vkit change certify --base REV --candidate REV`): among the intents
-- the base accepts (verification/change-intents/accepted.v1.json at the
-- base, which is the trusted target), those whose bound source file
-- differs between base and candidate.  Read from Git objects only, never
-- the working tree.  Exactly one must match; otherwise the sentence says
-- which to name with --intent.
local json = require "vkit.json"
local hash = require "vkit.hash"
local fs = require "vkit.fs"
local intent_mod = require "vkit.change.intent"
local change_policy = require("vkit.policy").change

local M = {}

local CAP = change_policy.caps.document_bytes

local function read_json(repo, commit, path)
  local blob, message, code = repo:read(commit, path, CAP)
  if not blob then return nil, message, code end
  local doc, dmessage = json.decode(blob.bytes)
  if doc == nil then return nil, ("%s is not valid JSON (%s)"):format(path, dmessage), "invalid-json" end
  return doc
end

-- {digest, source, function} of one accepted intent at the base.
local function bound(repo, base, digest)
  local path = intent_mod.revision_path(change_policy.layout, digest)
  local blob, message = repo:read(base, path, CAP)
  if not blob then return nil, message end
  local revision, rmessage = intent_mod.parse_revision(blob.bytes, path)
  if not revision then return nil, rmessage end
  local map, mmessage = read_json(repo, base, revision.artifacts.binding_map.path)
  if not map then return nil, mmessage end
  return { digest = digest, source = map.source, ["function"] = map["function"],
           requirement = revision.requirement.source }
end

-- Whether `path` differs between the two commits (absent on one side
-- counts; a source over the cap, which preflight refuses anyway, counts
-- as changed).
local function differs(repo, base, candidate, path)
  if type(path) ~= "string" then return false end
  local cap = change_policy.caps.source_bytes
  local a, _, acode = repo:read(base, path, cap)
  local b, _, bcode = repo:read(candidate, path, cap)
  if a and b then return a.blob ~= b.blob or a.mode ~= b.mode end
  return not (acode == "missing-path" and bcode == "missing-path")
end

--- The digest named by --intent: a digest itself, or an intent revision
--  file (its digest recomputed from its bytes).  digest, or nil and why.
function M.named(text)
  if hash.is_digest(text) then return text end
  local bytes, message = fs.read(text, CAP)
  if not bytes then return nil, ("--intent is neither a digest nor a readable intent revision: %s"):format(message) end
  local revision, rmessage = intent_mod.parse_revision(bytes, text)
  if not revision then return nil, rmessage end
  return revision.digest
end

--- The accepted intent binding the function the change touches: {digest,
--  source, function, requirement}, or nil and a sentence.
function M.find(repo, base, candidate, where)
  local list_path = change_policy.layout.accepted_list
  local blob, message, code = repo:read(base, list_path, CAP)
  if not blob then
    if code == "missing-path" then
      return nil, ("the base %s accepts no intent (%s is missing in %s); accept one first (`vkit change intent init`)")
        :format(base:sub(1, 12), list_path, where)
    end
    return nil, message
  end
  local accepted, amessage = intent_mod.parse_accepted(blob.bytes, list_path)
  if not accepted then return nil, amessage end
  local changed, unchanged, problems = {}, {}, {}
  for _, digest in ipairs(accepted.list) do
    local b, why = bound(repo, base, digest)
    if not b then
      problems[#problems + 1] = ("%s: %s"):format(digest:sub(1, 12), why)
    elseif differs(repo, base, candidate, b.source) then
      changed[#changed + 1] = b
    else
      unchanged[#unchanged + 1] = b
    end
  end
  if #changed == 1 then return changed[1] end
  local function names(list)
    local out = {}
    for _, b in ipairs(list) do out[#out + 1] = ("%s (%s in %s)"):format(b.digest, b["function"], b.source) end
    return table.concat(out, ", ")
  end
  if #changed > 1 then
    return nil, ("the change touches the sources of %d accepted intents: %s; name one with --intent"):format(#changed,
      names(changed))
  end
  local why = #accepted.list == 0 and "the base accepts no intent"
    or ("no accepted intent binds a source the change touches (accepted: %s)"):format(names(unchanged))
  if #problems > 0 then why = why .. "; unreadable: " .. table.concat(problems, "; ") end
  return nil, why .. "; name one with --intent"
end

return M
