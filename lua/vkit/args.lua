--- Command-line parsing shared by every subcommand.
--
-- spec = {
--   flags = { json = true },                 -- --json
--   options = { project = "string", wait = "number" },  -- --wait 5, --wait=5
--   -- "list": may repeat, collected in order (--require a --require b)
--   min = 1, max = 1,                        -- positional count
-- }
-- parse(argv, spec) -> opts (positionals in opts[1..n]) | nil, message.
-- Every mistake is a message for a usage error (exit 2), never a guess.
local M = {}

local function convert(name, kind, text)
  if kind == "string" or kind == "list" then return text end
  if kind == "number" then
    -- A plain decimal (5, 2.5, -1): Lua's tonumber would also take 0x10,
    -- 1e1, " 5" or "inf", which a person never means as seconds.
    local n = (text:match "^%-?%d+$" or text:match "^%-?%d+%.%d+$") and tonumber(text)
    if not n then
      return nil, ("--%s needs a decimal number, got %q"):format(name, text)
    end
    return n
  end
  error("unknown option kind " .. tostring(kind))
end

--- Does argv ask for help (--help or -h) before any "--"?
function M.wants_help(argv)
  for _, a in ipairs(argv) do
    if a == "--" then return false end
    if a == "--help" or a == "-h" then return true end
  end
  return false
end

function M.parse(argv, spec)
  local flags, options = spec.flags or {}, spec.options or {}
  local opts, positional = {}, {}
  local i = 1
  while i <= #argv do
    local a = argv[i]
    if a == "--" then
      for j = i + 1, #argv do positional[#positional + 1] = argv[j] end
      break
    end
    local name, inline = a:match "^%-%-([%w%-_]+)=(.*)$"
    name = name or a:match "^%-%-([%w%-_]+)$"
    if name then
      local key = name:gsub("%-", "_")
      if flags[key] then
        if inline then return nil, ("--%s takes no value"):format(name) end
        opts[key] = true
      elseif options[key] then
        local text = inline
        if not text then
          i = i + 1
          text = argv[i]
          if text == nil then return nil, ("--%s needs a value"):format(name) end
        end
        if opts[key] ~= nil and options[key] ~= "list" then return nil, ("--%s given twice"):format(name) end
        local value, err = convert(name, options[key], text)
        if value == nil then return nil, err end
        if options[key] == "list" then
          opts[key] = opts[key] or {}
          opts[key][#opts[key] + 1] = value
        else
          opts[key] = value
        end
      else
        return nil, ("unknown option --%s"):format(name)
      end
    elseif a:match "^%-." then
      return nil, ("unknown option %s"):format(a)
    else
      positional[#positional + 1] = a
    end
    i = i + 1
  end
  local min, max = spec.min or 0, spec.max or 0
  if #positional < min then return nil, ("missing argument%s"):format(spec.names and (" " .. spec.names) or "") end
  if max >= 0 and #positional > max then return nil, ("unexpected argument %q"):format(positional[max + 1]) end
  for k, v in ipairs(positional) do opts[k] = v end
  return opts
end

return M
