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

--gpu-util CSV (nvidia-smi --query-gpu=timestamp,index,utilization.gpu
--format=csv,noheader,nounits, as bench/gpu/live.sh records it, or without
the index column as it did before; run on the machine that wrote it, whose
local time its timestamps are in) adds each GPU's utilisation over the
search itself: from the first evaluation finishing to the last, without the
discovery build, verification and shipping around it.
"""
import json
import os
import sys
import time
from datetime import datetime


def gpu_busy(csv_path, start, end):
    """Per GPU index: mean utilisation (%) of the samples taken in [start, end]
    (Unix times), and their number."""
    values = {}
    with open(csv_path) as f:
        for line in f:
            fields = line.strip().split(", ")
            stamp, gpu, util = (fields[0], "0", fields[-1]) if len(fields) == 2 else (fields[0], fields[1], fields[-1])
            try:
                parsed = datetime.strptime(stamp, "%Y/%m/%d %H:%M:%S.%f")
                t = time.mktime(parsed.timetuple()) + parsed.microsecond / 1e6
                if start <= t <= end:
                    values.setdefault(gpu, []).append(float(util))
            except (ValueError, IndexError):
                continue
    return {g: (sum(v) / len(v), len(v)) for g, v in sorted(values.items())}


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
        busy = gpu_busy(gpu_util, finished[0], finished[-1])
        if not busy:
            line += "; no GPU samples in the search"
        for gpu, (mean, n) in busy.items():
            line += f"; GPU {gpu} busy during the search {mean:.1f} % ({n} samples)"
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
