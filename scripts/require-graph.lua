--- scripts/require-graph.lua: the require graph of lua/vkit and its layering.
--
--   vkit script scripts/require-graph.lua [--dot] [--packages] [ROOT]
--
-- Reads every module under ROOT/lua/vkit (default: the checkout this script
-- is in) and draws who requires whom: `require "vkit.x"` wherever it stands
-- (at the top or inside a function: a require hidden in a function is still
-- a dependency), and every string literal naming a vkit module (a table of
-- module names that a function requires by key, such as the report
-- renderers or the certification methods).  Modules required through a
-- policy (the store's job handlers) are taken from the policy file named in
-- DYNAMIC below; any other require of a computed name is reported, so a new
-- one cannot slip past the graph.
--
-- It prints the problems and exits 1 if there is any:
--   * a cycle between modules, or between packages (vkit.<package>.*);
--   * a library module requiring the command line (vkit.cli, vkit.cli.*,
--     vkit.commands.*) or the REPL (vkit.repl, vkit.repl.*); a front
--     (the facade, vkit.api.*, vkit.mcp.*) may read vkit.cli.exit only;
--   * any module but the command line's and the REPL's writing to
--     standard output (print, io.write, io.stdout:..., io.output).
-- Without problems it prints the package graph (--dot: Graphviz).
--
-- Loaded with dofile() it returns the pure functions, which
-- tests/layering_spec.lua also feeds with graphs of its own.
local M = {}

-- Presentation: the only modules that may print, and where exit statuses
-- are chosen: the dispatcher and its run outcomes (vkit.cli,
-- vkit.cli.*), each subcommand (vkit.commands.*) and the REPL
-- (vkit.repl, vkit.repl.*).
function M.is_presentation(module)
  return module == "vkit.cli" or module == "vkit.repl" or module:match("^vkit%.cli%.") ~= nil
    or module:match("^vkit%.repl%.") ~= nil or module:match("^vkit%.commands%.") ~= nil
end

-- The other fronts: the public facade and API, and the MCP server.  Like
-- the library they never print (MCP writes to the stream it is handed);
-- they may read the exit statuses the CLI publishes (vkit.cli.exit, which
-- vkit.api promises), and nothing else of the command line.
function M.is_front(module)
  return module == "vkit" or module:match("^vkit%.api%.") ~= nil or module:match("^vkit%.mcp%.") ~= nil
end
M.PUBLISHED = { ["vkit.cli.exit"] = true }

-- Requires of a computed name, and where the names they may take are
-- written down (a policy file, relative to the checkout).
M.DYNAMIC = {
  ["vkit.store.worker"] = { "policies/store.lua" },   -- the job kind's handler
  ["vkit.store.common"] = { "policies/store.lua" },   -- the handler that derives an outcome from evidence
  -- The rest name their modules as literals in the same file or in one
  -- they require (the public facade, the method and report tables, the
  -- CLI's command table): the literals are edges already.
  ["vkit"] = {},
  ["vkit.report"] = {},
  ["vkit.certify"] = { "lua/vkit/change/methods.lua" },
  -- The dispatcher loads the subcommand named on the command line
  -- (vkit.commands.<name>): a lookup by name at the root of the program,
  -- which every command sits above, not a dependency of the commands.
  ["vkit.cli"] = {},
}

--- The package of a module: vkit.certify -> change; vkit.cli -> cli;
--  vkit itself -> (facade).
function M.package(module)
  if module == "vkit" then return "(facade)" end
  return module:match("^vkit%.([%w_]+)") or module
end

-- Source text without comments and with long strings kept (a module name
-- in a comment is no dependency).
local function strip_comments(text)
  local out, i, n = {}, 1, #text
  while i <= n do
    local c = text:sub(i, i)
    if c == "-" and text:sub(i, i + 1) == "--" then
      local eqs = text:match("^%-%-%[(=*)%[", i)
      if eqs then
        local close = text:find("]" .. eqs .. "]", i, true)
        i = close and close + #eqs + 2 or n + 1
      else
        local nl = text:find("\n", i, true)
        i = nl or n + 1
      end
    elseif c == '"' or c == "'" then
      local j = i + 1
      while j <= n do
        local d = text:sub(j, j)
        if d == "\\" then j = j + 2
        elseif d == c or d == "\n" then break
        else j = j + 1 end
      end
      out[#out + 1] = text:sub(i, j)
      i = j + 1
    elseif c == "[" and text:match("^%[=*%[", i) then
      local eqs = text:match("^%[(=*)%[", i)
      local close = text:find("]" .. eqs .. "]", i, true)
      local j = close and close + #eqs + 1 or n
      out[#out + 1] = text:sub(i, j)
      i = j + 1
    else
      local j = text:find("[%-\"'%[]", i) or n + 1
      if j == i then j = i + 1 end
      out[#out + 1] = text:sub(i, j - 1)
      i = j
    end
  end
  return table.concat(out)
end
M.strip_comments = strip_comments

--- What one module's source shows: the vkit modules it names (literal
--  requires and literal names), its requires of a computed name (line
--  numbers), and the lines where it writes to standard output.
function M.scan(text)
  local code = strip_comments(text)
  local named, dynamic, stdout = {}, {}, {}
  -- "vkit.x.y" anywhere; the facade itself only where it is required (the
  -- bare word "vkit" is also a name, a tool's, a suite's)
  for name in code:gmatch("[\"']%s*(vkit%.[%w_%.]+)%s*[\"']") do named[name] = true end
  if code:match("require%s*%(?%s*[\"']vkit[\"']") then named.vkit = true end
  local line = 0
  for l in (code .. "\n"):gmatch("([^\n]*)\n") do
    line = line + 1
    -- require(expr) or pcall(require, expr) whose argument is not a literal
    if l:match("require%s*%(%s*[%a_]") or l:match("pcall%s*%(%s*require%s*,%s*[%a_]") then
      dynamic[#dynamic + 1] = line
    end
    if l:match("%f[%w_.:]print%s*%(") or l:match("io%.write%s*%(") or l:match("io%.stdout%s*:") or l:match("io%.output") then
      stdout[#stdout + 1] = line
    end
  end
  return { named = named, dynamic = dynamic, stdout = stdout }
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- Every module file under dir, as module name -> path.
local function module_files(root)
  local fs = require "vkit.fs"
  local files = {}
  local function walk(dir, prefix)
    for _, entry in ipairs(assert(fs.list(dir))) do
      local path = dir .. "/" .. entry
      local st = assert(fs.lstat(path))
      if st.kind == "dir" then
        walk(path, prefix .. "." .. entry)
      elseif entry:match("%.lua$") then
        local name = entry:sub(1, -5)
        files[name == "init" and prefix or prefix .. "." .. name] = path
      end
    end
  end
  walk(root .. "/lua/vkit", "vkit")
  return files
end

--- Reads the checkout: {modules = {name = {path, edges = {name = true},
--  dynamic = {lines}, stdout = {lines}}}}.  Edges go only to modules that
--  have a file (the C modules vkit.json, vkit.fs, ... are the floor).
function M.read(root)
  local files = module_files(root)
  local modules = {}
  for name, path in pairs(files) do
    local scanned = M.scan(read(path))
    local edges = {}
    for target in pairs(scanned.named) do
      if files[target] and target ~= name then edges[target] = true end
    end
    for _, extra in ipairs(M.DYNAMIC[name] or {}) do
      for target in pairs(M.scan(read(root .. "/" .. extra)).named) do
        if files[target] and target ~= name then edges[target] = true end
      end
    end
    modules[name] = { path = path, edges = edges, dynamic = scanned.dynamic, stdout = scanned.stdout }
  end
  return { modules = modules }
end

--- The package graph: package -> {package = true}.
function M.packages(graph)
  local out = {}
  for name, m in pairs(graph.modules) do
    local from = M.package(name)
    out[from] = out[from] or {}
    for target in pairs(m.edges) do
      local to = M.package(target)
      if to ~= from then out[from][to] = true end
    end
  end
  return out
end

local sorted_keys = require("vkit.tables").sorted_keys

--- The cycles of a graph (node -> {node = true}): one per strongly
--  connected component of more than one node, as a closed path
--  {a, b, ..., a, members = {every node of the component}}, nodes visited
--  in sorted order so the answer is the same on every run.
function M.cycles(edges)
  local components = {}
  for _, members in ipairs(require("vkit.graph").components(sorted_keys(edges),
      function(v) return sorted_keys(edges[v] or {}) end)) do
    local component = {}
    for _, v in ipairs(members) do component[v] = true end
    components[#components + 1] = component
  end
  -- One closed path inside each component: breadth-first from its least
  -- node back to itself.
  local cycles = {}
  for _, component in ipairs(components) do
    local start = sorted_keys(component)[1]
    local parent, queue, found = { [start] = false }, { start }, nil
    local head = 1
    while head <= #queue and not found do
      local v = queue[head]
      head = head + 1
      for _, w in ipairs(sorted_keys(edges[v] or {})) do
        if w == start then found = v break end
        if component[w] and parent[w] == nil then
          parent[w] = v
          queue[#queue + 1] = w
        end
      end
    end
    local path = { start }
    local v = found
    while v and v ~= start do
      table.insert(path, 2, v)
      v = parent[v]
    end
    path[#path + 1] = start
    path.members = sorted_keys(component)
    cycles[#cycles + 1] = path
  end
  return cycles
end

--- Every layering problem of a graph, as sentences, sorted.
function M.problems(graph)
  local out = {}
  local module_edges = {}
  for name, m in pairs(graph.modules) do module_edges[name] = m.edges end
  for _, cycle in ipairs(M.cycles(module_edges)) do
    out[#out + 1] = ("module cycle: %s (all of %s reach each other)"):format(table.concat(cycle, " -> "),
      table.concat(cycle.members, ", "))
  end
  for _, cycle in ipairs(M.cycles(M.packages(graph))) do
    out[#out + 1] = ("package cycle: %s (all of %s reach each other)"):format(table.concat(cycle, " -> "),
      table.concat(cycle.members, ", "))
  end
  for _, name in ipairs(sorted_keys(graph.modules)) do
    local m = graph.modules[name]
    if not M.is_presentation(name) then
      for _, target in ipairs(sorted_keys(m.edges)) do
        if M.is_presentation(target) and not (M.is_front(name) and M.PUBLISHED[target]) then
          out[#out + 1] = ("%s module %s requires the command line (%s)"):format(
            M.is_front(name) and "front" or "library", name, target)
        end
      end
      for _, line in ipairs(m.stdout) do
        out[#out + 1] = ("%s module %s writes to standard output (%s:%d)"):format(
          M.is_front(name) and "front" or "library", name, m.path, line)
      end
    end
    if #m.dynamic > 0 and not M.DYNAMIC[name] then
      out[#out + 1] = ("%s requires a computed module name (%s:%d): declare where its names are written in "
        .. "scripts/require-graph.lua's DYNAMIC"):format(name, m.path, m.dynamic[1])
    end
  end
  table.sort(out)
  return out
end

function M.dot(edges, title)
  local lines = { ("digraph %q {"):format(title), "  rankdir=BT;" }
  for _, from in ipairs(sorted_keys(edges)) do
    lines[#lines + 1] = ("  %q;"):format(from)
    for _, to in ipairs(sorted_keys(edges[from])) do lines[#lines + 1] = ("  %q -> %q;"):format(from, to) end
  end
  lines[#lines + 1] = "}"
  return table.concat(lines, "\n") .. "\n"
end

function M.text(edges)
  local lines = {}
  for _, from in ipairs(sorted_keys(edges)) do
    lines[#lines + 1] = ("%s -> %s"):format(from, table.concat(sorted_keys(edges[from]), " "))
  end
  return table.concat(lines, "\n") .. "\n"
end

local function main(argv)
  local dot, root = false, nil
  for _, a in ipairs(argv) do
    if a == "--dot" then dot = true
    elseif a == "--help" or a == "-h" then
      io.stdout:write("usage: vkit script scripts/require-graph.lua [--dot] [ROOT]\n")
      return 0
    else root = a end
  end
  if not root then
    local here = debug.getinfo(1, "S").source:match("^@(.*)/scripts/[^/]*$")
    root = here or "."
  end
  local graph = M.read(root)
  local problems = M.problems(graph)
  for _, p in ipairs(problems) do io.stderr:write(p, "\n") end
  local edges = M.packages(graph)
  io.stdout:write(dot and M.dot(edges, "vkit packages") or M.text(edges))
  return #problems == 0 and 0 or 1
end

-- Run as a script (vkit script passes its arguments as ...), or loaded by
-- dofile() for the spec (no arguments, and the caller asks for the table).
if select("#", ...) > 0 or not rawget(_G, "VKIT_REQUIRE_GRAPH_LIBRARY") then
  os.exit(main({ ... }))
end
return M
