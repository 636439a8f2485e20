#!/usr/bin/env python3
"""What a `ciq-tuner run --separately` did, as lines a lit test can check:
how many program runs it cost against its evaluations, and, per kernel of
its summary, whether what it chose is the lowest own time of that kernel
in the search's runs.

  separately_facts.py RUN_DIR RUNS_FILE [VERIFY_RUNS]

RUNS_FILE is what test/tools/fake_register_program.py appended, one line
per kernel per program run. Prints:
  program runs: N = M measured evaluations + V verification runs: yes|no
  KERNEL: shipped yes|no, chose CONTROLS, its lowest own time in the search: yes|no
  distinct choices: yes|no   (the kernels chose different maxnreg values)
"""
import json
import os
import statistics
import sys

run_dir, runs_file = sys.argv[1], sys.argv[2]
verify_runs = int(sys.argv[3]) if len(sys.argv) > 3 else 2
lines = [line.split() for line in open(runs_file) if line.strip()]
kernels_per_run = len({k for k, _ in lines})
program_runs = len(lines) // kernels_per_run
journal = [json.loads(line) for line in open(os.path.join(run_dir, "journal.jsonl")) if line.strip()]
measured = sum(1 for r in journal if r["status"] == "ok")
summary = json.load(open(os.path.join(run_dir, "summary.json")))
verified = 2 * verify_runs if summary["p_value"] is not None else 0
ok = program_runs == measured + verified
print(f"program runs: {program_runs} = {measured} measured evaluations + {verified} verification runs: {'yes' if ok else 'no'}")


def part(candidate, kernel):
    """The kernel's own knobs in a canonical candidate, as text."""
    if candidate == "default":
        return "default"
    mine = [g for g in candidate.split(";") if g.startswith(kernel + ":")]
    return ";".join(mine) if mine else "default"


chosen = []
for k in summary.get("kernels", []):
    name = k["kernel"]
    times = {}
    for r in journal:
        if r["valid"] and name in r.get("kernel_samples", {}):
            times.setdefault(part(r["candidate"], name), []).extend(r["kernel_samples"][name])
    lowest = min(statistics.median(v) for v in times.values())
    found = k["controls"] if k["shipped"] else None
    best_of_search = found is None or statistics.median(times[found]) == lowest
    print(f"{name}: shipped {'yes' if k['shipped'] else 'no'}, chose {k['controls']}, its lowest own time in the search: "
          f"{'yes' if best_of_search else 'no'}")
    chosen.append(k["controls"].split("=")[-1])
print(f"distinct choices: {'yes' if len(set(chosen)) == len(chosen) else 'no'}")
