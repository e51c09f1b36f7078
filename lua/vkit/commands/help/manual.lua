--- The man page (vkit.1) and the bash completion, generated from the same
-- source as `--help`: each command module's summary, usage and, for its
-- actions, its help table (vkit.cli's convention), and vkit.cli's exit
-- codes; the ENVIRONMENT and EXAMPLES sections are data of their own
-- (environment.lua, examples.lua beside this file).  A command whose help changes changes both at the next
-- `make install`.  Pure: returns text (scripts/manual.lua writes it).
--
--   roff(version) -> the man page source
--   bash()        -> the completion script (`complete -F _vkit vkit`)
local cli = require "vkit.cli"
local environment = require "vkit.commands.help.environment"
local examples = require "vkit.commands.help.examples"
local values = require "vkit.commands.help.values"

local M = {}

-- Commands in the order the help lists them, with their actions sorted.
local function commands()
  local out = {}
  for _, name in ipairs(cli.command_names()) do
    local module = cli.load_command(name)
    out[#out + 1] = { name = name, module = module, actions = cli.action_names(module) }
  end
  return out
end

-- roff: a backslash is \e; a line starting with . or ' would be a request.
local function escape(text)
  return (text:gsub("\\", "\\e"):gsub("\n([.'])", "\n\\&%1"):gsub("^([.'])", "\\&%1"):gsub("%-", "\\-"))
end

local function preformatted(out, text)
  out[#out + 1] = ".nf"
  out[#out + 1] = escape(text:gsub("\n+$", ""))
  out[#out + 1] = ".fi"
end

function M.roff(version)
  local out = {
    ('.TH VKIT 1 "" "vkit %s" "vkit manual"'):format(escape(version)),
    ".SH NAME",
    "vkit \\- a verification kit: change certification, the external verifier protocol, VAC bundles",
    ".SH SYNOPSIS",
    ".B vkit",
    ".I SUBCOMMAND",
    "[\\fIARGS\\fR...]",
    ".SH DESCRIPTION",
    escape("vkit checks claims about software so that a stranger can re-check them. Each subcommand below is"
      .. " shown with the text its --help prints (vkit SUBCOMMAND --help, vkit SUBCOMMAND ACTION --help)."),
    ".SH COMMANDS",
  }
  for _, c in ipairs(commands()) do
    out[#out + 1] = ".SS " .. escape(c.name)
    out[#out + 1] = escape(c.module.summary or "")
    if c.module.usage then
      out[#out + 1] = ".PP"
      preformatted(out, c.module.usage)
    end
    for _, action in ipairs(c.actions) do
      if c.module.help[action] ~= c.module.usage then
        out[#out + 1] = ".TP"
        out[#out + 1] = ("\\fBvkit %s %s\\fR"):format(escape(c.name), escape(action))
        preformatted(out, c.module.help[action])
      end
    end
  end
  out[#out + 1] = ".SH EXIT STATUS"
  preformatted(out, cli.EXIT_TEXT)
  out[#out + 1] = ".SH ENVIRONMENT"
  for _, v in ipairs(environment) do
    out[#out + 1] = ".TP"
    out[#out + 1] = "\\fB" .. escape(v.name) .. "\\fR"
    out[#out + 1] = escape(v.text)
  end
  out[#out + 1] = ".SH FILES"
  out[#out + 1] = escape("PREFIX/share/vkit: the Lua library, policies, the pinned TypeScript compiler and the examples;"
    .. " PREFIX/lib/vkit: the shared modules; PREFIX/share/doc/vkit: the documents, the tutorial and the API reference.")
  out[#out + 1] = ".SH EXAMPLES"
  for _, e in ipairs(examples) do
    out[#out + 1] = ".PP"
    out[#out + 1] = escape(e.text)
    out[#out + 1] = ".PP"
    out[#out + 1] = ".RS 4"
    preformatted(out, e.command)
    out[#out + 1] = ".RE"
  end
  out[#out + 1] = ".SH SEE ALSO"
  out[#out + 1] = escape("tutorial.md, api.md and the API reference (api/index.html) in PREFIX/share/doc/vkit.")
  return table.concat(out, "\n") .. "\n"
end

-- The options a help text names, for a completion word list.
local function options(text)
  return table.concat(cli.options_named(text), " ")
end

-- The case arms that complete an option's value: "COMMAND ACTION --option"
-- (ACTION * when any) against the command line's first two words and the
-- word before the cursor.
local function value_cases()
  local out = {}
  for _, v in ipairs(values.OPTIONS) do
    -- "run "*" --run": the words quoted, an action left out a glob
    local pattern = ("\"%s \"%s\" %s\""):format(v.command, v.action or "*", v.option)
    if v.values == "runs" then
      out[#out + 1] = ("    %s) words=$(_vkit_runs); files= ;;"):format(pattern)
    else
      out[#out + 1] = ("    %s) words=%q; files= ;;"):format(pattern, table.concat(v.values(), " "))
    end
  end
  return table.concat(out, "\n")
end

function M.bash()
  local names, cases = {}, {}
  for _, c in ipairs(commands()) do
    names[#names + 1] = c.name
    if #c.actions > 0 then
      local per_action = {}
      for _, action in ipairs(c.actions) do
        per_action[#per_action + 1] = ("        %s) words=%q ;;"):format(action, options(c.module.help[action]))
      end
      cases[#cases + 1] = table.concat({
        ("    %s)"):format(c.name),
        ("      if [ \"$COMP_CWORD\" -eq 2 ]; then words=%q; files=; else"):format(table.concat(c.actions, " ")),
        "      case ${COMP_WORDS[2]} in",
        table.concat(per_action, "\n"),
        "      esac; fi ;;",
      }, "\n")
    else
      cases[#cases + 1] = ("    %s) words=%q ;;"):format(c.name, options(c.module.usage))
    end
  end
  return table.concat({
    "# bash completion for vkit, generated from each command's --help (make install).",
    "# The project's run ids, from the vkit being completed, with the line's --project and --store.",
    "_vkit_runs() {",
    "  local i where=()",
    "  for ((i = 2; i < COMP_CWORD; i++)); do",
    "    case ${COMP_WORDS[i]} in --project|--store) where+=(\"${COMP_WORDS[i]}\" \"${COMP_WORDS[i+1]}\") ;; esac",
    "  done",
    "  \"${COMP_WORDS[0]}\" run list --json \"${where[@]}\" 2>/dev/null | sed -n 's/^ *\"run_id\": *\"\\([^\"]*\\)\".*/\\1/p'",
    "}",
    "_vkit() {",
    "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} words= files=1",
    "  if [ \"$COMP_CWORD\" -eq 1 ]; then",
    ("    words=%q; files="):format(table.concat(names, " ") .. " help --help --version -V"),
    "  elif [ \"$COMP_CWORD\" -ge 3 ] && case \"${COMP_WORDS[1]} ${COMP_WORDS[2]} $prev\" in",
    value_cases(),
    "    *) false ;;",
    "    esac; then :",
    "  else",
    "    case ${COMP_WORDS[1]} in",
    table.concat(cases, "\n"),
    "    esac",
    "  fi",
    "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))",
    "  case $cur in -*) ;; *) [ -n \"$files\" ] && COMPREPLY+=($(compgen -f -- \"$cur\")) ;; esac",
    "}",
    "complete -o filenames -F _vkit vkit",
  }, "\n") .. "\n"
end

return M
