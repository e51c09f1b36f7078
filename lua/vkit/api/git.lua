--- Exact Git objects, captured safely (libgit2 1.5, SHA-1 repositories).
--
-- An exact commit is 40 lowercase hex digits naming a commit that exists:
-- branch and tag names, `HEAD`, short or uppercase ids and ids of other
-- objects are refused with `not-an-exact-commit`.  Failures return `nil,
-- message, code`; misuse (wrong argument types, malformed writer input)
-- raises.  The writer exists so that scripts, specs and demos build real
-- repositories without a shell.  Details and every code: `docs/git.md`.
-- Loaded on first use (libgit2 is not loaded until then).
-- @module vkit.git
local git = require "vkit.git"

local M = {}

--- Opens a repository.
-- @function open
-- @string path the working tree, its `.git`, or a bare repository
-- @tparam[opt] table opts `{search = true}`: search the parents of path as `git` does
-- @treturn Repository
-- @return nil, message, code: `not-a-repository`, `unsafe-repository`, `unsupported-repository`
M.open = git.open

--- Makes a new repository, `HEAD` naming `refs/heads/main`.
-- @function init
-- @string path
-- @tparam[opt] table opts `{bare = true}`
-- @treturn Repository
-- @return nil, message, code
M.init = git.init

--- Recomputes the inventory digest of a capture identity's records, in any
-- order: SHA-256 over sorted `path NUL mode NUL sha256-hex LF` records.
-- @function inventory_digest
-- @tparam {{path=string,mode=string,sha256=string},...} inventory
-- @treturn string 64 lowercase hex digits
-- @return nil, message, code: `invalid-inventory`
M.inventory_digest = git.inventory_digest

--- Re-reads a captured directory without following links and compares it
-- with its identity; fails on the first difference in path order, naming the path.
-- @function verify_capture
-- @string dest the capture's directory
-- @tparam table identity what `Repository:capture` returned
-- @treturn boolean true
-- @return nil, message, code: `extra-path`, `missing-path`, `kind-mismatch`,
-- `mode-mismatch`, `hard-link`, `content-mismatch`, `dest-is-link`,
-- `inventory-digest-mismatch`, `invalid-identity`
M.verify_capture = git.verify_capture

--- An open repository (`vkit.git.open`, `vkit.git.init`); closed by `close`, `__gc` and `__close`.
-- @type Repository

--- A commit.
-- @function Repository:commit
-- @string oid an exact commit
-- @treturn table `{id, tree, parents = {oid,...}, author = {name, email, time, offset}, committer, message}`
-- @return nil, message, code: `not-an-exact-commit`, `corrupt-object`, `missing-object`

--- Whether a is b or reachable from b through parents.
-- @function Repository:is_ancestor
-- @string a an exact commit
-- @string b an exact commit
-- @treturn boolean
-- @return nil, message, code: `corrupt-object` (never false for a history that cannot be read)

--- One regular file of a commit, bounded before the blob is inflated.
-- @function Repository:read
-- @string commit an exact commit
-- @string path a normalised repository-relative path
-- @int max_bytes
-- @treturn table `{bytes, mode ("100644"|"100755"), blob, size}`
-- @return nil, message, code: `not-a-file`, `symlink`, `submodule`,
-- `missing-path`, `too-large`, `invalid-path`, `not-an-exact-commit`, `corrupt-object`, ...

--- Every file, link and submodule under the root (or a directory), sorted by path.
-- @function Repository:tree
-- @string commit an exact commit
-- @string[opt] prefix a directory
-- @tparam[opt] table limits `{max_entries, max_file_bytes, max_total_bytes}`
-- @treturn {table,...} `{path, mode, blob, size}` per entry
-- @return nil, message, code: `not-a-tree`, `too-many-entries`, `too-large`, a hostile entry's code

--- Materialises a commit's tree (or exact files) into a new directory, with
-- regular files only, nothing written outside it.
-- @function Repository:capture
-- @string commit an exact commit
-- @string dest must not exist (`dest-exists`) nor be a link (`dest-is-link`)
-- @tparam[opt] {string,...} paths exact file paths (a partial capture)
-- @tparam[opt] table limits as for `tree`
-- @treturn table the capture identity `{commit, tree, complete, inventory_digest,
-- inventory = {{path, mode, sha256, size, blob},...}}`
-- @return nil, message, code: the hostile-tree codes of `docs/git.md`, `too-large`, ...

--- The commit `HEAD` names.
-- @function Repository:head
-- @treturn string
-- @return nil, message, code: `unborn-head`

--- The full commit id a Git revision names (`HEAD`, a branch or tag,
-- `main~1`, a unique abbreviation: `git rev-parse`'s syntax), peeled to a
-- commit.  For the command line, which resolves a revision once before
-- anything is bound; every other method takes exact commits only.
-- @function Repository:resolve
-- @string rev
-- @treturn string 40 lowercase hex digits
-- @return nil, message, code: `not-found`, `ambiguous`, `invalid-revision`, `not-a-commit`

--- A remote's URL.
-- @function Repository:remote_url
-- @string name
-- @treturn string
-- @return nil, message, code: `missing-remote`

--- References whose names start with prefix, sorted by name.
-- @function Repository:refs
-- @string[opt] prefix
-- @treturn {table,...} `{name, target}` or `{name, symbolic}`

--- Paths that differ between `HEAD`, the index and the working tree
-- (untracked included unless `tracked`, ignored not), sorted.
-- @function Repository:dirty
-- @tparam[opt] table opts `{tracked = true}`: changes to tracked files only
-- @treturn {string,...}
-- @return nil, message, code: `bare-repository`

--- The Git directory.
-- @function Repository:path
-- @treturn string

--- The working tree.
-- @function Repository:workdir
-- @treturn string|nil nil for a bare repository

--- Writer: a blob.
-- @function Repository:write_blob
-- @string bytes
-- @treturn string the blob id

--- Writer: nested trees from full paths.
-- @function Repository:write_tree
-- @tparam {table,...} entries `{path, bytes | blob, mode}`: modes `"100644"`
-- (default), `"100755"`, `"120000"` (bytes: the link target), `"160000"`
-- (blob: a submodule commit); hostile paths, collisions and unknown modes raise
-- @treturn string the tree id

--- Writer: one tree object exactly as given, for hostile fixtures.
-- @function Repository:write_tree_raw
-- @tparam {table,...} entries `{name, mode, oid}` in the given order, any name and mode text
-- @treturn string the tree id

--- Writer: any raw object.
-- @function Repository:write_object
-- @string type `blob`, `tree`, `commit` or `tag`
-- @string bytes
-- @treturn string the object id

--- Writer: a commit.
-- @function Repository:commit_tree
-- @tparam table spec `{tree, parents = {oid,...}, message, author, committer, ref}`:
-- author and committer are `{name, email, time, offset}`, default `vkit
-- <vkit@example.invalid>` at 1700000000 +0000 (ids are reproducible); ref, if
-- given, is set to the commit
-- @treturn string the commit id
-- @return nil, message, code: `write-failed`

--- Writer: creates or moves a reference (`"HEAD"` detaches HEAD).
-- @function Repository:set_ref
-- @string name
-- @string oid
-- @treturn boolean true
-- @return nil, message, code: `write-failed`

--- Writer: adds or changes a remote (URL and default fetch refspec).
-- @function Repository:set_remote
-- @string name
-- @string url
-- @treturn boolean true
-- @return nil, message, code: `write-failed`

--- Fetches objects from another repository (a local path, `file://`,
-- `https://`, `ssh://`) through an anonymous remote: nothing is written to
-- the configuration, no FETCH_HEAD, tags only as the refspecs say; every
-- object received is checked by libgit2's indexer.
-- @function Repository:fetch
-- @string location
-- @tparam {string,...} refspecs 1 to 1024, e.g. `"+refs/heads/*:refs/mirror/heads/*"`
-- or an exact commit as the source (`"<40 hex>:refs/vkit/commits/<40 hex>"`)
-- @treturn boolean true
-- @return nil, message, code: `fetch-failed` (with libgit2's message)

--- Copies an exact commit of another local repository, with its whole
-- history and every tree and blob they reach, object by object (how a
-- commit no branch or tag holds is brought over); an interrupted copy
-- leaves nothing dangling.
-- @function Repository:copy_commit
-- @tparam Repository src
-- @string commit an exact commit of src
-- @treturn boolean true
-- @return nil, message, code: `not-an-exact-commit`, `missing-object`, `corrupt-object`, `io-error`, `copy-failed`

--- Closes the repository; using it afterwards raises.
-- @function Repository:close
-- @treturn nil

return M
