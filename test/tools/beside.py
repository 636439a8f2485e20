#!/usr/bin/env python3
"""Runs a command while another one runs beside it.

  beside.py FILE -- FIRST ... -- SECOND ...

Starts FIRST (in its own session, its output discarded), waits until FILE
exists and is not empty (at most 60 s), runs SECOND with its streams passed
on, then kills FIRST's process group. Exits with SECOND's status.
"""
import os
import signal
import subprocess
import sys
import time

path = sys.argv[1]
rest = sys.argv[3:]
split = rest.index("--")
first, second = rest[:split], rest[split + 1:]
p = subprocess.Popen(first, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
deadline = time.time() + 60
while time.time() < deadline and p.poll() is None:
    if os.path.exists(path) and os.path.getsize(path) > 0:
        break
    time.sleep(0.05)
else:
    p.kill()
    sys.exit("beside.py: " + path + " never appeared")
status = subprocess.run(second).returncode
os.killpg(p.pid, signal.SIGKILL)
p.wait()
sys.exit(status)
