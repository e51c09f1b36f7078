--- `vkit change certify|intent init|request`: certify a candidate against
-- its accepted intent; scaffold an intent for review; build a request.
local cli = require "vkit.cli"
local certify_command = require "vkit.commands.change.certify"
local intent_command = require "vkit.commands.change.intent"
local request_command = require "vkit.commands.change.request"

local CHANGE_USAGE = [[usage: vkit change certify --base REV --candidate REV [--timeout T] [...]
       vkit change certify --request REQUEST.json --trusted-target REV [...]
       vkit change intent init --language L --source PATH --function NAME --domain SET --observations SET [...]
       vkit change request --intent DIGEST --base REV --candidate REV [...]

Change certification: `certify` binds a candidate to its accepted
intent and runs the certification methods; `intent init` writes a proposed
intent for review (it never accepts anything); `request` builds the finite
request certify reads.  `vkit change ACTION --help` describes one action.

]] .. cli.EXIT_TEXT

return {
  summary = "certify a change against its accepted intent; scaffold an intent; build a request",
  usage = CHANGE_USAGE,
  help = { certify = certify_command.USAGE, intent = intent_command.USAGE, request = request_command.USAGE },
  run = function(argv)
    if argv[1] == "intent" then
      if argv[2] ~= "init" then
        local near = argv[2] and require("vkit.cli.suggest").hint(argv[2], { "init" }) or ""
        return cli.usage_error("change intent needs the action: init" .. near, "change intent init")
      end
      return intent_command.init(table.move(argv, 3, #argv, 1, {}))
    end
    if argv[1] == "request" then return request_command.run(table.move(argv, 2, #argv, 1, {})) end
    if argv[1] ~= "certify" then
      return cli.usage_error("change needs one of the actions: certify, intent init, request", "change")
    end
    return certify_command.run(table.move(argv, 2, #argv, 1, {}))
  end,
}
