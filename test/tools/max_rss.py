#!/usr/bin/env python3
"""Runs a command and prints whether the largest resident set of it (and of
every process it waited for) stayed under 40 MiB.

  max_rss.py CMD...

Prints `max-rss-under-40-MiB: yes` or `...: no (N KiB)` after CMD's output;
exits with CMD's status."""
import resource
import subprocess
import sys

status = subprocess.run(sys.argv[1:]).returncode
kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
sys.stdout.flush()
print("max-rss-under-40-MiB: " + ("yes" if kib < 40 * 1024 else f"no ({kib} KiB)"), flush=True)
sys.exit(status)
