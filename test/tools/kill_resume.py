#!/usr/bin/env python3
"""SIGKILL-and-resume of ciq-tuner at random points: starts a run, kills its
whole process group after a random delay, resumes it, and again, until a
resume finishes; then checks the journal: every evaluation number once,
numbers 0..N-1 without a gap, no candidate measured twice, N equal to the
budget, and a summary written.

  kill_resume.py --seed S --rounds R --work DIR -- TUNER run ... --out DIR/run

Prints one line: kills, evaluations, and what was wrong (nothing, if all is
well); exits 1 on any problem.
"""
import json
import os
import random
import signal
import subprocess
import sys
import time

argv = sys.argv[1:]
sep = argv.index("--")
opts, cmd = argv[:sep], argv[sep + 1:]
seed = int(opts[opts.index("--seed") + 1])
rounds = int(opts[opts.index("--rounds") + 1])
run_dir = cmd[cmd.index("--out") + 1]
budget = int(cmd[cmd.index("--budget") + 1])
rnd = random.Random(seed)
kills = 0
first = True
for attempt in range(rounds + 50):
    args = cmd if first else [cmd[0], "run", "--resume", run_dir]
    first = False
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    if kills < rounds:
        delay = rnd.uniform(0.05, 1.2)
        try:
            p.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            kills += 1
            continue
    else:
        p.wait(timeout=600)
    if os.path.exists(os.path.join(run_dir, "summary.json")):
        break

problems = []
numbers, candidates = [], []
with open(os.path.join(run_dir, "journal.jsonl")) as f:
    for line in f:
        try:
            r = json.loads(line)
        except ValueError:
            problems.append("a journal line that is not JSON (a torn write kept)")
            continue
        numbers.append(r["n"])
        candidates.append(r["candidate"])
if len(set(numbers)) != len(numbers):
    problems.append("duplicated evaluation numbers")
if sorted(numbers) != list(range(len(numbers))):
    problems.append(f"evaluation numbers with gaps: {sorted(set(range(max(numbers) + 1)) - set(numbers))}")
if len(set(candidates)) != len(candidates):
    problems.append("a candidate evaluated twice")
if len(numbers) != budget:
    problems.append(f"{len(numbers)} evaluations for a budget of {budget}")
if not os.path.exists(os.path.join(run_dir, "summary.json")):
    problems.append("no summary: the run never finished")
print(f"kill-resume: {kills} kills, {len(numbers)} evaluations; problems: {'; '.join(problems) or 'none'}")
sys.exit(1 if problems else 0)
