#!/usr/bin/env python3
"""Starts a command, waits until its benchmark has started (DIR/started
exists), sends the command SIGINT, and reports how many benchmark processes
(objective.py with --sleep; or, with INTERRUPT_MATCH set, any whose
command line holds that text and DIR) are still alive once the dying ones
are gone (at most 5 s). Exits with the command's status."""
import os
import signal
import subprocess
import sys
import time

workdir, cmd = sys.argv[1], sys.argv[2:]
p = subprocess.Popen(cmd)
deadline = time.time() + 60
while not os.path.exists(os.path.join(workdir, "started")) and time.time() < deadline:
    time.sleep(0.1)
time.sleep(0.5)
p.send_signal(signal.SIGINT)
status = p.wait()


def benchmarks_left():
    left = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                args = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
            except OSError:
                continue
            line = b" ".join(args)
            match = os.environ.get("INTERRUPT_MATCH", "").encode()
            ours = (any(a.endswith(b"objective.py") for a in args) and b"--sleep" in args) or (match and match in line)
            if ours and workdir.encode() in line and pid != str(os.getpid()):
                left += 1
    return left


# The benchmarks sleep 30 s: any still there after 5 s were left behind.
deadline = time.time() + 5
while (left := benchmarks_left()) and time.time() < deadline:
    time.sleep(0.05)
sys.stdout.flush()
print(f"benchmark processes left: {left}", flush=True)
sys.exit(0 if status == 0 else 1)
