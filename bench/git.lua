--- Git capture: repo:capture against `git archive COMMIT | tar -x -C DIR`
--  on the same commit, in one run, best of 3 each (runs alternate, and each
--  contender's first run is discarded as a page-cache warm-up).
--  The repository has 20,000 files (about 200 MB of text-like bytes, each
--  file distinct) in 200 directories, built with vkit's writer API; it is
--  measured twice: with loose objects (as written) and after `git repack -a
--  -d` (a single pack, as a clone has).  capture also hashes every file
--  (SHA-256) and verifies every object's id, which git archive does not.
--  Target (issue 4): capture no slower than git, ratio <= 1.0.
local vkit = require "vkit"
local b = require "bench.support"

local files = tonumber(os.getenv "VKIT_BENCH_GIT_FILES") or 20000
local mean_size = tonumber(os.getenv "VKIT_BENCH_GIT_MEAN_BYTES") or 10240
local dir = assert(vkit.fs.mkdtemp "/tmp/vkit-bench-git-")
local repo = assert(vkit.git.init(dir .. "/repo"))

-- A pool of word-like text; each file is a unique header plus a slice of it.
local seed = 12345
local function rand(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % n
end
local words = {}
for i = 1, 4096 do
  local w = {}
  for k = 1, 2 + rand(9) do w[k] = string.char(97 + rand(26)) end
  words[i] = table.concat(w)
end
local pool_parts = {}
for i = 1, 400000 do pool_parts[i] = words[1 + rand(#words)] .. ((i % 12 == 0) and "\n" or " ") end
local pool = table.concat(pool_parts)

local entries, total = {}, 0
for i = 1, files do
  local size = mean_size // 2 + rand(mean_size)
  local start = 1 + rand(#pool - size)
  local bytes = ("-- file %d\n"):format(i) .. pool:sub(start, start + size - 1)
  total = total + #bytes
  entries[i] = {
    path = ("d%03d/sub%d/f%05d.txt"):format(i % 200, i % 3, i),
    blob = assert(repo:write_blob(bytes)),
    mode = (i % 10 == 0) and "100755" or "100644",
  }
end
local commit = assert(repo:commit_tree { tree = assert(repo:write_tree(entries)), message = "bench\n",
  ref = "refs/heads/main" })
local gitdir = repo:path()

local n = 0
local function fresh()
  n = n + 1
  return ("%s/out%d"):format(dir, n)
end

local function run_capture()
  local dest = fresh()
  local id = assert(repo:capture(commit, dest))
  assert(#id.inventory == files)
  return dest
end

local function run_git()
  local dest = fresh()
  assert(vkit.fs.mkdirs(dest))
  b.sh(("git --git-dir=%s archive %s | tar -x -C %s"):format(b.quote(gitdir), commit, b.quote(dest)))
  return dest
end

-- Each timed run writes a fresh directory; removal is not timed.
local function timed(fn)
  local t0 = vkit.sys.monotonic_ms()
  local dest = fn()
  local t = (vkit.sys.monotonic_ms() - t0) / 1000
  assert(vkit.fs.remove_tree(dest))
  return t
end

local function measure(label)
  timed(run_capture)
  timed(run_git)
  local best_c, best_g = math.huge, math.huge
  for _ = 1, 3 do
    best_c = math.min(best_c, timed(run_capture))
    best_g = math.min(best_g, timed(run_git))
  end
  print(("%s: capture %.3fs, git archive | tar %.3fs, ratio capture/git %.2f (target <= 1.00)"):format(
    label, best_c, best_g, best_c / best_g))
  return best_c / best_g
end

print(("repository: %d files, %.1f MB, %d threads available"):format(files, total / 1e6,
  tonumber(io.popen("nproc"):read "l")))
-- The two trees must agree byte for byte before any figure means anything.
local a, g = run_capture(), run_git()
b.sh(("diff -r %s %s"):format(b.quote(a), b.quote(g)))
vkit.fs.remove_tree(a)
vkit.fs.remove_tree(g)

measure "loose objects"
b.sh(("git --git-dir=%s repack -a -d -q"):format(b.quote(gitdir)))
measure "packed (git repack -a -d)"
repo:close()
vkit.fs.remove_tree(dir)
