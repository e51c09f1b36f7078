--- The stdin records of domain indexes (issue 34's exhaustive method).  Pure.
--
-- A driver's stdin is one record per input, each parameter little-endian
-- in its type's width (vkit.change.signature_drivers.encode_inputs).  At
-- 2^20 inputs, decoding each index into a tuple (vkit.change.domain.at)
-- and packing it cost seconds of Lua per certification, so each
-- parameter's values are packed once, by their position in the
-- parameter's set, and an index's record is the concatenation of its
-- digits' bytes (the domain's mixed radix, the last parameter fastest).
local signature = require "vkit.change.signature"
local records = require "vkit.change.signature_records"

local M = {}

--- An encoder for domain `d`: record(index) -> that input's stdin record,
--  the bytes encode_inputs gives for its tuple.
function M.new(d)
  local n, counts, parts = #d.sets, d.counts, {}
  for i, set in ipairs(d.sets) do
    local fmt, list, k = "<" .. records.PACK[set.type], {}, 0
    for _, range in ipairs(set.ranges) do
      for o = range[1], range[2] do
        local v = signature.from_ord(set.type, o)
        if set.type == "bool" then v = v and 1 or 0 end
        list[k] = string.pack(fmt, v)
        k = k + 1
      end
    end
    parts[i] = list
  end
  -- consecutive indexes share every digit but the last: the record of
  -- the others is kept for the next index
  local last, c, prefix_of, prefix = parts[n], counts[n], nil, nil
  local function head(p)
    local digits, rest = {}, p
    for i = n - 1, 1, -1 do
      digits[i] = parts[i][rest % counts[i]]
      rest = rest // counts[i]
    end
    return table.concat(digits)
  end
  return function(x)
    local p = x // c
    if p ~= prefix_of then prefix_of, prefix = p, head(p) end
    return prefix .. last[x % c]
  end
end

return M
