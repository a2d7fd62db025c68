#!/usr/bin/env python3
# ptyrun.py: runs a command on a real pseudo-terminal of a given size, types what it is told, resizes the terminal when told, and prints everything the terminal showed; for qrsh -pty in qrsh.bats.
# Usage: ptyrun.py ROWS COLS SCRIPT -- COMMAND...   SCRIPT is a list of steps
# separated by ';': "wait:TEXT" (until the output holds TEXT), "type:TEXT"
# (\n and \x03 escapes), "size:ROWS,COLS" (TIOCSWINSZ, then SIGWINCH reaches
# the terminal's foreground group, as a window manager's resize does).
import fcntl, os, pty, select, struct, sys, termios, time

def setsize(fd, rows, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

def main():
    rows, cols, script = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    cmd = sys.argv[sys.argv.index("--") + 1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    setsize(fd, rows, cols)
    seen = b""
    deadline = time.time() + 30

    def pump(until=None):
        nonlocal seen
        while time.time() < deadline:
            if until is not None and until in seen:
                return True
            r, _, _ = select.select([fd], [], [], 0.1)
            if fd in r:
                try:
                    data = os.read(fd, 4096)
                except OSError:
                    return until is None
                if not data:
                    return until is None
                seen += data
        return False

    for step in [s for s in script.split(";") if s]:
        kind, _, arg = step.partition(":")
        if kind == "wait":
            if not pump(arg.encode()):
                sys.stdout.write(seen.decode(errors="replace"))
                sys.exit("ptyrun: timed out waiting for %r" % arg)
        elif kind == "type":
            os.write(fd, arg.encode().decode("unicode_escape").encode())
        elif kind == "size":
            r, c = arg.split(",")
            setsize(fd, int(r), int(c))
    pump()
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(seen.decode(errors="replace"))
    sys.exit(os.waitstatus_to_exitcode(status))

main()
