-- Busted output: the plain terminal report, then one line CI can read:
-- "N passed, N failed, N skipped" (errors count as failed).
return function(options)
  local busted = require "busted"
  local handler = require "busted.outputHandlers.plainTerminal"(options)
  local subscribe = handler.subscribe
  handler.subscribe = function(self, opts)
    subscribe(self, opts)
    busted.subscribe({ "exit" }, function()
      io.write(("%d passed, %d failed, %d skipped\n"):format(
        handler.successesCount, handler.failuresCount + handler.errorsCount, handler.pendingsCount))
      io.flush()
      return nil, true
    end)
  end
  return handler
end
