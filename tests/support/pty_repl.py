"""Drives `vkit repl` through a real pseudo-terminal, as a person would,
waiting for what the terminal shows rather than for time to pass.

argv: VKIT HOME STEPS-JSON [REPL-ARGS...].  STEPS is a list of
  {"send": text}                  type text (\\t Tab, \\u0003 Ctrl-C, \\u0004 Ctrl-D)
  {"expect": regex, "timeout": s} wait until the transcript since the last
                                  expect matches (default 120 s: a bound
                                  that only a hang reaches)
  {"kill": signal}                send the REPL a signal
  {"wait_file": path}             wait (120 s at most) until path exists
Prints the transcript, then "EXIT <status>" (or "TIMEOUT <regex>" when an
expect was never met, and the REPL is killed)."""
import json
import os
import pty
import re
import select
import signal
import sys
import time

vkit, home, steps = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
pid, fd = pty.fork()
if pid == 0:
    os.execve(vkit, [vkit, "repl"] + sys.argv[4:], {"HOME": home, "TERM": "dumb", "PATH": "/usr/bin:/bin"})

seen = b""
mark = 0


def pump(timeout):
    """Reads what arrives within timeout: "data", "timeout" or "eof"."""
    global seen
    r, _, _ = select.select([fd], [], [], timeout)
    if not r:
        return "timeout"
    try:
        data = os.read(fd, 4096)
    except OSError:
        return "eof"
    if not data:
        return "eof"
    seen += data
    return "data"


def expect(pattern, timeout):
    global mark
    end = time.monotonic() + timeout
    rx = re.compile(pattern.encode(), re.S)
    while True:
        m = rx.search(seen, mark)
        if m:
            mark = m.end()
            return True
        left = end - time.monotonic()
        if left <= 0 or pump(min(left, 0.5)) == "eof":
            m = rx.search(seen, mark)
            if m:
                mark = m.end()
                return True
            return False


for step in steps:
    if "send" in step:
        os.write(fd, step["send"].encode())
    elif "expect" in step:
        if not expect(step["expect"], step.get("timeout", 120)):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            sys.stdout.write(seen.decode("utf-8", "replace"))
            sys.stdout.write("\nTIMEOUT %s\n" % step["expect"])
            sys.exit(0)
    elif "kill" in step:
        os.kill(pid, step["kill"])
    elif "wait_file" in step:
        end = time.monotonic() + 120
        while not os.path.exists(step["wait_file"]) and time.monotonic() < end:
            pump(0.05)

end = time.monotonic() + 120
while time.monotonic() < end and pump(0.5) != "eof":
    pass
_, status = os.waitpid(pid, 0)
sys.stdout.write(seen.decode("utf-8", "replace"))
if os.WIFSIGNALED(status):
    sys.stdout.write("\nSIGNAL %d\n" % os.WTERMSIG(status))
else:
    sys.stdout.write("\nEXIT %d\n" % os.waitstatus_to_exitcode(status))
