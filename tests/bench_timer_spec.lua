-- bench/spawn_time.c, the timer behind every figure bench/vac.lua prints:
-- one line "WALL CPU PEAK_KIB EXIT" for one run, the child's own exit
-- status or 128 + its signal (the benchmark checks each case's exit against
-- expected.json with it), the child's output kept out of that line, the
-- NAME=VALUE pairs in its environment, and a peak-memory floor small
-- enough that a small program's peak is its own.  Only lower bounds of
-- time are asserted: nothing here depends on the host's speed.
local vkit = require "vkit"
local t = require "tests.support.run"
local bench = require "bench.support"

describe("bench/spawn_time.c", function()
  local dir, cleanup, timer
  setup(function()
    dir, cleanup = t.tempdir()
    timer = bench.spawn_timer(dir)
  end)
  teardown(function() cleanup() end)

  -- Runs the timer with words (quoted here), a line on its stdin; its
  -- stdout, stderr, exit code.
  local function run(words)
    local parts = {}
    for i, w in ipairs(words) do parts[i] = t.quote(w) end
    local input, out, err = dir .. "/in", dir .. "/out", dir .. "/err"
    t.write(input, "a line the child must not see\n")
    local _, _, code = os.execute(("%s %s < %s > %s 2> %s"):format(t.quote(timer), table.concat(parts, " "),
      t.quote(input), t.quote(out), t.quote(err)))
    return t.slurp(out), t.slurp(err), code
  end

  -- The one line of a run that was timed: wall, cpu, peak KiB, exit.
  local function timed(words)
    local out, err, code = run(words)
    assert.equal(0, code, err)
    local wall, cpu, kib, exit = out:match "^(%d+%.%d+) (%d+%.%d+) (%d+) (%d+)\n$"
    assert.truthy(wall, "one line of four figures, not: " .. out)
    return tonumber(wall), tonumber(cpu), tonumber(kib), tonumber(exit)
  end

  it("reports the child's exit status, or 128 + the signal that ended it", function()
    assert.equal(0, select(4, timed { "true" }))
    assert.equal(3, select(4, timed { "sh", "-c", "exit 3" }))
    assert.equal(128 + 15, select(4, timed { "sh", "-c", "kill -TERM $$" }))
    assert.equal(128 + 9, select(4, timed { "sh", "-c", "kill -KILL $$" }))
  end)

  it("keeps the child's output out of its line and gives it an empty stdin", function()
    assert.equal(0, select(4, timed { "sh", "-c", "echo noise; echo noise >&2; printf '1 2 3 4\\n'" }))
    assert.equal(7, select(4, timed { "sh", "-c", "if read line; then exit 9; else exit 7; fi" }))
  end)

  it("adds the NAME=VALUE pairs to the child's environment", function()
    assert.equal(0, select(4, timed { "VKIT_TIMER_A=one two", "sh", "-c", '[ "$VKIT_TIMER_A" = "one two" ]' }))
    assert.equal(1, select(4, timed { "sh", "-c", '[ -n "$VKIT_TIMER_A" ]' }))
  end)

  it("times at least what the child waited, and the CPU it used", function()
    local wall = timed { "sleep", "0.2" }
    assert.is_true(wall >= 0.2, wall)
    local script = dir .. "/spin.lua"
    t.write(script, "while os.clock() < 0.2 do end") -- os.clock: this process's CPU time
    local _, cpu = timed { vkit.exe, "script", script }
    assert.is_true(cpu >= 0.2, cpu)
  end)

  it("reads the child's own peak memory, over a floor below 2 MiB", function()
    local small = dir .. "/small"
    assert(os.execute(("printf 'int main(void){return 0;}' | gcc -O2 -x c -o %s -"):format(t.quote(small))))
    local _, _, kib = timed { small }
    assert.is_true(kib < 2048, kib .. " KiB for an empty program")
    local script = dir .. "/big.lua"
    t.write(script, "local s = ('x'):rep(64 * 1024 * 1024); io.write(#s)")
    local _, _, big = timed { vkit.exe, "script", script }
    assert.is_true(big >= 64 * 1024, big .. " KiB for a program holding 64 MiB")
  end)

  it("names a program it cannot start (exit 1), and wants one (exit 2)", function()
    local out, err, code = run { "/nonexistent/program" }
    assert.equal(1, code)
    assert.equal("", out)
    assert.matches("spawn_time: /nonexistent/program: No such file or directory", err, 1, true)
    out, err, code = run {}
    assert.equal(2, code)
    assert.matches("^usage: spawn_time", err)
  end)
end)
