#!/usr/bin/env python3
"""Runs a command and SIGKILLs it (its whole process group) once FILE holds
at least N lines, so that a test kills a run part-way through however slow
the machine is; fails if the command ends first or after 120 s.

  kill_after.py FILE N -- CMD ...

Exits 137 (killed) when it killed the command."""
import os
import signal
import subprocess
import sys
import time

path, lines = sys.argv[1], int(sys.argv[2])
cmd = sys.argv[sys.argv.index("--") + 1:]
p = subprocess.Popen(cmd, start_new_session=True)
deadline = time.time() + 120
while time.time() < deadline and p.poll() is None:
    try:
        with open(path) as f:
            if len(f.read().splitlines()) >= lines:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                sys.exit(137)
    except FileNotFoundError:
        pass
    time.sleep(0.05)
if p.poll() is None:
    os.killpg(p.pid, signal.SIGKILL)
sys.exit(f"{cmd[0]} ended (status {p.wait()}) before {path} had {lines} lines")
