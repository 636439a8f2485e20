#!/usr/bin/env python3
"""Evaluations per minute of ciq-tuner runs, from their journals.

  bench/journal_stats.py RUN_DIR_OR_JOURNAL...

For each run: the evaluations in the journal, the time from the first to
the last one finishing (the journal's `finished` Unix times), the rate over
those intervals (and its inverse, seconds per evaluation), the mean build
and benchmark seconds per evaluation (and of the latter, the wait for a
free GPU), and the mean number of nvcc steps
ciq-nvcc reused from the step memo per build.
Journals written before `finished` existed are reported as such.
"""
import json
import os
import sys


def stats(path):
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
    return line + f"; first to last {span:.1f} s, {rate:.1f} evaluations/min ({60 / rate:.2f} s/evaluation)"


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) > 1 else 2
    for p in sys.argv[1:]:
        print(stats(p))
    return 0


if __name__ == "__main__":
    sys.exit(main())
