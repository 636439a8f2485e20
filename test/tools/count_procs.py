#!/usr/bin/env python3
"""Prints how many processes have every given string in their command line
(this one and its parent aside), waiting up to 10 s for the count to reach 0.

  count_procs.py STRING..."""
import os
import sys
import time

needles = [s.encode() for s in sys.argv[1:]]
skip = {str(os.getpid()), str(os.getppid())}


def count():
    n = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid in skip:
            continue
        try:
            cmdline = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ")
        except OSError:
            continue
        n += all(s in cmdline for s in needles)
    return n


deadline = time.time() + 10
while (n := count()) and time.time() < deadline:
    time.sleep(0.1)
print(n)
