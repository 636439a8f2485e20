#!/usr/bin/env python3
"""Tuner against random search, by replaying the recorded ground truth.

  bench/replay.py --tuner BIN/ciq-tuner --data bench/data --out bench/results
                  [--seeds 50] [--kernels a,b] [--check]

For every bench/data/KERNEL.csv (one row per recorded sample) and every seed,
`ciq-tuner run --replay` searches at budgets 16, 32 and 64 (and random search
at 64); what each run would ship is then scored by its ground-truth time
(the median of all its recorded samples; the default's when nothing ships).

Writes OUT/summary.csv:
  kernel,default_ms,exhaustive_best_ms,tuned_b16_ms,tuned_b32_ms,tuned_b64_ms,random_b64_ms,noise_pct,evals_to_95
  tuned_bN_ms / random_b64_ms  median over seeds of the shipped set's time
  noise_pct     median over control sets of the samples' IQR / median, %
  evals_to_95   median over seeds (budget 64) of the evaluations after
                which the tuner's best-so-far (by its own noisy measurements)
                is within 5 % of the exhaustive improvement; ">64" if the
                median seed never gets there
and OUT/seeds.csv (every run) and OUT/quality.csv (per kernel, strategy and
budget: share of seeds within 2 % of the best, slower than the default,
shipping nothing, and the median shipped time).

--check exits 1 unless, for every kernel, tuned_b64_ms is within 2 % of
exhaustive_best_ms and not above default_ms (the issue's bar).
"""
import argparse
import concurrent.futures
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

BUDGETS = (16, 32, 64)


def key(controls):
    """A control-set label, order-independent: 'a=1;b=2' -> frozenset."""
    if controls in ("", "default"):
        return frozenset()
    return frozenset(tuple(p.split("=", 1)) for p in controls.split(";") if p)


def load(path):
    samples = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            samples.setdefault(key(row["controls"]), []).append(float(row["ms"]))
    truth = {k: statistics.median(v) for k, v in samples.items()}
    iqr = []
    for v in samples.values():
        if len(v) >= 4:
            q = statistics.quantiles(v, n=4)
            iqr.append((q[2] - q[0]) / statistics.median(v))
    return truth, 100 * statistics.median(iqr)


def run_one(tuner, data, seed, budget, strategy, workdir, tuner_jobs):
    out = os.path.join(workdir, f"{strategy}-b{budget}-s{seed}")
    r = subprocess.run([tuner, "run", "--replay", data, "--budget", str(budget), "--seed", str(seed), "--strategy",
                        strategy, "--jobs", str(tuner_jobs), "--out", out, "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"ciq-tuner failed on {data} seed {seed}: {r.stderr[-2000:]}")
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    shipped = summary["controls"] if summary["verdict"] == "better than the default" else "default"
    trajectory = []
    with open(os.path.join(out, "results.csv")) as f:
        for row in csv.DictReader(f):
            if row["status"] != "invalid":
                trajectory.append((int(row["number"]), row["candidate"], float(row["replay:ms"])))
    shutil.rmtree(out)
    return shipped, summary["evaluations"], trajectory


def evals_to_95(trajectory, truth, default, best):
    target = default - 0.95 * (default - best)
    seen, best_measured, best_key = 0, None, None
    for _, candidate, measured in sorted(trajectory):
        seen += 1
        if best_measured is None or measured < best_measured:
            best_measured, best_key = measured, key(candidate)
        if truth[best_key] <= target:
            return seen
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tuner", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--kernels")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--tuner-jobs", type=int, default=1,
                        help="ciq-tuner --jobs: above 1 the genetic search runs steady-state (no generations)")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    kernels = sorted(f[:-4] for f in os.listdir(args.data) if f.endswith(".csv"))
    if args.kernels:
        kernels = [k for k in kernels if k in args.kernels.split(",")]
    # bench/data also holds tables that are not recorded samples (a live
    # run's summary, e.g. nvvm-stage-2026-12-03.csv): skipped, and said so.
    samples = [k for k in kernels if is_samples(os.path.join(args.data, k + ".csv"))]
    for k in kernels:
        if k not in samples:
            print(f"replay.py: skipping {k}.csv: not recorded samples (no 'controls' and 'ms' columns)", file=sys.stderr)
    kernels = samples
    if not kernels:
        print(f"replay.py: error: no recorded samples in {args.data}", file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="ciq-replay-")
    try:
        return replay_all(args, kernels, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def is_samples(path):
    with open(path, newline="") as f:
        header = next(csv.reader(f), [])
    return "controls" in header and "ms" in header


def replay_all(args, kernels, workdir):
    summary, seeds_rows, quality, failures = [], [], [], []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for kernel in kernels:
            data = os.path.join(args.data, kernel + ".csv")
            truth, noise = load(data)
            default, best = truth[frozenset()], min(truth.values())
            runs = {}
            for strategy, budgets in (("genetic", BUDGETS), ("random", BUDGETS)):
                for b in budgets:
                    for s in range(1, args.seeds + 1):
                        runs[(strategy, b, s)] = pool.submit(run_one, args.tuner, data, s, b, strategy, workdir, args.tuner_jobs)
            shipped_ms = {}
            to95 = []
            for (strategy, b, s), fut in runs.items():
                shipped, evaluations, trajectory = fut.result()
                ms = truth[key(shipped)]
                shipped_ms.setdefault((strategy, b), []).append(ms)
                seeds_rows.append([kernel, strategy, b, s, shipped, f"{ms:.6f}", evaluations])
                if strategy == "genetic" and b == 64:
                    to95.append(evals_to_95(trajectory, truth, default, best))
            med = {k: statistics.median(v) for k, v in shipped_ms.items()}
            reached = sorted(x if x is not None else 10**9 for x in to95)
            e95 = statistics.median_low(reached)
            summary.append([kernel, f"{default:.6f}", f"{best:.6f}"] + [f"{med[('genetic', b)]:.6f}" for b in BUDGETS] +
                           [f"{med[('random', 64)]:.6f}", f"{noise:.2f}", str(e95) if e95 <= 64 else ">64"])
            for strategy, b in sorted(shipped_ms):
                v = shipped_ms[(strategy, b)]
                quality.append([kernel, strategy, b, len(v), f"{sum(x <= 1.02 * best for x in v) / len(v):.2f}",
                                f"{sum(x > default for x in v) / len(v):.2f}", f"{sum(x == default for x in v) / len(v):.2f}",
                                f"{statistics.median(v):.6f}"])
            if med[("genetic", 64)] > 1.02 * best or med[("genetic", 64)] > default:
                failures.append(f"{kernel}: tuned_b64 {med[('genetic', 64)]:.4f} ms, best {best:.4f}, default {default:.4f}")
            print(",".join(summary[-1]), file=sys.stderr)
    with open(os.path.join(args.out, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "default_ms", "exhaustive_best_ms", "tuned_b16_ms", "tuned_b32_ms", "tuned_b64_ms",
                    "random_b64_ms", "noise_pct", "evals_to_95"])
        w.writerows(summary)
    with open(os.path.join(args.out, "seeds.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "strategy", "budget", "seed", "shipped", "ground_truth_ms", "evaluations"])
        w.writerows(seeds_rows)
    with open(os.path.join(args.out, "quality.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "strategy", "budget", "seeds", "within_2pct_of_best", "slower_than_default", "shipped_nothing",
                    "median_ms"])
        w.writerows(quality)
    for line in failures:
        print("FAIL " + line)
    if not failures:
        print(f"PASS {len(kernels)} kernel(s): tuned_b64 within 2 % of the exhaustive best and never above the default")
    return 1 if args.check and failures else 0


if __name__ == "__main__":
    sys.exit(main())
