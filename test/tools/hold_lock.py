#!/usr/bin/env python3
"""Runs a command while another process holds an exclusive flock on a file.

  hold_lock.py FILE SECONDS CMD...

A child process locks FILE (created if missing) and keeps the lock for
SECONDS; meanwhile CMD runs. Prints `status N fast` (or `SLOW T s` when
CMD took more than 3 s), then CMD's stderr; CMD's stdout is passed on.
"""
import fcntl
import subprocess
import sys
import time

path, hold, cmd = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
holder = subprocess.Popen([sys.executable, "-c",
                           "import fcntl, sys, time; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); "
                           "print('locked', flush=True); time.sleep(float(sys.argv[2]))", path, str(hold)],
                          stdout=subprocess.PIPE, text=True)
assert holder.stdout.readline().strip() == "locked"
start = time.time()
r = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
took = time.time() - start
holder.kill()
print("status", r.returncode, "fast" if took < 3 else f"SLOW {took:.1f} s")
print(r.stderr)
