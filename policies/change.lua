-- Change intents, preflight and certification: where things live in a
-- project's Git tree, and the caps on documents read from Git objects.
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
  },
  languages = { "rust", "python", "typescript" },
}
