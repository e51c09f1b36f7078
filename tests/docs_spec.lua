-- The documents as a clone holds them (issue 18 item 6): every relative
-- link of README.md and docs/**/*.md resolves to a file or directory inside
-- the repository (and an #anchor to a heading of its target), nothing
-- points outside it, and the user's requirement documents are the copies
-- docs/requirements/README.md pins by SHA-256.
local vkit = require "vkit"
local t = require "tests.support.run"

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

-- README for a newcomer (issue 33 item 6): who it is for and what it does
-- first, then a certification, what exit 0 means, the scope with today's
-- limits, VAC spelled out, a real report's picture; the build's internals
-- in docs/building.md; the test command kept (.ci/run runs `make test`).
describe("the README", function()
  local readme = assert(vkit.fs.read(ROOT .. "/README.md"))
  local body = readme:gsub("^#[^\n]*\n+", "") -- without the title
  local first_paragraph = body:match "^(.-)\n\n"
  local before_setup = readme:sub(1, assert(readme:find("\n## Set-up", 1, true)))

  it("opens with one sentence of what vkit is and who it is for", function()
    assert.matches("^vkit is a verification kit for teams ", first_paragraph)
    local _, full_stops = first_paragraph:gsub("%.%s", "")
    assert.equal(0, full_stops, "one sentence: " .. first_paragraph)
    assert.matches("stranger", first_paragraph, 1, true)
    assert.matches("change", first_paragraph, 1, true)
    assert.matches("agent", first_paragraph, 1, true)
  end)

  it("certifies a change in the first example, five lines, before anything about building", function()
    local first_block = assert(readme:match "\n```sh\n(.-)\n```", "a first sh block")
    assert.matches("vkit change certify ", first_block, 1, true)
    local _, newlines = first_block:gsub("\n", "")
    assert.equal(5, newlines + 1, "five lines:\n" .. first_block)
    assert.is_truthy(readme:find(first_block, 1, true) < readme:find("\n## Set-up", 1, true))
    for _, internal in ipairs { "liblua5.4.a", "libcrypto is about", "mk/luabc.mk", "OPENSSL_CONF" } do
      assert.is_nil(readme:find(internal, 1, true), internal .. " belongs in docs/building.md")
      assert.matches(internal, assert(vkit.fs.read(ROOT .. "/docs/building.md")), 1, true)
    end
    assert.matches("](docs/building.md)", before_setup, 1, true)
  end)

  it("marks as not yet done every option of the example that vkit change certify does not take", function()
    local first_block = readme:match "\n```sh\n(.-)\n```"
    local help = t.vkit({ "change", "certify", "--help" }).stdout
    local missing = {}
    for option in first_block:match("vkit change certify[^\n]*"):gmatch "%-%-[%w-]+" do
      if not help:find(option, 1, true) then missing[#missing + 1] = option end
    end
    if #missing > 0 then
      assert.matches("**Not yet done:**", before_setup, 1, true)
      for _, option in ipairs(missing) do assert.matches("`" .. option, before_setup, 1, true) end
    end
  end)

  it("says what exit 0 means and the scope: both profiles, three languages, each domain limit", function()
    assert.matches("\n### What exit 0 means\n", before_setup, 1, true)
    local scope = assert(before_setup:match "\n### Scope[^\n]*\n(.-)\n#", "a Scope section before Set-up")
    scope = scope:gsub("%*", ""):gsub("%s+", " ")
    assert.matches("one `u32` in, one `u32` out", scope, 1, true)
    assert.matches("Rust, Python or TypeScript", scope, 1, true)
    local limit = tostring(vkit.policies.limits.relational.max_domain):reverse():gsub("(%d%d%d)", "%1,")
      :reverse():gsub("^,", "")
    assert.matches("at most " .. limit .. " accepted inputs", scope, 1, true)
    local signatures = vkit.policies.signatures
    assert.matches(("1 to %d parameters"):format(signatures.max_params), scope, 1, true)
    local exponent = math.floor(math.log(signatures.exhaustive_inputs, 2) + 0.5)
    assert.equal(1 << exponent, signatures.exhaustive_inputs)
    assert.matches(("at most 2^%d accepted inputs"):format(exponent), scope, 1, true)
  end)

  it("spells VAC out as docs/vac.md does", function()
    local expansion = assert(assert(vkit.fs.read(ROOT .. "/docs/vac.md")):match "^# VAC: ([%a ]-) in vkit\n")
    assert.equal("Verifiable Agent Claims", expansion)
    local spelled = before_setup:gsub("%s+", " ")
    assert.matches("VAC — " .. expansion, spelled, 1, true)
    assert.is_true(spelled:find("VAC", 1, true) == spelled:find("VAC — " .. expansion, 1, true),
      "VAC is spelled out where it first appears")
  end)

  it("shows a screenshot of a real HTML report, and keeps the test command", function()
    assert.matches("![", before_setup, 1, true)
    assert.matches("](docs/images/report.png)", before_setup, 1, true)
    local png = assert(vkit.fs.read(ROOT .. "/docs/images/report.png"))
    assert.equal("\137PNG\r\n\26\n", png:sub(1, 8))
    assert.is_true(#png > 10000, "a picture, not a placeholder")
    assert.matches("\nmake test ", readme, 1, true)
    assert.matches("vkit script tests/run.lua", readme, 1, true)
    assert.matches("make test", assert(vkit.fs.read(ROOT .. "/.ci/run")), 1, true)
  end)
end)
