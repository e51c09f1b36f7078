--- Filesystem primitives that never follow a link by accident.
--
-- Failures return `nil, message, code` where code is an errno name
-- (`ENOENT`, `EACCES`, `ENOTDIR`, `EEXIST`, ...) or one of `too-large`,
-- `not-a-regular-file`, `root-is-link`, `too-deep`, `locked`; misuse (a
-- wrong argument type) raises.
-- @module vkit.fs
local fs = require "vkit.fs"
local policy = require("vkit.policy").api

local M = {}

--- The `lstat` of a path, never following a final link.
-- @function lstat
-- @string path
-- @treturn table `{kind, type, mode, size, nlink, mtime, target}`: kind is
-- `"file"`, `"dir"`, `"link"` or `"other"` (type then says `"fifo"`,
-- `"socket"`, `"char"` or `"block"`), mode the permission bits, target a
-- link's target
-- @return nil, message, code
M.lstat = fs.lstat

--- Every entry under a directory, sorted by path, reporting links and special
-- files rather than following them.
-- @function walk
-- @string root a directory (a link root is refused)
-- @treturn {table,...} `{path, kind, type, mode, size, target}` per entry,
-- paths relative to root
-- @return nil, message, code: `root-is-link`, `too-deep` (nesting beyond 256), an errno name
M.walk = fs.walk

--- Reads a whole regular file, refusing one larger than the cap before reading it.
-- @string path
-- @int[opt] max_bytes the cap; default `policies/api.lua` `fs_read_max_bytes` (16 MiB)
-- @tparam[opt] table opts `{nofollow = true}`: refuse a final symbolic link
-- @treturn string the bytes
-- @return nil, message, code: `too-large`, `not-a-regular-file` (also a link, with nofollow), `ENOENT`, ...
function M.read(path, max_bytes, opts)
  return fs.read(path, max_bytes == nil and policy.fs_read_max_bytes or max_bytes, opts)
end

--- Writes a file atomically: a temporary file beside the target, fsync, rename
-- over the target (a link there is replaced, never followed), fsync of the
-- directory.  A reader sees the old bytes or the new, never a mixture.
-- @function write_atomic
-- @string path
-- @string bytes
-- @int[opt=0644] mode
-- @treturn boolean true
-- @return nil, message, code
M.write_atomic = fs.write_atomic

--- Copies a regular file (never a link) to a new path (`O_EXCL`), with fsync.
-- @function copy_file
-- @string src
-- @string dst must not exist (`EEXIST`)
-- @int[opt] mode default: the source's permission bits
-- @treturn boolean true
-- @return nil, message, code
M.copy_file = fs.copy_file

--- Makes a directory and its missing parents.
-- @function mkdirs
-- @string path
-- @int[opt=0755] mode
-- @treturn boolean true
-- @return nil, message, code (`ENOTDIR` when path exists and is not a directory)
M.mkdirs = fs.mkdirs

--- Makes a fresh directory named prefix followed by six random characters.
-- @function mkdtemp
-- @string[opt="/tmp/vkit-"] prefix
-- @treturn string the new directory's path
-- @return nil, message, code
M.mkdtemp = fs.mkdtemp

--- The names in a directory, sorted by their bytes (without `.` and `..`).
-- @function list
-- @string dir
-- @treturn {string,...}
-- @return nil, message, code
M.list = fs.list

--- Removes a directory tree, descending only through `O_NOFOLLOW` directory
-- descriptors, so it cannot leave the root.  Refuses `/` and `""` (raises).
-- @function remove_tree
-- @string root a directory
-- @treturn boolean true
-- @return nil, message, code: `root-is-link`, `ENOTDIR`, ...
M.remove_tree = fs.remove_tree

--- The canonical absolute path (every link resolved).
-- @function realpath
-- @string path
-- @treturn string
-- @return nil, message, code
M.realpath = fs.realpath

--- The current working directory.
-- @function cwd
-- @treturn string
-- @return nil, message, code
M.cwd = fs.cwd

--- Sets a path's permission bits.
-- @function chmod
-- @string path
-- @int mode
-- @treturn boolean true
-- @return nil, message, code
M.chmod = fs.chmod

--- Makes a symbolic link at path pointing at target.
-- @function symlink
-- @string target
-- @string path
-- @treturn boolean true
-- @return nil, message, code
M.symlink = fs.symlink

--- Makes a FIFO.
-- @function mkfifo
-- @string path
-- @int[opt=0644] mode
-- @treturn boolean true
-- @return nil, message, code
M.mkfifo = fs.mkfifo

--- Takes an exclusive `flock` on a file (created if absent, never through a link).
-- @function lock
-- @string path
-- @tparam[opt] table opts `{wait = true}`: block until the lock is free
-- @treturn Lock
-- @return nil, message, code: `locked` (held by another process, without wait), an errno name
M.lock = fs.lock

--- An exclusive lock (`vkit.fs.lock`); released by `unlock`, `__gc` or `__close`.
-- @type Lock

--- Releases the lock (closing its descriptor); again is harmless.
-- @function Lock:unlock
-- @treturn nil

--- Whether the lock is still held by this handle.
-- @function Lock:held
-- @treturn boolean

return M
