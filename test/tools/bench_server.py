#!/usr/bin/env python3
"""A resident benchmark stand-in for ciq-tuner --bench-server.

  bench_server.py LOG [--startup S] [--chatty MIB]

Sleeps S seconds first (a slow start-up) if asked; appends "start <pid> gpu=<CUDA_VISIBLE_DEVICES>" to LOG when it starts, then
answers requests on stdin (one option per line, an empty line ends each), with --chatty writing MIB MiB of
progress lines to stderr before each answer:

  --x N        prints f=<(N-7)^2 + 1> (the best is N = 7), status 0
  --check N    prints check: ok, status 0; with N = 9 a wrong answer, status 1
  --crash N    with N = 3: exits (status 3) without answering
  --hang N     with N = 5: never answers
  --garble N   with N = 11: answers "ciq-status: ID maybe"

Each answer ends with a line `ciq-status: ID S`; every request is appended to
LOG as "request <pid> <options...>".

  bench_server.py --summary LOG

prints the GPUs used, whether at most 5 servers started, whether one
answered at least 4 requests, whether each failing request was its
server's last, and the number of requests.

  bench_server.py --alive LOG

prints how many of the servers LOG says started are still running.
"""
import os
import sys
import time

from server_requests import requests, status_line

if sys.argv[1] == "--summary":
    rows = [line.split() for line in open(sys.argv[2])]
    starts = [r for r in rows if r[0] == "start"]
    requests = [r for r in rows if r[0] == "request"]
    per_pid = {}
    for r in requests:
        per_pid.setdefault(r[1], []).append(r[2:])
    failing = {"--crash": "3", "--hang": "5", "--garble": "11"}
    retired = all(
        reqs[-1] == req
        for reqs in per_pid.values()
        for req in reqs
        if any(dict(zip(req[::2], req[1::2])).get(k) == v for k, v in failing.items())
    )
    gpus = sorted({r[2].split("=")[1] for r in starts})
    print(f"gpus {','.join(gpus)} starts<=5 {len(starts) <= 5} "
          f"most-per-server>=4 {max(len(v) for v in per_pid.values()) >= 4} "
          f"failed-then-retired {retired} requests {len(requests)}")
    sys.exit(0)

if sys.argv[1] == "--alive":
    alive = 0
    for r in (line.split() for line in open(sys.argv[2])):
        try:
            state = open(f"/proc/{r[1]}/stat").read().rsplit(")", 1)[1].split()[0] if r[0] == "start" else "Z"
        except OSError:
            state = "Z"
        alive += state != "Z"
    print(f"servers alive: {alive}")
    sys.exit(0)

log_path = sys.argv[1]


def log(line):
    with open(log_path, "a") as f:
        f.write(line + "\n")


log(f"start {os.getpid()} gpu={os.environ.get('CUDA_VISIBLE_DEVICES', '')}")
if "--startup" in sys.argv:  # a slow start (imports, inputs) before any answer
    time.sleep(float(sys.argv[sys.argv.index("--startup") + 1]))
chatty = int(sys.argv[sys.argv.index("--chatty") + 1]) if "--chatty" in sys.argv else 0
for n, (request_id, args) in enumerate(requests()):
    log(f"request {os.getpid()} " + " ".join(args))
    for line in range(chatty * 16384):  # 64-byte lines
        sys.stderr.write(f"progress {n:6} {line:9} " + "." * 37 + "\n")
    sys.stderr.flush()
    opts = dict(zip(args[::2], args[1::2]))
    status = 0
    if opts.get("--crash") == "3":
        sys.exit(3)
    if opts.get("--hang") == "5":
        time.sleep(3600)
    if opts.get("--garble") == "11":
        print(status_line(request_id, "maybe"), flush=True)
        continue
    if "--check" in opts:
        status = 1 if opts["--check"] == "9" else 0
        print("check: ok" if status == 0 else "WRONG ANSWER: 9 is not allowed")
    if "--x" in opts:
        x = int(opts["--x"])
        print(f"f={(x - 7) ** 2 + 1}")
    print(status_line(request_id, status), flush=True)
