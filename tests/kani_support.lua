--- Test helper (not a spec): builds a real Kani-shaped installation tree
-- (KANI_HOME/kani-0.68.0 with its toolchain link, a rustup toolchain, the
-- ~/.cargo/bin proxies, a host library) under a temporary directory, so the
-- toolchain pin and the runner are exercised on real files, modes and links.
local vkit = require "vkit"
local t = require "tests.support.run"

local M = {}

M.toolchain = "nightly-2025-11-21"

local function file(path, bytes, mode)
  assert(vkit.fs.mkdirs(path:match "^(.*)/[^/]*$"))
  t.write(path, bytes)
  assert(vkit.fs.chmod(path, mode or 420))
end

-- An ELF `kani` launcher that runs a shell script: vkit.proc runs pinned
-- executables only, never scripts, so the hostile stand-ins are compiled.
local function compile_launcher(dir, script)
  local c = dir .. "/launcher.c"
  local quoted = script:gsub("\\", "\\\\"):gsub('"', '\\"'):gsub("\n", "\\n")
  t.write(c, ('#include <unistd.h>\nint main(void) { execl("/bin/sh", "sh", "-c", "%s", (char *)0); return 127; }\n'):format(quoted))
  assert(os.execute(("cc -o %s %s"):format(t.quote(dir .. "/launcher"), t.quote(c))), "cannot compile the launcher")
  return t.slurp(dir .. "/launcher")
end

--- Builds the tree under dir and returns the capture description.
-- opts.launcher_script: a shell script the `kani` launcher runs (the specs
-- that exercise process control); a plain file otherwise.
function M.install(dir, opts)
  opts = opts or {}
  local home = dir .. "/home"
  local rust = home .. "/.rustup/toolchains/" .. M.toolchain .. "-x86_64-unknown-linux-gnu"
  local kani = home .. "/.kani/kani-0.68.0"
  local bin = home .. "/.cargo/bin"
  local rustup = "\127ELF rustup proxy binary\n" .. ("r"):rep(4096)
  file(rust .. "/bin/rustc", "\127ELF rustc\n", 493)
  file(rust .. "/bin/cargo", "\127ELF cargo\n", 493)
  file(rust .. "/lib/librustc_driver-nightly.so", ("\0"):rep(3 * 1024 * 1024) .. "driver", 420)
  file(rust .. "/lib/rustlib/components", "rustc\ncargo\nrust-std-x86_64-unknown-linux-gnu\nrustc-dev\n", 420)
  file(kani .. "/bin/kani-driver", "\127ELF kani-driver\n", 493)
  file(kani .. "/bin/kani-compiler", "\127ELF kani-compiler\n", 493)
  file(kani .. "/bin/cbmc", "\127ELF cbmc\n", 493)
  file(kani .. "/lib/libkani.rlib", "rlib", 420)
  file(kani .. "/rust-toolchain-version", M.toolchain .. "\n", 420)
  assert(vkit.fs.symlink(rust, kani .. "/toolchain"))
  for _, proxy in ipairs { "rustup", "cargo", "rustc", "rustdoc" } do file(bin .. "/" .. proxy, rustup, 493) end
  local launcher = opts.launcher_script and compile_launcher(dir, opts.launcher_script) or "\127ELF kani launcher\n"
  file(bin .. "/kani", launcher, 493)
  file(bin .. "/cargo-kani", "\127ELF cargo-kani launcher\n", 493)
  file(home .. "/.rustup/settings.toml", "version = \"12\"\n", 420)
  file(dir .. "/host/libz.so.1", "\127ELF libz\n", 420)
  return {
    platform = "x86_64-unknown-linux-gnu",
    kani_version = "0.68.0",
    rust_toolchain = M.toolchain,
    home = home,
    launcher = bin .. "/kani",
    kani_root = kani,
    rust_root = rust,
    cargo_bin = bin,
    rustup_home = home .. "/.rustup",
    rustup_binary = bin .. "/rustup",
    host_libraries = { dir .. "/host/libz.so.1" },
  }
end

return M
