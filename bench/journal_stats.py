#!/usr/bin/env python3
"""Evaluations per minute of ciq-tuner runs, from their journals.

  bench/journal_stats.py [--gpu-util CSV] RUN_DIR_OR_JOURNAL...

For each run: the evaluations in the journal, the time from the first to
the last one finishing (the journal's `finished` Unix times), the rate over
those intervals (and its inverse, seconds per evaluation), the mean build
and benchmark seconds per evaluation (and of the latter, the wait for a
free GPU), and the mean number of nvcc steps
ciq-nvcc reused from the step memo per build.
Journals written before `finished` existed are reported as such.

--gpu-util CSV (nvidia-smi --query-gpu=timestamp,utilization.gpu
--format=csv,noheader,nounits, as bench/gpu/live.sh records it; run on the
machine that wrote it, whose local time its timestamps are in) adds the GPU
utilisation over the search itself: from the first evaluation finishing to
the last, without the discovery build, verification and shipping around it.
"""
import json
import os
import sys
import time
from datetime import datetime


def gpu_busy(csv_path, start, end):
    """Mean utilisation (%) of the samples taken in [start, end] (Unix times)."""
    values = []
    with open(csv_path) as f:
        for line in f:
            stamp, _, util = line.strip().rpartition(", ")
            try:
                t = time.mktime(datetime.strptime(stamp, "%Y/%m/%d %H:%M:%S.%f").timetuple())
                t += datetime.strptime(stamp, "%Y/%m/%d %H:%M:%S.%f").microsecond / 1e6
                if start <= t <= end:
                    values.append(float(util))
            except ValueError:
                continue
    return (sum(values) / len(values), len(values)) if values else (None, 0)


def stats(path, gpu_util=None):
    if os.path.isdir(path):
        path = os.path.join(path, "journal.jsonl")
    with open(path) as f:
        entries = [json.loads(line) for line in f if line.strip()]
    if not entries:
        return f"{path}: empty journal"
    finished = sorted(e["finished"] for e in entries if "finished" in e)
    build = sum(e.get("build_s", 0) for e in entries) / len(entries)
    bench = sum(e.get("bench_s", 0) for e in entries) / len(entries)
    line = f"{path}: {len(entries)} evaluations, mean build {build:.2f} s, mean benchmark {bench:.2f} s"
    if any("gpu_wait_s" in e for e in entries):
        wait = sum(e.get("gpu_wait_s", 0) for e in entries) / len(entries)
        line += f" (of it {wait:.2f} s waiting for the GPU)"
    if any("steps_reused" in e for e in entries):
        reused = sum(e.get("steps_reused", 0) for e in entries) / len(entries)
        ran = sum(e.get("steps_run", 0) for e in entries) / len(entries)
        line += f", nvcc steps per build {ran:.1f} run + {reused:.1f} reused"
    if len(finished) < 2:
        return line + "; no `finished` times (an older journal)"
    span = finished[-1] - finished[0]
    rate = (len(finished) - 1) / span * 60 if span > 0 else float("inf")
    line += f"; first to last {span:.1f} s, {rate:.1f} evaluations/min ({60 / rate:.2f} s/evaluation)"
    if gpu_util:
        busy, n = gpu_busy(gpu_util, finished[0], finished[-1])
        line += f"; GPU busy during the search {busy:.1f} % ({n} samples)" if busy is not None else "; no GPU samples in the search"
    return line


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) > 1 else 2
    args = sys.argv[1:]
    gpu_util = None
    if args[0] == "--gpu-util":
        gpu_util, args = args[1], args[2:]
    for p in args:
        print(stats(p, gpu_util))
    return 0


if __name__ == "__main__":
    sys.exit(main())
