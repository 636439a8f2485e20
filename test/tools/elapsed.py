#!/usr/bin/env python3
"""Runs a command and says whether it finished within a time limit.

  elapsed.py MAX_SECONDS CMD...

CMD's streams are passed on; then prints `within MAX_SECONDS s (T s)` or
`took T s, over MAX_SECONDS s`. Exits with CMD's status.
"""
import subprocess
import sys
import time

limit, cmd = float(sys.argv[1]), sys.argv[2:]
start = time.monotonic()
status = subprocess.run(cmd).returncode
took = time.monotonic() - start
sys.stdout.flush()
print(f"within {sys.argv[1]} s ({took:.2f} s)" if took <= limit else f"took {took:.2f} s, over {sys.argv[1]} s", flush=True)
sys.exit(status)
