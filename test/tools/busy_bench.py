#!/usr/bin/env python3
"""A benchmark stand-in that holds "the GPU" for a while and logs it.

  busy_bench.py LOG X  -> sleeps 0.2 s, appends "<CUDA_VISIBLE_DEVICES> <start> <end>"
                          to LOG, prints f=<X>
  busy_bench.py --check LOG  -> exits 1 if two intervals on one GPU overlap,
                          prints how many GPUs were used and the most
                          benchmarks that ran at once
"""
import fcntl
import os
import sys
import time

if sys.argv[1] == "--check":
    rows = [line.split() for line in open(sys.argv[2])]
    spans = [(r[0], float(r[1]), float(r[2])) for r in rows]
    for i, (g, s, e) in enumerate(spans):
        for g2, s2, e2 in spans[i + 1:]:
            if g == g2 and s < e2 and s2 < e:
                sys.exit(f"overlap on GPU {g}")
    points = sorted([(s, 1) for _, s, _ in spans] + [(e, -1) for _, _, e in spans])
    most = now = 0
    for _, d in points:
        now += d
        most = max(most, now)
    print(f"gpus={len({g for g, _, _ in spans})} most_at_once={most} runs={len(spans)}")
    sys.exit(0)

log, x = sys.argv[1], sys.argv[2]
start = time.time()
time.sleep(0.2)
end = time.time()
with open(log, "a") as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    f.write(f"{os.environ.get('CUDA_VISIBLE_DEVICES', '-')} {start} {end}\n")
print(f"f={x}")
