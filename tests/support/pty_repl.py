"""Drives `vkit repl` through a real pseudo-terminal, as a person would:
argv: VKIT HOME.  Types a Tab completion, cancels a line with Ctrl-C,
evaluates an expression and leaves with Ctrl-D; prints what the terminal
showed (the spec asserts on it)."""
import os
import pty
import select
import sys
import time

vkit, home = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execve(vkit, [vkit, "repl"], {"HOME": home, "TERM": "dumb", "PATH": "/usr/bin:/bin"})

seen = b""


def read_for(seconds):
    global seen
    end = time.time() + seconds
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                data = os.read(fd, 4096)
            except OSError:
                return
            if not data:
                return
            seen += data


def send(data, wait=0.5):
    os.write(fd, data)
    read_for(wait)


read_for(1.0)
send(b"vkit.ha\t")                 # Tab completes to vkit.hash
send(b".sha256('abc')\r", 1.0)     # and the completed line runs
send(b"this line is abandoned")
send(b"\x03", 0.8)                 # Ctrl-C cancels the line
send(b"1 + 41\r", 1.0)
send(b"\x04", 1.0)                 # Ctrl-D exits
_, status = os.waitpid(pid, 0)
sys.stdout.write(seen.decode("utf-8", "replace"))
sys.stdout.write("\nEXIT %d\n" % os.waitstatus_to_exitcode(status))
