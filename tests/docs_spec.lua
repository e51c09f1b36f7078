-- The documents as a clone holds them (issue 18 item 6): every relative
-- link of README.md and docs/**/*.md resolves to a file or directory inside
-- the repository (and an #anchor to a heading of its target), nothing
-- points outside it, and the user's requirement documents are the copies
-- docs/requirements/README.md pins by SHA-256.
local vkit = require "vkit"

local ROOT = vkit.root

local function markdown_files()
  local out = { "README.md" }
  for _, e in ipairs(assert(vkit.fs.walk(ROOT .. "/docs"))) do
    if e.kind == "file" and e.path:match "%.md$" then out[#out + 1] = "docs/" .. e.path end
  end
  return out
end

-- GitHub's heading anchors: lower case, punctuation dropped but - and _, spaces to -.
local function anchors(text)
  local out = {}
  for heading in ("\n" .. text):gmatch "\n#+ ([^\n]+)" do
    local slug = heading:lower():gsub("`", ""):gsub("[^%w%s_-]", ""):gsub("%s", "-")
    out[slug] = true
  end
  return out
end

-- The text without fenced code blocks and code spans (their brackets are not links).
local function prose(text)
  return (text:gsub("\n```.-\n```", "\n"):gsub("`[^`\n]*`", ""))
end

local function normalise(path)
  local parts = {}
  for part in path:gmatch "[^/]+" do
    if part == ".." then
      if #parts == 0 then return nil end
      parts[#parts] = nil
    elseif part ~= "." then
      parts[#parts + 1] = part
    end
  end
  return table.concat(parts, "/")
end

describe("the documents", function()
  it("link only to files inside the repository, and to headings that exist", function()
    local checked = 0
    for _, file in ipairs(markdown_files()) do
      local text = assert(vkit.fs.read(ROOT .. "/" .. file))
      local base = file:match "^(.*)/[^/]*$" or ""
      for target in prose(text):gmatch "%]%(([^)%s]+)%)" do
        if not target:match "^%a[%w+.-]*:" then -- not https:, mailto:, ...
          local path, anchor = target:match "^([^#]*)#?(.*)$"
          local rel = path == "" and file or normalise((base ~= "" and (base .. "/") or "") .. path)
          assert.is_string(rel, ("%s links to %s, outside the repository"):format(file, target))
          local st = vkit.fs.lstat(ROOT .. "/" .. rel)
          assert.is_table(st, ("%s links to %s: no %s in the repository"):format(file, target, rel))
          if anchor ~= "" then
            local doc = assert(vkit.fs.read(ROOT .. "/" .. rel))
            assert.is_true(anchors(doc)[anchor] ~= nil, ("%s links to %s: %s has no heading #%s"):format(file, target, rel,
              anchor))
          end
          checked = checked + 1
        end
      end
      assert.is_nil(prose(text):find("../shared/", 1, true), file .. " points outside the repository")
    end
    assert.is_true(checked > 20, "only " .. checked .. " links")
  end)

  it("hold the user's requirement documents unchanged, and say where they live", function()
    local index = assert(vkit.fs.read(ROOT .. "/docs/requirements/README.md"))
    local pinned = 0
    for name, sha in index:gmatch "| %[([%w_.]+)%]%([%w_.]+%) | `(%x+)` |" do
      assert.equal(sha, vkit.hash.file(ROOT .. "/docs/requirements/" .. name), name .. " differs from its pin")
      pinned = pinned + 1
    end
    assert.equal(4, pinned)
    local readme = assert(vkit.fs.read(ROOT .. "/README.md"))
    assert.matches("](docs/requirements/README.md)", readme, 1, true)
  end)
end)
