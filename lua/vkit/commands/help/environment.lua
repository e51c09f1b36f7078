--- The ENVIRONMENT section of the man page, as data: every environment
-- variable vkit reads, in the order a person meets them, with what it
-- changes.  tests/manual_spec.lua greps lua/ and csrc/ for the variables
-- the code reads and fails when one is missing here (or listed here but
-- no longer read).
return {
  { name = "VKIT_STORE", text = "the job store when no --store is given: postgresql://... (libpq syntax, no password"
      .. " in it) selects a shared PostgreSQL store; unset, each project keeps a file store in its .vkit/." },
  { name = "VKIT_EVIDENCE_ROOT", text = "with a PostgreSQL store: the directory, shared by every machine, where runs"
      .. " keep their evidence; overrides the root recorded by vkit store migrate --evidence-root." },
  { name = "VKIT_CACHE", text = "this machine's cache directory (Git caches, scratch attempt directories, worker"
      .. " locks) for a PostgreSQL store; default $XDG_CACHE_HOME/vkit." },
  { name = "XDG_CACHE_HOME", text = "where the cache goes when VKIT_CACHE is unset; default $HOME/.cache." },
  { name = "HOME", text = "the REPL's history file ($HOME/.vkit_history), the default cache, and where vkit change"
      .. " intent init looks for a rustup toolchain ($HOME/.rustup); passed to the workers vkit starts." },
  { name = "VKIT_TOOLCHAIN_ROOTS", text = "where this machine keeps a toolchain root an intent declares, as"
      .. " DECLARED=HERE pairs joined by colons (/opt/rust=/srv/rust): vkit change certify queues the run with each"
      .. " declared root read from its place here; the SHA-256 pins still decide." },
  { name = "NO_COLOR", text = "set and not empty: no colour on a terminal (there is never colour on a pipe or"
      .. " with --json)." },
  { name = "TMPDIR", text = "where vkit vac unpacks a bundle archive and drafts in private directories; default /tmp." },
  { name = "PGCONNECT_TIMEOUT", text = "libpq's connect timeout; unset, and with no connect_timeout in the store's"
      .. " URL, vkit gives up on a host that does not answer after the policies' connect timeout." },
  { name = "PGHOST PGPORT PGUSER PGDATABASE PGPASSWORD PGPASSFILE PGSERVICEFILE PGSSLMODE PGSSLROOTCERT",
    text = "libpq's own variables for a PostgreSQL store; passed, with VKIT_STORE, VKIT_EVIDENCE_ROOT and"
      .. " VKIT_CACHE, to the workers vkit starts (every other variable is left out of a worker's environment)." },
}
