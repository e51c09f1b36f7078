--- scripts/c-call-graph.lua: which C file of csrc calls which, read from
-- the compiled objects, and every circle among them.
--
--   vkit script scripts/c-call-graph.lua [--dot] [--build DIR] [--csrc DIR]
--
-- The files are layered (issue 32): a file calls only files below it, and a
-- lower one that must report upward does so through a callback it is
-- handed.  This script is the check.  For each object of a C file of csrc
-- (DIR/obj/*.o, the core; DIR/pic/*.o, the shared modules vkit.git, vkit.pg,
-- vkit.term), `nm -P` lists the global symbols it defines and those it
-- leaves undefined; file A calls file B when A leaves undefined a symbol
-- that B defines.  Symbols no file of csrc defines (libc, Lua, OpenSSL,
-- libgit2) are not calls between files.  Objects are read, not sources:
-- what the compiler kept is what links, whatever the macros said.
--
-- It prints every edge with the symbols behind it (with --dot, a Graphviz
-- graph instead), then every circle as "a.c -> b.c -> a.c", and exits 1
-- when there is one.  Loaded with dofile (tests/c_call_graph_spec.lua), it
-- returns its functions and runs nothing.
local M = {}

-- nm -P: "name type [value size]" per symbol; upper case types are global.
-- Returns the sorted names defined and left undefined.
function M.parse_nm(text)
  local defined, undefined = {}, {}
  for name, kind in text:gmatch "([^%s]+) (%a)[^\n]*" do
    if kind == "U" then
      undefined[#undefined + 1] = name
    elseif kind:match "%u" then
      defined[#defined + 1] = name
    end
  end
  table.sort(defined)
  table.sort(undefined)
  return defined, undefined
end

-- objects: { {file = "a.c", defined = {...}, undefined = {...}}, ... }.
-- Returns the graph { files = sorted names, calls = {[a] = {[b] = sorted
-- symbols}} }; a file's calls to itself are not edges.
function M.graph(objects)
  local owners, files, calls = {}, {}, {}
  for _, o in ipairs(objects) do
    files[#files + 1] = o.file
    calls[o.file] = calls[o.file] or {}
    for _, name in ipairs(o.defined) do
      owners[name] = owners[name] or {}
      owners[name][#owners[name] + 1] = o.file
    end
  end
  for _, o in ipairs(objects) do
    for _, name in ipairs(o.undefined) do
      for _, owner in ipairs(owners[name] or {}) do
        if owner ~= o.file then
          local symbols = calls[o.file][owner] or {}
          calls[o.file][owner] = symbols
          symbols[#symbols + 1] = name
        end
      end
    end
  end
  table.sort(files)
  for _, callees in pairs(calls) do
    for _, symbols in pairs(callees) do table.sort(symbols) end
  end
  return { files = files, calls = calls }
end

local function callees_of(g, file)
  local list = {}
  for callee in pairs(g.calls[file] or {}) do list[#list + 1] = callee end
  table.sort(list)
  return list
end

-- The strongly connected components of more than one file, each a sorted
-- list, in the order of their first file.
function M.components(g)
  return require("vkit.graph").components(g.files, function(v) return callees_of(g, v) end)
end

-- Every elementary circle, each a list of files whose first is repeated at
-- its end, starting at its smallest file; at most `limit` (default 200),
-- as a tangle of n files can hold far more than anyone reads.
function M.circles(g, limit)
  limit = limit or 200
  local found = {}
  for _, component in ipairs(M.components(g)) do
    local inside = {}
    for _, f in ipairs(component) do inside[f] = true end
    for _, start in ipairs(component) do
      -- circles through start and files after it only: each found once
      local path, on_path = { start }, { [start] = true }
      local function extend(v)
        for _, w in ipairs(callees_of(g, v)) do
          if #found >= limit then return end
          if w == start then
            local circle = table.move(path, 1, #path, 1, {})
            circle[#circle + 1] = start
            found[#found + 1] = circle
          elseif inside[w] and w > start and not on_path[w] then
            path[#path + 1], on_path[w] = w, true
            extend(w)
            path[#path], on_path[w] = nil, nil
          end
        end
      end
      extend(start)
    end
  end
  return found
end

function M.circle_text(circle) return table.concat(circle, " -> ") end

-- The edges, one a line with their symbols, then the circles.
function M.text(g, circles)
  local lines = {}
  for _, a in ipairs(g.files) do
    local callees = callees_of(g, a)
    if #callees == 0 then lines[#lines + 1] = a .. " (calls no file of csrc)" end
    for _, b in ipairs(callees) do
      lines[#lines + 1] = ("%s -> %s: %s"):format(a, b, table.concat(g.calls[a][b], " "))
    end
  end
  if #circles == 0 then
    lines[#lines + 1] = "no circle"
  else
    lines[#lines + 1] = ("%d circle%s:"):format(#circles, #circles == 1 and "" or "s")
    for _, c in ipairs(circles) do lines[#lines + 1] = "  " .. M.circle_text(c) end
  end
  return table.concat(lines, "\n") .. "\n"
end

-- Graphviz DOT: an edge on a circle is red.
function M.dot(g, circles)
  local on_circle = {}
  for _, c in ipairs(circles) do
    for i = 1, #c - 1 do on_circle[c[i] .. "\0" .. c[i + 1]] = true end
  end
  local lines = { "digraph csrc {", "  rankdir=TB;", "  node [shape=box, fontname=monospace];" }
  for _, a in ipairs(g.files) do
    lines[#lines + 1] = ("  %q;"):format(a)
    for _, b in ipairs(callees_of(g, a)) do
      lines[#lines + 1] = ("  %q -> %q%s;"):format(a, b, on_circle[a .. "\0" .. b] and " [color=red]" or "")
    end
  end
  lines[#lines + 1] = "}"
  return table.concat(lines, "\n") .. "\n"
end

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function read_command(command)
  local p = assert(io.popen(command))
  local out = p:read "a"
  local ok, how, code = p:close()
  if not ok then return nil, ("%s: %s %s"):format(command, how, code) end
  return out
end

-- The objects of csrc's files under build (obj/ and pic/): an object whose
-- source is not csrc/<name>.c (generated, vendored, stale) is no file of
-- csrc.  Returns the objects for M.graph, or nil and a message.
function M.read_objects(build, csrc)
  local fs = require("vkit").fs
  local by_file, objects = {}, {}
  for _, dir in ipairs { "obj", "pic" } do
    local names = fs.list(build .. "/" .. dir) or {}
    for _, name in ipairs(names) do
      local stem = name:match "^(.+)%.o$"
      local file = stem and stem .. ".c"
      if file and fs.lstat(csrc .. "/" .. file) then
        local out, err = read_command("nm -P " .. quote(build .. "/" .. dir .. "/" .. name))
        if not out then return nil, err end
        local defined, undefined = M.parse_nm(out)
        local o = by_file[file]
        if not o then
          o = { file = file, defined = {}, undefined = {} }
          by_file[file], objects[#objects + 1] = o, o
        end
        table.move(defined, 1, #defined, #o.defined + 1, o.defined)
        table.move(undefined, 1, #undefined, #o.undefined + 1, o.undefined)
      end
    end
  end
  if #objects == 0 then return nil, ("no object of a file of %s under %s/obj or %s/pic: run make"):format(csrc, build, build) end
  return objects
end

-- The command: 0 without a circle, 1 with one, 2 on a usage or read error.
function M.main(argv)
  local opts = { build = "build", csrc = "csrc" }
  local i = 1
  while argv[i] do
    local a = argv[i]
    if a == "--dot" then
      opts.dot = true
    elseif (a == "--build" or a == "--csrc") and argv[i + 1] then
      opts[a:sub(3)] = argv[i + 1]
      i = i + 1
    else
      io.stderr:write("usage: vkit script scripts/c-call-graph.lua [--dot] [--build DIR] [--csrc DIR]\n")
      return 2
    end
    i = i + 1
  end
  local objects, err = M.read_objects(opts.build, opts.csrc)
  if not objects then
    io.stderr:write("c-call-graph: ", err, "\n")
    return 2
  end
  local g = M.graph(objects)
  local circles = M.circles(g)
  io.stdout:write(opts.dot and M.dot(g, circles) or M.text(g, circles))
  if opts.dot and #circles > 0 then
    for _, c in ipairs(circles) do io.stderr:write("circle: ", M.circle_text(c), "\n") end
  end
  return #circles == 0 and 0 or 1
end

if arg and arg[0] and arg[0]:match "c%-call%-graph%.lua$" then os.exit(M.main { ... }) end
return M
