--- How a change touches one bound function of a source file, read from the
-- syntax trees of the file at the base and at the candidate (through
-- vkit.admission.shape): what the one command (`vkit change certify --base
-- --candidate`) needs to tell, among several accepted intents binding one
-- changed file, the function the change is about.  Pure but for parsing.
--
--   compare(language, base_source, candidate_source, fn) ->
--     { definition_changed = bool, confined = bool }
--
-- definition_changed: the definition's text differs, or the definition is
-- missing or does not parse on either side (which counts as changed).
-- confined: the file's bytes outside the definition are identical on both
-- sides, and those bytes spell the function's name nowhere (not even in a
-- comment) on either side; so nothing else in the file calls what changed
-- by its name, and no helper, constant or module-level line changed.  A
-- rest that could spell the name otherwise (a non-ASCII byte in Python,
-- which normalises identifiers by NFKC; a `\u` escape in TypeScript) is
-- not confined either.  What it cannot see is a reference that does not
-- spell the name (reflection in the unchanged rest of the file, which is
-- the base's reviewed code).
local shape = require "vkit.admission.shape"
local ts = require "vkit.ts"
local limits = require("vkit.policy").limits.admission

local M = {}

-- The definition's text and the rest of the file around it, or nil.
local function split(language, source, fn)
  local def = shape.definition(ts, language, source, fn, limits)
  if not def then return nil end
  return source:sub(def.start + 1, def.stop), source:sub(1, def.start) .. source:sub(def.stop + 1)
end

-- Spellings of an identifier other than its bytes: Python reads
-- identifiers NFKC-normalised (`ｓｃｏｒｅ` is `score`), TypeScript reads
-- `\u0073core` and `\u{73}core` as `score`.  Without a normaliser here,
-- a rest holding what could be one counts as naming the function.
local OTHER_SPELLING = {
  python = function(rest) return rest:find "[\128-\255]" ~= nil end,
  typescript = function(rest) return rest:find "\\u" ~= nil end,
}

local function names(language, rest, fn)
  if rest:find("%f[%w_$]" .. fn:gsub("%W", "%%%0") .. "%f[^%w_$]") then return true end
  local other = OTHER_SPELLING[language]
  return other ~= nil and other(rest)
end

function M.compare(language, base_source, candidate_source, fn)
  local base_def, base_rest = split(language, base_source, fn)
  local cand_def, cand_rest = split(language, candidate_source, fn)
  if not (base_def and cand_def) then return { definition_changed = true, confined = false } end
  return {
    definition_changed = base_def ~= cand_def,
    confined = base_rest == cand_rest and not names(language, base_rest, fn) and not names(language, cand_rest, fn),
  }
end

return M
