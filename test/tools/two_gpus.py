#!/usr/bin/env python3
"""A benchmark on two GPUs of which one is slower, for per-GPU baselines.

  two_gpus.py LOG X    -> prints t=<ms>: 100 ms, 97 ms for X >= 7 (the code
                          that is really faster), times 1.06 on GPU "1" (the
                          slower card: CUDA_VISIBLE_DEVICES), +-0.2 % noise;
                          appends "<gpu> <X>" to LOG
  two_gpus.py --best JOURNAL  -> the search's best candidate (lowest value
                          of the first objective, the default left out): its
                          X, whether it is really faster, the GPUs it ran on
  two_gpus.py --spread JOURNAL -> the largest and smallest value among the
                          candidates that are not really faster, as a ratio,
                          and whether every one of them measured on GPU 0
                          came out ahead of every one measured on GPU 1
"""
import fcntl
import json
import random
import sys
import os
import time


def records(path):
    out = []
    for line in open(path):
        r = json.loads(line)
        if r["status"] != "ok" or r["candidate"].endswith("x=1"):
            continue
        x = int(r["candidate"].split("=")[1])
        out.append((r["objectives"][0], x, sorted(set(r.get("run_gpus", [])))))
    return out


if sys.argv[1] == "--best":
    value, x, gpus = min(records(sys.argv[2]))
    print(f"best x={x} faster={x >= 7} gpus={','.join(gpus)}")
    sys.exit(0)
if sys.argv[1] == "--spread":
    same = [r for r in records(sys.argv[2]) if r[1] < 7]
    values = [v for v, _, _ in same]
    on0 = [v for v, _, g in same if g == ["0"]]
    on1 = [v for v, _, g in same if g == ["1"]]
    ahead = bool(on0) and bool(on1) and max(on0) < min(on1)
    print(f"spread={max(values) / min(values):.3f} gpu0-ahead={ahead}")
    sys.exit(0)

log, x = sys.argv[1], int(sys.argv[2])
gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "")
time.sleep(0.1)
t = (97.0 if x >= 7 else 100.0) * (1.06 if gpu == "1" else 1.0) * random.uniform(0.998, 1.002)
with open(log, "a") as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    f.write(f"{gpu} {x}\n")
print(f"t={t:.4f}")
