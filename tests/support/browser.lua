--- Headless Chromium (Debian's) for the specs: load a local page, return
--  its DOM as Chromium serialises it after loading, and a screenshot.
--  Started as the machine's probe found it works here: no sandbox (root),
--  no GPU, no background networking (the network is closed), a fresh
--  profile each time.
local vkit = require "vkit"

local M = {}

-- The binary itself: /usr/bin/chromium is a shell launcher, which vkit.proc
-- refuses to run unpinned (exe-is-script).
M.CHROMIUM = "/usr/lib/chromium/chromium"
local FLAGS = { "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-extensions", "--mute-audio" }

local function run(dir, extra, page)
  local argv = { M.CHROMIUM }
  for _, f in ipairs(FLAGS) do argv[#argv + 1] = f end
  argv[#argv + 1] = "--user-data-dir=" .. assert(vkit.fs.mkdtemp(dir .. "/profile-"))
  for _, f in ipairs(extra) do argv[#argv + 1] = f end
  argv[#argv + 1] = "file://" .. page
  return vkit.proc.run { exe = M.CHROMIUM, argv = argv, env = { HOME = dir, PATH = "/usr/bin:/bin" },
                         deadline_ms = 120000, output_cap = 16 * 1024 * 1024, cwd = dir }
end

--- The page's DOM after load, as Chromium serialises it (--dump-dom).
function M.dom(dir, page)
  local r = run(dir, { "--dump-dom" }, page)
  assert(r.status == "exited" and r.code == 0, "chromium --dump-dom: " .. tostring(r.status) .. " " .. tostring(r.stderr))
  return r.stdout
end

--- A PNG screenshot of the page at width x height; returns its path.
function M.screenshot(dir, page, width, height)
  local png = dir .. "/screenshot.png"
  local r = run(dir, { "--screenshot=" .. png, ("--window-size=%d,%d"):format(width, height),
                       "--hide-scrollbars" }, page)
  assert(r.status == "exited" and r.code == 0, "chromium --screenshot: " .. tostring(r.stderr))
  return png
end

function M.available()
  return vkit.fs.lstat(M.CHROMIUM) ~= nil
end

return M
