#!/usr/bin/env python3
"""A resident benchmark (--bench-server) that breaks the protocol once.

  hostile_server.py MODE STATE

answers `--x N` with f=<(N - 7)^2 + 1> (the best is N = 7), like
bench_server.py, and appends "start <pid>" and "request <pid> N" to STATE.
The first server to reach its 4th request (STATE.struck marks it) breaks
the protocol there, in MODE:

  twice   answers that request, and at once again with f=0 (one write)
  stale   answers it; answers the next request with that answer again
          (f=0 and the earlier request's id), then with its own
  orphan  starts a child that keeps stdout open for 60 s (its pid goes
          to STATE as "orphan <pid>"), and exits (status 3) unanswered
  quits   answers it, and 2 s later exits (status 0) on its own, without
          reading another request: the next one may be sent before it is gone

In MODE `old` it speaks the protocol before request ids: every status line
is `ciq-status: 0`, without the request's id.

  hostile_server.py --alive STATE

prints whether the orphan still runs.
"""
import os
import subprocess
import sys
import time

from server_requests import requests, status_line

if sys.argv[1] == "--alive":
    pids = [line.split()[1] for line in open(sys.argv[2]) if line.startswith("orphan ")]
    alive = []
    for pid in pids:
        try:
            state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.append(pid)
    print(f"orphans {len(pids)} alive {len(alive)}")
    sys.exit(0)

mode, state = sys.argv[1], sys.argv[2]


def log(line):
    with open(state, "a") as f:
        f.write(line + "\n")


def strike():
    """True for the first server that gets here: it misbehaves, once."""
    try:
        os.close(os.open(state + ".struck", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        return False


log(f"start {os.getpid()}")
stale = None
quitting = False
for count, (request_id, words) in enumerate(requests(), 1):
    x = int(words[words.index("--x") + 1])
    log(f"request {os.getpid()} {x}")
    answer = f"f={(x - 7) ** 2 + 1}\n{status_line(None if mode == 'old' else request_id, 0)}\n"
    if stale:
        answer, stale = stale + answer, None
    elif count == 4 and strike():
        if mode == "twice":
            answer += f"f=0\n{status_line(request_id, 0)}\n"
        elif mode == "stale":
            stale = f"f=0\n{status_line(request_id, 0)}\n"
        elif mode == "orphan":
            child = subprocess.Popen(["sleep", "60"])  # inherits stdout
            log(f"orphan {child.pid}")
            sys.exit(3)
        elif mode == "quits":
            quitting = True
    sys.stdout.write(answer)
    sys.stdout.flush()
    if quitting:
        log(f"quits {os.getpid()}")
        time.sleep(2)
        sys.exit(0)
