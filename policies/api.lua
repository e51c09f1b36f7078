-- Defaults of the public Lua API (lua/vkit/api/), for calls that leave a
-- limit out.  Internal modules always pass their own limits.
return {
  -- vkit.fs.read(path) and vkit.fs.read(path, nil, opts): at most this many
  -- bytes; a larger file is refused as `too-large` before it is read.
  fs_read_max_bytes = 16 * 1024 * 1024,
  -- vkit.store's Store:reports: the largest retained report it reads.
  max_report_bytes = 64 * 1024 * 1024,
  -- vkit.json's readers without max_depth: deeper nesting is refused; and
  -- the deepest max_depth a caller may ask for (the parser recurses once a
  -- level).  The C core holds the same numbers (csrc/json.h), and
  -- tests/c_limits_spec.lua holds them equal.
  json_max_depth = 256,
  json_max_depth_cap = 4096,
  -- vkit.fs's walks (walk, remove_tree, copy): directory nesting deeper is
  -- refused (csrc/fs.c, held equal the same way).
  walk_max_depth = 256,
}
