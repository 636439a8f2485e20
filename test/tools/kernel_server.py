#!/usr/bin/env python3
"""A resident benchmark stand-in for --bench-server with --objective
kernel-time, for machines without a GPU: it answers requests as
bench_server.py does and speaks libciq-inject's control protocol itself
(CIQ_KERNEL_CONTROL: `cut DIR` writes the kernels "launched" since the last
cut to DIR/kernels-<pid>.jsonl; the first process takes <fifo>.lock), as
fake_kernel_program.py stands in for the library in a process per run.

  kernel_server.py [--no-listen] [--quit-after S]

At start-up it launches `_Z6targetPf` for 1000 ms (a warm-up). Requests:
  --x N      target ((N - 7)^2 + 1) ms over 4 launches, `_Z5otherPf` 50 ms; prints "done"
  --check N  target once, 500 ms; prints "check: ok"
Each answer ends with `ciq-status: ID 0`. --no-listen ignores the control
FIFO (a server whose CUDA never started): nothing is ever cut.
--quit-after S exits (status 0) S seconds after each --x answer: a
server that starts afresh for every request, its start-up in each.
"""
import fcntl
import json
import os
import sys
import threading
import time

from server_requests import requests, status_line

lock = threading.Lock()
launches = []  # (name, demangled, ns)


def launch(name, demangled, total_ms, count):
    with lock:
        launches.extend((name, demangled, int(total_ms * 1e6 / count)) for _ in range(count))


def cut(directory):
    with lock:
        taken = list(launches)
        launches.clear()
    kernels = {}
    for name, demangled, ns in taken:
        kernels.setdefault((name, demangled), []).append(ns)
    lines = [{"ciq_kernel_trace": 1, "pid": os.getpid(), "exe": sys.executable, "status": "ok", "reason": "",
              "dropped_launches": 0, "dropped_records": 0, "incomplete_records": 0, "module_identity": "ok"}]
    for (name, demangled), ns in kernels.items():
        lines.append({"kernel": name, "demangled": demangled, "device": 0, "grid": [1, 1, 1], "block": [1, 1, 1],
                      "dynamic_smem": 0, "static_smem": 0, "registers": 32, "local_bytes": 0, "launches": len(ns),
                      "total_ns": sum(ns), "min_ns": min(ns), "max_ns": max(ns), "first_start_ns": 1,
                      "last_end_ns": 1 + sum(ns), "durations_ns": ns, "code_xxh128": "", "module": -1})
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"kernels-{os.getpid()}.jsonl")
    with open(os.path.join(directory, ".tmp"), "w") as f:
        f.write("".join(json.dumps(line) + "\n" for line in lines))
    os.rename(os.path.join(directory, ".tmp"), path)


def take_channel(fifo):
    """The FIFO opened before the program answers anything, as the library
    opens it inside cuInit: the tuner's first cut must find a reader."""
    holder = open(fifo + ".lock", "a")
    try:
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return None
    return holder, os.open(fifo, os.O_RDWR)


def listen(fd):
    pending = b""
    while True:
        data = os.read(fd, 4096)
        if not data:
            return
        pending += data
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            if line.startswith(b"cut /"):
                cut(line[4:].decode())


control = os.environ.get("CIQ_KERNEL_CONTROL", "")
channel = take_channel(control) if control and "--no-listen" not in sys.argv else None
if channel:
    threading.Thread(target=listen, args=(channel[1],), daemon=True).start()
launch("_Z6targetPf", "target(float*)", 1000, 1)  # start-up

for request_id, request in requests():
    if request[:1] == ["--x"]:
        x = float(request[1])
        launch("_Z6targetPf", "target(float*)", (x - 7) ** 2 + 1, 4)
        launch("_Z5otherPf", "other(float*)", 50, 2)
        print("done")
        if "--quit-after" in sys.argv:
            print(status_line(request_id, 0), flush=True)
            time.sleep(float(sys.argv[sys.argv.index("--quit-after") + 1]))
            sys.exit(0)
    elif request[:1] == ["--check"]:
        launch("_Z6targetPf", "target(float*)", 500, 1)
        print("check: ok")
    print(status_line(request_id, 0), flush=True)
