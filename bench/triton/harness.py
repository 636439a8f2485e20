"""What the Triton programs of ciq's benchmark suite share: a command line,
per-variant builds (ground truth), the correctness check and the timing loop
(L2 flushed with a 256 MiB write before each sample, CUDA events, one launch
per sample, median and IQR/median), like bench/common/bench.h.

A program defines a JIT-able function and a Problem class with
`__init__(seed)`, `launch(kernel)` and `check(kernel)` (None, or why the
answer is wrong), then calls `main(__doc__, function, Problem)`.

  (no options)        check, then `time_ms: M`, `noise_pct: N`, `samples: S`
  --check             check only; exit 1 on a wrong answer
  --samples S         timed samples (default 50)
  --variants DIR      one build per DIR/*.controls (a ciq control set, given
                      to ciq-ptxas as CIQ_CONTROLS; each with its own
                      TRITON_CACHE_DIR under DIR/triton-cache), checked, then
                      timed interleaved; CSV `config,sample,ms`
  --compile-only      with --variants: build (into the per-variant caches)
  --shard I/N         with --variants: only every N-th variant from I
"""
import argparse
import os
import random
import statistics
import sys

import torch
import triton

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ciq_trace  # noqa: E402


class Timer:
    def __init__(self):
        self.flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
        self.start = torch.cuda.Event(enable_timing=True)
        self.stop = torch.cuda.Event(enable_timing=True)

    def sample(self, problem, kernel, round_):
        self.flush.fill_(round_ & 0xFF)
        self.start.record()
        problem.launch(kernel)
        self.stop.record()
        self.stop.synchronize()
        return self.start.elapsed_time(self.stop)


def load_variants(directory, shard):
    names = sorted(f[:-len(".controls")] for f in os.listdir(directory) if f.endswith(".controls"))
    if shard:
        index, count = (int(x) for x in shard.split("/"))
        names = names[index::count]
    return names


def build(function, directory, name):
    """A fresh JIT function to be compiled under this variant's controls,
    Triton cache and ciq trace directory; and whether the variant sets any
    knob."""
    path = os.path.join(directory, name + ".controls")
    with open(path) as f:
        knobs = [line for line in f if "=" in line and not line.startswith(("format", "space"))]
    if knobs:
        os.environ["CIQ_CONTROLS"] = os.path.abspath(path)
    else:
        os.environ.pop("CIQ_CONTROLS", None)
    os.environ["TRITON_CACHE_DIR"] = os.path.abspath(os.path.join(directory, "triton-cache", name))
    os.environ["CIQ_TRACE"] = os.path.abspath(os.path.join(directory, "trace", name))
    return triton.jit(function), bool(knobs)


def resources(kernel):
    """Registers and spills of a JIT function's compiled kernel, when Triton says."""
    try:
        for cache in kernel.device_caches.values():
            for compiled in cache[0].values():
                return f"registers {compiled.n_regs}, spills {compiled.n_spills}"
    except (AttributeError, IndexError, TypeError):
        pass
    return "registers unknown"


def main(doc, function, problem_class):
    parser = argparse.ArgumentParser(description=doc.splitlines()[0], epilog=__doc__.split("\n\n")[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--variants")
    parser.add_argument("--compile-only", action="store_true")
    parser.add_argument("--shard")
    parser.add_argument("--seed", type=int, default=random.SystemRandom().randrange(2**31))
    args = parser.parse_args()
    print(f"seed: {args.seed}", file=sys.stderr)
    problem = problem_class(args.seed)

    if args.variants:
        kernels = []
        for name in load_variants(args.variants, args.shard):
            kernel, has_knobs = build(function, args.variants, name)
            try:
                why = problem.check(kernel)  # compiles (or loads the variant's cache)
            except Exception as e:
                why = f"build failed: {str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__}"
            # A set ptxas refuses makes ciq-ptxas build the default instead:
            # the trace of the compile (kept with the variants) says so.
            refused = ciq_trace.not_applied(os.environ["CIQ_TRACE"]) if has_knobs else None
            if not why and refused:
                why = "controls not applied: " + refused
            if why:
                print(f"WRONG ANSWER ({name}): {why}", file=sys.stderr)
                continue
            cache = os.environ["TRITON_CACHE_DIR"]
            if not os.path.isdir(cache) or not os.listdir(cache):
                # Triton ignored the per-variant cache: variants could share builds.
                print(f"Triton did not use TRITON_CACHE_DIR={cache}", file=sys.stderr)
                return 2
            print(f"{name}: {resources(kernel)}", file=sys.stderr)
            kernels.append((name, kernel))
        os.environ.pop("CIQ_CONTROLS", None)
        os.environ.pop("CIQ_TRACE", None)
        if args.compile_only:
            return 0
    else:
        kernel = triton.jit(function)
        why = problem.check(kernel)
        if why:
            print(f"WRONG ANSWER: {why}", file=sys.stderr)
            return 1
        if args.check:
            print("check: ok")
            return 0
        kernels = [("default", kernel)]

    timer = Timer()
    for _, kernel in kernels:  # warm up
        timer.sample(problem, kernel, 0)
    times = {name: [] for name, _ in kernels}
    order = list(range(len(kernels)))
    shuffle = random.Random(args.seed)
    for round_ in range(args.samples):
        shuffle.shuffle(order)
        for i in order:
            name, kernel = kernels[i]
            times[name].append(timer.sample(problem, kernel, round_ + 1))

    if not args.variants:
        t = times["default"]
        q = statistics.quantiles(t, n=4)
        median = statistics.median(t)
        print(f"time_ms: {median:.6f}\nnoise_pct: {100 * (q[2] - q[0]) / median:.3f}\nsamples: {len(t)}")
        return 0
    print("config,sample,ms")
    for name, _ in kernels:
        for s, ms in enumerate(times[name]):
            print(f"{name},{s},{ms:.6f}")
    return 0
