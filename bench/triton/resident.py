#!/usr/bin/env python3
"""The suite's Triton kernels tuned inside one long-lived Python process
(issue 27): ciq.tune with this process as ciq-tuner's resident benchmark
server. Inputs, the L2 flush buffer and compiled kernels stay between
candidates; each control set gets its own Triton caches
(ciq.triton_caches.TritonCaches), so a new candidate recompiles through
ciq-ptxas and one compiled before is reused.

  PYTHONPATH=tuner/python TRITON_PTXAS_PATH=ciq-ptxas CIQ_REAL_PTXAS=.../ptxas \\
    python3 bench/triton/resident.py matmul --budget 40 --out DIR [--configs]

The objective is the median of --samples timed launches (L2 flushed before
each, CUDA events: bench/triton/harness.py's Timer), after one untimed
launch; the check is the program's own. --configs also tunes the launch
configuration (matmul: num_warps, num_stages, BLOCK_K) next to the ptxas
knobs. Prints the tuner's progress on stderr and one JSON line on stdout:
evaluations, seconds, seconds per evaluation, compiles, verdict, shipped,
best and default values, the winner's knobs and parameters.
"""
import argparse
import importlib
import json
import os
import statistics
import sys
import time

import torch
import triton

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402

import ciq  # noqa: E402  (PYTHONPATH=tuner/python)
from ciq.triton_caches import TritonCaches  # noqa: E402

KERNELS = {"matmul": "matmul_kernel", "attention": "attn_fwd", "histogram": "histogram_kernel"}
CONFIGS = {"matmul": {"num_warps": ciq.Choice(4, 8, default=8), "num_stages": ciq.Choice(2, 3, 4, 5, default=3),
                      "BLOCK_K": ciq.Choice(32, 64, default=64)}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("program", choices=sorted(KERNELS))
    parser.add_argument("--budget", type=int, default=40)
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--verify-runs", type=int, default=8)
    parser.add_argument("--configs", action="store_true", help="tune the launch configuration too")
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-ship", action="store_true")
    args = parser.parse_args()

    module = importlib.import_module(args.program)
    problem = module.Problem(args.seed)
    kernel = triton.jit(getattr(module, KERNELS[args.program]))
    caches = TritonCaches([kernel])
    timer = harness.Timer()
    defaults = dict(getattr(problem, "config", {}))
    params = CONFIGS.get(args.program, {}) if args.configs else {}
    if params and not defaults:
        parser.error(f"{args.program} has no launch configuration to tune")
    compiles = []

    def configure(c):
        if defaults:
            problem.config = {**defaults, **{k: v for k, v in c.params.items() if k in defaults}}

    def build(c):
        configure(c)
        started = time.perf_counter()
        problem.launch(kernel)
        torch.cuda.synchronize()
        compiles.append(time.perf_counter() - started)

    def objective(c):
        configure(c)
        timer.sample(problem, kernel, 0)
        return statistics.median(timer.sample(problem, kernel, i + 1) for i in range(args.samples))

    def check(c):
        configure(c)
        why = problem.check(kernel)
        if why:
            raise AssertionError(why)
        return True

    started = time.perf_counter()
    result = ciq.tune(objective, space="ptxas-13", params=params, budget=args.budget, check=check, compile=build,
                      caches=[caches], verify_runs=args.verify_runs, seed=args.seed, out=args.out,
                      ship=not args.no_ship)
    seconds = time.perf_counter() - started
    measured = [r for r in result.rows if r["status"] == "ok"]
    print(json.dumps({
        "program": args.program, "configs": args.configs, "evaluations": len(result.rows),
        "measured": len(measured), "seconds": round(seconds, 1),
        "seconds_per_evaluation": round(seconds / max(1, len(result.rows)), 3),
        "compiles": len(compiles), "compile_seconds_median": round(statistics.median(compiles), 3) if compiles else None,
        "verdict": result.verdict, "shipped": result.shipped, "default_ms": result.baseline, "best_ms": result.best,
        "best_knobs": result.best_knobs, "best_params": result.best_params, "run_dir": result.run_dir,
        "not_measured": sorted({r["reason"] for r in result.rows if r["status"] != "ok"})[:5]}))
    return 0 if result.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
