-- Change intents, preflight and certification: where things live in a
-- project's Git tree, the caps on documents read from Git objects, the
-- exhaustive method's batching, and what each run outcome means.
local KiB = 1024

return {
  layout = {
    intents_dir = "verification/change-intents",
    accepted_list = "verification/change-intents/accepted.v1.json",
    differences_dir = "verification/change-intents/differences",
  },
  caps = {
    document_bytes = 1024 * KiB,     -- intent revision, accepted list, request, policy
    artifact_bytes = 1024 * KiB,     -- each semantic artifact
    source_bytes = 64 * KiB,         -- each bound application source
    witness_bytes = 1024 * KiB,      -- a Kani witness record (vkit.change.witness)
    report_bytes = 64 * 1024 * KiB,  -- a retained method report a certification summary pins (vkit.change.evidence)
  },
  languages = { "rust", "python", "typescript" },
  -- Where vkit keeps the pinned TypeScript native compiler (mk/typescript.mk),
  -- relative to its root: the build tree's, then an installed tree's
  -- (PREFIX/share/vkit/typescript, where `make install` puts it).
  typescript_dirs = { "build/typescript", "typescript" },
  -- The sandbox of every process of change certification (builds, base
  -- and candidate runs, every method, every language): vkit.change.sandbox.
  -- Each process gets namespaces of its own (mount, PID, network, IPC,
  -- UTS; a user namespace too when vkit is not root) and a root made of
  -- these read-only host paths, the toolchain's own directories, the side's
  -- files at the paths below and a fresh tmpfs; writes go only to that
  -- tmpfs (and a build's output directory), enforced by Landlock as well.
  sandbox = {
    uid = 65534,                     -- whom a role runs as when vkit is root (nobody)
    gid = 65534,                     -- (nogroup): no cgroup, store or vkit file of root's is theirs
    hostname = "sandbox",            -- the UTS namespace's name: not the host's
    system = { "/usr", "/etc/ld.so.cache", "/etc/alternatives" },  -- read-only, executable
    links = { "/bin", "/lib", "/lib64", "/sbin" },                 -- recreated as the host has them
    devices = { "/dev/null", "/dev/zero", "/dev/random", "/dev/urandom" },
    tmp_bytes = 512 * 1024 * KiB,    -- the private /tmp (a build's linker writes there)
    -- Where a role sees its files: never a path of the store or the project.
    layout = { project = "/project", driver = "/vkit/driver", build = "/vkit/build", cwd = "/tmp" },
  },
  -- The exhaustive method (every accepted input, batch drivers).  Its
  -- budget is the seed's runner limits (limits.lua `paired`), its own.
  exhaustive = {
    min_passes = 2,                  -- runs per side in fresh processes: ascending, then run-id orders
    stderr_reserve_bytes = 4 * KiB,  -- of each invocation's output cap, left for stderr: the candidate's own
                                     -- and the driver's cause lines (below), which fit in it with room to spare
    listed_inputs = 64,              -- violating / unstable / failed inputs listed by value in a report
    output_runs_kept = 8192,         -- runs of one output per side kept for the report's chart: a
                                     -- 4,096-input domain of distinct outputs fits twice over
  },
  -- Why an input could not be checked: a driver prints at most `lines`
  -- "vkit driver: ..." lines to stderr (distinct causes, each with a count;
  -- then one "more N" line), each at most `line_bytes` long, so they fit in
  -- the exhaustive stderr reserve; reports show a cause in `shown_bytes`.
  causes = {
    lines = 8,
    line_bytes = 240,
    shown_bytes = 300,
    tail_lines = 3,                  -- lines of a traceback / stderr tail / build error kept per cause
  },
  -- A certification run's outcome (the pure combiner, vkit.change.combine)
  -- and the exit status `vkit change certify` gives it.  0 means every
  -- accepted input was checked and conforms, and either the candidate is
  -- inside the pure-function profile or the host said it trusts it
  -- (--trust-candidate-code); nothing sampled reads as 0.
  outcomes = {
    all_inputs_conform = { exit = 0, meaning = "every accepted input checked natively and conforming; the candidate "
      .. "is inside the pure-function profile" },
    all_inputs_conform_trusted = { exit = 0, meaning = "every accepted input checked natively and conforming; the "
      .. "candidate is outside the pure-function profile and the host accepted it (--trust-candidate-code)" },
    unadmitted_conform = { exit = 8, meaning = "every accepted input observed conforming, but the candidate is "
      .. "outside the pure-function profile: state, observer tampering and environment detection are not excluded" },
    verified = { exit = 0, meaning = "every accepted input checked in Kani's model of the captured source (rust_kani alone)" },
    observed_violation = { exit = 1, meaning = "a method observed a violation" },
    proof_rejected = { exit = 1, meaning = "Kani rejected the relational proof (no native counterexample)" },
    unknown = { exit = 1, meaning = "incomplete: not every accepted input could be checked" },
    blocked = { exit = 1, meaning = "preflight refused the request, or the requested method cannot run" },
    cancelled = { exit = 1, meaning = "the run was cancelled" },
    infrastructure_failure = { exit = 3, meaning = "a build, launch, protocol, pin or retained-artifact check failed" },
    samples_conform = { exit = 5, meaning = "the sampled inputs conform; the other accepted inputs were not checked" },
  },
}
