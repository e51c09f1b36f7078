--- The EXAMPLES section of the man page, as data: what a newcomer types
-- first, each with one sentence of what it does.  Every command here works
-- as written in today's vkit (tests/manual_spec.lua checks each names a
-- command and an action vkit has).
return {
  { text = "Propose an intent for the u32 -> u32 function score of src/score.py (nothing is accepted until you"
      .. " commit the acceptance list it prints):",
    command = "vkit change intent init --language python --source src/score.py --function score \\\n"
      .. "  --domain 0..99 --observations 0..100 --require 50..99=100" },
  { text = "The same for clamp(x, lo, hi) of src/clamp.py, three i32 parameters (Python's int fixes no width, so"
      .. " --type says it); every one of the 44,541 accepted inputs is run:",
    command = "vkit change intent init --language python --source src/clamp.py --function clamp \\\n"
      .. "  --type x=i32 --type lo=i32 --type hi=i32 --returns i32 \\\n"
      .. "  --domain x=-50..50 --domain lo=-10..10 --domain hi=-10..10 --observations=-50..50" },
  { text = "In a pull request's CI job: certify HEAD against origin/main's accepted intent in one command, waiting"
      .. " up to ten minutes; exit 0 means every accepted input was run on both sides and conforms:",
    command = "vkit change certify --base origin/main --candidate HEAD --timeout 10m" },
  { text = "The same as a request file; build the request for a candidate commit against the accepted intent:",
    command = "vkit change request --intent DIGEST --base TARGET --candidate CANDIDATE > request.json" },
  { text = "Certify it against the trusted target, waiting up to 60 seconds; exit 0 means every accepted input"
      .. " was run on base and candidate and conforms:",
    command = "vkit change certify --project . --request request.json --trusted-target TARGET --wait 60" },
  { text = "Wait for a run queued earlier, exiting as the command that queued it would:",
    command = "vkit run wait --run RUN-ID --wait 60" },
  { text = "Write the run's report for a reviewer, as HTML:",
    command = "vkit run report latest --format html --output report.html" },
  { text = "The same run's findings as SARIF 2.1.0, for code-scanning tools:",
    command = "vkit run report latest --format sarif --output vkit.sarif" },
  { text = "Run a component's pinned external producer and checker:",
    command = "vkit verify COMPONENT --wait 60" },
  { text = "Verify a VAC (Verifiable Agent Claims) evidence bundle:",
    command = "vkit vac verify bundle.tar.gz" },
  { text = "Read the help of one action (the same as vkit change certify --help):",
    command = "vkit help change certify" },
}
