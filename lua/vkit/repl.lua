--- The interactive loop behind `vkit repl`.
--
-- Interactive (a terminal on stdin): readline editing, persistent history
-- in $HOME/.vkit_history (appended as each chunk is entered), Tab
-- completion of globals and table fields (also after [n] and ["key"]), "> "
-- and ">> " prompts, Ctrl-C cancels the line (or interrupts a running
-- chunk), Ctrl-D exits.  Piped: no prompts and no history, so the REPL can
-- be driven by a test; the exit status is 1 if any chunk failed.
-- Expressions print their values with vkit.pretty; statements run as-is.
local term = require "vkit.term"
local pretty = require "vkit.pretty"

local M = {}

local HISTORY_LINES = 1000

--- Compiles one chunk of input: "return <src>" first, so bare expressions
--  print; a chunk that is merely unfinished reports `incomplete`.
function M.compile(src, env)
  local fn = load("return " .. src, "=stdin", "t", env)
  if fn then return fn end
  local err
  fn, err = load(src, "=stdin", "t", env)
  if fn then return fn end
  if err:match "<eof>$" then return nil, err, "incomplete" end
  return nil, err, "syntax"
end

-- One key of a path at position i of s: a name, an [integer] or a
-- ["string"] / ['string'], and the position after it; nil when none.
local function key_at(s, i)
  local name, after = s:match("^([%a_][%w_]*)()", i)
  if name then return name, after end
  local num, after_num = s:match("^%[%s*(%d+)%s*%]()", i)
  if num then return tonumber(num), after_num end
  local _, str, after_str = s:match([[^%[%s*(["'])(.-)%1%s*%]()]], i)
  if str then return str, after_str end
end

-- The keys `prefix` walks ("r.attempts[1]" -> {"r", "attempts", 1}), or nil
-- when it is not a plain chain of them joined by ".", ":" or nothing
-- (before a "[").
local function path_of(prefix)
  local keys, i = {}, 1
  while i <= #prefix do
    local key, after = key_at(prefix, i)
    if key == nil then return nil end
    keys[#keys + 1] = key
    i = after
    local sep = prefix:sub(i, i)
    if sep == "." or sep == ":" then
      i = i + 1
    elseif sep ~= "[" and i <= #prefix then
      return nil
    end
  end
  return keys
end

--- Words that complete `word` ("vkit.ha" -> "vkit.hash",
--  "r.attempts[1].rec" -> "r.attempts[1].record"), from globals and the
--  fields of tables reached through names, [integers] and ["strings"].
--  Metamethods (names beginning "__") are never offered.
function M.complete(word, env)
  env = env or _G
  local prefix, last = word:match "^(.*[%.:])([%w_]*)$"
  local scope = env
  if prefix then
    local keys = path_of(prefix:sub(1, -2))
    if not keys then return {} end
    for _, key in ipairs(keys) do
      local ok, v = pcall(function() return scope[key] end)
      if not ok or type(v) ~= "table" then return {} end
      scope = v
    end
  else
    prefix, last = "", word
  end
  local seen, out = {}, {}
  local function add_keys(t)
    for k in next, t do
      if type(k) == "string" and k:match "^[%a_][%w_]*$" and k:sub(1, 2) ~= "__" and k:sub(1, #last) == last
        and not seen[k] then
        seen[k] = true
        out[#out + 1] = prefix .. k
      end
    end
  end
  add_keys(scope)
  local mt = getmetatable(scope)
  if type(mt) == "table" and type(mt.__index) == "table" then add_keys(mt.__index) end
  if type(mt) == "table" and type(mt.__complete) == "function" then -- names loaded on first use
    local names = {}
    for _, k in ipairs(mt.__complete()) do names[k] = true end
    add_keys(names)
  end
  table.sort(out)
  return out
end

local function print_results(ok, ...)
  if not ok then return false end
  local n = select("#", ...)
  if n == 0 then return true end
  local parts = {}
  for i = 1, n do parts[i] = pretty.format((select(i, ...))) end
  io.stdout:write(table.concat(parts, "\t"), "\n")
  return true
end

--- Evaluates one complete chunk; prints results or the error (a
--  traceback for a string error, the value itself for an error object that
--  is a table).
function M.eval(fn)
  local results = table.pack(term.pcall_interruptible(fn))
  if not results[1] then
    local err = results[2]
    if type(err) ~= "string" then
      io.stderr:write("error object: ", pretty.format(err), "\n")
      return false
    end
    -- The frames below the user's chunk are the REPL's own: leave them out.
    local trace = err:gsub("\n%s*%[C%]: in function 'vkit%.term%.pcall_interruptible'.*$", "")
    io.stderr:write(trace, "\n")
    return false
  end
  print_results(true, table.unpack(results, 2, results.n))
  io.stdout:flush()
  return true
end

local function history_path()
  local home = os.getenv "HOME"
  return home and (home .. "/.vkit_history")
end

--- Runs the loop; `reader(prompt)` returns a line, false (cancelled) or nil;
--  `remember(line)` keeps a finished chunk in the history (interactive).
function M.loop(reader, env, remember)
  local failures = 0
  local buffer = nil
  while true do
    local line = reader(buffer and ">> " or "> ")
    if line == nil then break end
    if line == false then
      buffer = nil
    else
      local src = buffer and (buffer .. "\n" .. line) or line
      local fn, err, why = M.compile(src, env)
      if why == "incomplete" then
        buffer = src
      else
        buffer = nil
        if remember and src:match "%S" then remember((src:gsub("\n", " "))) end
        if not fn then
          io.stderr:write(err, "\n")
          failures = failures + 1
        elseif not M.eval(fn) then
          failures = failures + 1
        end
      end
    end
  end
  if buffer then
    io.stderr:write("stdin: unfinished chunk at end of input\n")
    failures = failures + 1
  end
  return failures
end

function M.run(env)
  env = env or _G
  local interactive = term.isatty(0)
  if not interactive then
    local failures = M.loop(function() return io.read "l" end, env, nil)
    return failures == 0 and 0 or 1
  end
  io.stdout:write(("vkit %s on %s. Ctrl-D exits, Ctrl-C cancels the line.\n"):format(
    require("vkit").version, _VERSION))
  local history = history_path()
  if history then term.read_history(history) end
  term.set_completer(function(word) return M.complete(word, env) end)
  -- Each chunk is appended to the history file as it is entered: a session
  -- that is killed keeps what it was given.
  M.loop(term.readline, env, function(line) term.add_history(line, history) end)
  io.stdout:write("\n")
  if history then term.write_history(history, HISTORY_LINES) end
  return 0
end

return M
