#!/usr/bin/env python3
"""Runs a command while another process holds an exclusive flock on a file.

  hold_lock.py FILE SECONDS CMD...

A child process locks FILE (created if missing) and keeps the lock for
SECONDS; meanwhile CMD runs, its streams passed on. Exits with CMD's status.
Time CMD with elapsed.py (hold_lock.py FILE S elapsed.py LIMIT CMD...).
"""
import subprocess
import sys

path, hold, cmd = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
holder = subprocess.Popen([sys.executable, "-c",
                           "import fcntl, sys, time; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); "
                           "print('locked', flush=True); time.sleep(float(sys.argv[2]))", path, str(hold)],
                          stdout=subprocess.PIPE, text=True)
assert holder.stdout.readline().strip() == "locked"
status = subprocess.run(cmd).returncode
holder.kill()
sys.exit(status)
