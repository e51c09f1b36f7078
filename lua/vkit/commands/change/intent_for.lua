--- Which accepted intent a change is about, for the one-command flow
-- (`vkit change certify --base REV --candidate REV`): among the intents
-- the base accepts (verification/change-intents/accepted.v1.json at the
-- base, read from Git objects only, never the working tree nor anything
-- the candidate holds), those whose bound source file differs between
-- base and candidate.  One is the answer.  When several bind changed
-- files, the syntax trees narrow them (vkit.change.touched): the answer is
-- the one intent whose function's definition changed, only when every
-- other binds the same file, no other file of that language changed, and
-- the change is confined to that definition (nothing else in the file
-- changed, nothing else names the function);
-- the others are returned as `uncertified`, for the command to name.
-- Intents binding unchanged files of a language of which a helper (a file
-- no chosen intent binds) changed are returned as `unreached`, named too:
-- their modules may load it.
-- Otherwise the sentence says which to name with --intent, one run each:
-- a function whose own text is unchanged can change behaviour through a
-- helper it calls, so narrowing never drops an intent silently.
local json = require "vkit.json"
local hash = require "vkit.hash"
local fs = require "vkit.fs"
local intent_mod = require "vkit.change.intent"
local touched = require "vkit.change.touched"
local scaffold = require "vkit.change.scaffold"
local change_policy = require("vkit.policy").change
local escape = require("vkit.terminal").escape

local M = {}

local CAP = change_policy.caps.document_bytes

local function read_json(repo, commit, path)
  local blob, message, code = repo:read(commit, path, CAP)
  if not blob then return nil, message, code end
  local doc, dmessage = json.decode(blob.bytes)
  if doc == nil then return nil, ("%s is not valid JSON (%s)"):format(path, dmessage), "invalid-json" end
  return doc
end

-- {digest, source, function, language, requirement} of one accepted intent
-- at the base (its binding map read there; preflight checks its pin).
local function bound(repo, base, digest)
  local path = intent_mod.revision_path(change_policy.layout, digest)
  local blob, message = repo:read(base, path, CAP)
  if not blob then return nil, message end
  local revision, rmessage = intent_mod.parse_revision(blob.bytes, path)
  if not revision then return nil, rmessage end
  local map, mmessage = read_json(repo, base, revision.artifacts.binding_map.path)
  if not map then return nil, mmessage end
  return { digest = digest, source = map.source, ["function"] = map["function"], language = map.language,
           requirement = revision.requirement.source }
end

-- The two sides of `path`: {base, candidate (blobs or nil), differs}.
-- Absent on one side counts as differing; so does a source over the cap,
-- which preflight refuses anyway.
local function sides(repo, base, candidate, path)
  if type(path) ~= "string" then return { differs = false } end
  local cap = change_policy.caps.source_bytes
  local a, _, acode = repo:read(base, path, cap)
  local b, _, bcode = repo:read(candidate, path, cap)
  local differs
  if a and b then
    differs = a.blob ~= b.blob or a.mode ~= b.mode
  else
    differs = not (acode == "missing-path" and bcode == "missing-path")
  end
  return { base = a, candidate = b, differs = differs }
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

local alone

-- An intent as a sentence names it; the function and file come from the
-- base's binding map, shown with their controls escaped (a line break in
-- a CI log could start a workflow command).
local function shown(s) return escape(tostring(s)) end

local function name(b)
  return ("%s (%s in %s)"):format(b.digest, shown(b["function"]), shown(b.source))
end

local function names(list)
  local out = {}
  for _, b in ipairs(list) do out[#out + 1] = name(b) end
  return table.concat(out, ", ")
end

-- What a module of each language can load besides its own sources' kind:
-- a Python module imports compiled and Cython modules and byte code; a
-- TypeScript module imports JavaScript and JSON; a Rust crate's manifest
-- and lock file choose its dependencies and build.
local LOADS = {
  python = { "%.pyx$", "%.pxd$", "%.pyc$", "%.pth$", "%.so$", "%.pyd$" },
  typescript = { "%.tsx$", "%.mts$", "%.cts$", "%.js$", "%.jsx$", "%.mjs$", "%.cjs$", "%.json$" },
  rust = { "^Cargo%.toml$", "/Cargo%.toml$", "^Cargo%.lock$", "/Cargo%.lock$" },
}

-- Whether `path` is code of `language` or something it can load.
local function code_of(language, path)
  if path:match(scaffold.EXTENSIONS[language]) then return true end
  for _, pattern in ipairs(LOADS[language] or {}) do
    if path:match(pattern) then return true end
  end
  return false
end

-- Another file of the language's sources or what they can load (by its
-- name) than `path` that differs between the two commits: its path, or
-- why the trees could not be compared; nil when there is none.
local function other_code(repo, base, candidate, language, path)
  local a, awhy = repo:tree(base)
  local b, bwhy = repo:tree(candidate)
  if not (scaffold.EXTENSIONS[language] and a and b) then
    return ("the trees could not be compared (%s)"):format(tostring(awhy or bwhy or language))
  end
  local at = {}
  for _, e in ipairs(a) do at[e.path] = e.blob .. " " .. e.mode end
  for _, e in ipairs(b) do
    if e.path ~= path and code_of(language, e.path) and at[e.path] ~= e.blob .. " " .. e.mode then return e.path end
    at[e.path] = nil
  end
  for _, e in ipairs(a) do
    if at[e.path] and e.path ~= path and code_of(language, e.path) then return e.path end  -- deleted
  end
  return nil
end

-- Among several intents binding changed files: the one the change is
-- about, or nil and the sentence saying why none can be chosen.
local function narrow(repo, base, candidate, changed, files)
  local defs = {}
  for _, b in ipairs(changed) do
    local f = files[b.source]
    b.touch = touched.compare(b.language, f.base and f.base.bytes, f.candidate and f.candidate.bytes, b["function"])
    if b.touch.definition_changed then defs[#defs + 1] = b end
  end
  local head = ("the change touches the sources of %d accepted intents: %s"):format(#changed, names(changed))
  local tail = "; name one with --intent, and certify each (a function whose own text is unchanged "
    .. "can change behaviour through what it calls)"
  if #defs ~= 1 then
    return nil, head .. ("; %s changed"):format(#defs == 0 and "none of their definitions"
      or ("the definitions of %d of them"):format(#defs)) .. tail
  end
  local chosen, others = defs[1], {}
  for _, b in ipairs(changed) do
    if b ~= chosen then
      if b.source ~= chosen.source then
        return nil, head .. ("; only %s's definition changed, but %s changed too"):format(
          shown(chosen["function"]), shown(b.source)) .. tail
      end
      others[#others + 1] = b
    end
  end
  if not chosen.touch.confined then
    return nil, head .. ("; only %s's definition changed, but the change reaches outside it in %s (another "
      .. "line of the file changed, or the file names %s elsewhere)"):format(shown(chosen["function"]),
      shown(chosen.source), shown(chosen["function"])) .. tail
  end
  local other = other_code(repo, base, candidate, chosen.language, chosen.source)
  if other then
    return nil, head .. ("; only %s's definition changed, but %s changed too"):format(shown(chosen["function"]),
      shown(other)) .. tail
  end
  chosen.uncertified = others
  return chosen
end

-- The one intent binding a changed file, with `unreached`: the intents
-- binding unchanged files of a language of which another file changed
-- (neither theirs nor the chosen intent's: a helper), which their modules
-- may load, so the change may reach them unseen: {{intent, file}}, or nil.
function alone(repo, base, candidate, chosen, unchanged)
  local reached, by_language = {}, {}
  for _, b in ipairs(unchanged) do
    if type(b.language) == "string" and scaffold.EXTENSIONS[b.language] then
      if by_language[b.language] == nil then
        by_language[b.language] = other_code(repo, base, candidate, b.language, chosen.source) or false
      end
      local file = by_language[b.language]
      if file and file ~= b.source then reached[#reached + 1] = { intent = b, file = file } end
    end
  end
  chosen.unreached = #reached > 0 and reached or nil
  return chosen
end

--- The accepted intent binding the function the change touches: {digest,
--  source, function, language, requirement, uncertified (the other
--  intents binding the same file, not certified by this run; or nil)}, or
--  nil and a sentence.
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
  local changed, unchanged, problems, files = {}, {}, {}, {}
  for _, digest in ipairs(accepted.list) do
    local b, why = bound(repo, base, digest)
    if not b then
      problems[#problems + 1] = ("%s: %s"):format(digest:sub(1, 12), why)
    else
      local key = type(b.source) == "string" and b.source or ""
      files[key] = files[key] or sides(repo, base, candidate, b.source)
      if files[key].differs then changed[#changed + 1] = b else unchanged[#unchanged + 1] = b end
    end
  end
  if #changed == 1 then return alone(repo, base, candidate, changed[1], unchanged) end
  if #changed > 1 then
    local chosen, why = narrow(repo, base, candidate, changed, files)
    if not chosen then return nil, why end
    return alone(repo, base, candidate, chosen, unchanged)
  end
  local why = #accepted.list == 0 and "the base accepts no intent"
    or ("no accepted intent binds a source the change touches (accepted: %s)"):format(names(unchanged))
  if #problems > 0 then why = why .. "; unreadable: " .. table.concat(problems, "; ") end
  return nil, why .. "; name one with --intent"
end

--- The line naming the intents a run did not certify (M.find's
--  `uncertified` and `unreached`), or nil when there are none.
function M.uncertified_line(found)
  if not found then return nil end
  local lines = {}
  if found.uncertified and #found.uncertified > 0 then
    local one = #found.uncertified == 1
    lines[#lines + 1] = ("not certified: %s %s %s too; %s, but certify %s with --intent D"):format(
      names(found.uncertified), one and "binds" or "bind", escape(tostring(found.source)),
      one and "its definition is unchanged" or "their definitions are unchanged", one and "it" or "each")
  end
  for _, r in ipairs(found.unreached or {}) do
    lines[#lines + 1] = ("not certified: %s; its file is unchanged, but %s changed too and its module may load "
      .. "it; certify it with --intent D"):format(name(r.intent), escape(r.file))
  end
  return #lines > 0 and table.concat(lines, "\n") or nil
end

return M
