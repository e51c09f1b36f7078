-- Defaults of the public Lua API (lua/vkit/api/), for calls that leave a
-- limit out.  Internal modules always pass their own limits.
return {
  -- vkit.fs.read(path) and vkit.fs.read(path, nil, opts): at most this many
  -- bytes; a larger file is refused as `too-large` before it is read.
  fs_read_max_bytes = 16 * 1024 * 1024,
  -- vkit.store's Store:reports: the largest retained report it reads.
  max_report_bytes = 64 * 1024 * 1024,
}
