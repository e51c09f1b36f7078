--- Splitting an accepted domain into batches, and the orders each batch is
-- run in (the exhaustive method).  Pure.
--
-- A batch is as many inputs as one invocation's output can hold: the
-- combined output cap, less a reserve for what the candidate itself writes
-- to stderr, divided by the longest line the batch driver can print for
-- the domain's largest input.  A batch whose run still reaches the cap is
-- split in two by the method and run again.
--
-- Pass 1 runs a batch in ascending order; every later pass runs it in a
-- permutation derived from the run id, the batch and the pass: a
-- Fisher-Yates shuffle whose draws are SHA-256 in counter mode over
-- "vkit-exhaustive-order" NUL run_id NUL batch NUL pass, so anyone with the
-- run id can recompute every order.
local hash = require "vkit.hash"
local ranges = require "vkit.change.ranges"
local batch_drivers = require "vkit.change.batch_drivers"

local M = {}

--- How many inputs fit one invocation for a domain (canonical ranges).
function M.size(domain, output_cap, reserve)
  local largest = domain[#domain][2]
  local per_line = batch_drivers.line_bound(#tostring(largest))
  return math.max(1, (output_cap - reserve) // per_line)
end

--- The domain as consecutive ascending batches: {{index, inputs}, ...}.
function M.plan(domain, output_cap, reserve)
  local size = M.size(domain, output_cap, reserve)
  local batches, current = {}, {}
  for x in ranges.values(domain) do
    current[#current + 1] = x
    if #current == size then
      batches[#batches + 1] = { index = #batches + 1, inputs = current }
      current = {}
    end
  end
  if #current > 0 then batches[#batches + 1] = { index = #batches + 1, inputs = current } end
  return batches
end

--- A batch split in two halves (each keeps the parent's label and a part).
function M.halves(batch)
  local mid = #batch.inputs // 2
  local a, b = {}, {}
  for i, x in ipairs(batch.inputs) do
    if i <= mid then a[#a + 1] = x else b[#b + 1] = x end
  end
  return { index = batch.index .. "a", inputs = a }, { index = batch.index .. "b", inputs = b }
end

-- Uniform-enough draws in [0, n): 32 bits at a time from the SHA-256 stream.
local function stream(seed)
  local counter, pool, at = 0, "", 1
  return function(n)
    if at > #pool then
      counter = counter + 1
      pool = hash.sha256(seed .. "\0" .. counter)
      at = 1
    end
    local word = tonumber(pool:sub(at, at + 7), 16)
    at = at + 8
    return word % n
  end
end

--- The seed of a pass's order (recorded in the report).
function M.seed(run_id, batch_index, pass)
  return table.concat({ "vkit-exhaustive-order", run_id, tostring(batch_index), tostring(pass) }, "\0")
end

--- The order of a batch's inputs in a pass: ascending for pass 1, else
--  the run-id-derived permutation.
function M.order(inputs, run_id, batch_index, pass)
  local out = {}
  for i, x in ipairs(inputs) do out[i] = x end
  if pass == 1 then return out end
  local draw = stream(M.seed(run_id, batch_index, pass))
  for i = #out, 2, -1 do
    local j = draw(i) + 1
    out[i], out[j] = out[j], out[i]
  end
  return out
end

return M
