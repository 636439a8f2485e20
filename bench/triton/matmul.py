#!/usr/bin/env python3
"""The Triton kernel of ciq's benchmark suite: C = A @ B, fp16 in, fp32
accumulate, fp16 out, M = N = K = 4096, checked against a float64 CPU
reference on sampled rows, timed like bench/common/bench.h (L2 flushed with
a 256 MiB write before each sample, CUDA events, one launch per sample).

Run it with ciq's ptxas wrapper:
  TRITON_PTXAS_PATH=ciq-ptxas CIQ_REAL_PTXAS=/usr/local/cuda/bin/ptxas \\
  TRITON_ALWAYS_COMPILE=1 python3 bench/triton/matmul.py

  (no options)        check, then `time_ms: M`, `noise_pct: N`, `samples: S`
  --check             check only; exit 1 on a wrong answer
  --samples S         timed samples (default 50)
  --variants DIR      ground truth: one build per DIR/*.controls (a ciq
                      control set, given to ciq-ptxas as CIQ_CONTROLS; each
                      with its own TRITON_CACHE_DIR under DIR/triton-cache),
                      checked, then timed interleaved; CSV `config,sample,ms`
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
import triton.language as tl

M = N = K = 4096
BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M = 128, 128, 64, 8


def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = pid // (GROUP_M * num_n)
    first_m = group * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % size_m)
    pid_n = (pid % (GROUP_M * num_n)) // size_m
    rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    rk = tl.arange(0, BLOCK_K)
    a = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        acc = tl.dot(tl.load(a), tl.load(b), acc)
        a += BLOCK_K * stride_ak
        b += BLOCK_K * stride_bk
    cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + cm[:, None] * stride_cm + cn[None, :] * stride_cn, acc.to(tl.float16))


class Problem:
    def __init__(self, seed):
        gen = torch.Generator().manual_seed(seed)
        self.a = (torch.rand(M, K, generator=gen) * 2 - 1).half()
        self.b = (torch.rand(K, N, generator=gen) * 2 - 1).half()
        self.da, self.db = self.a.cuda(), self.b.cuda()
        self.dc = torch.empty(M, N, dtype=torch.float16, device="cuda")
        self.flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
        self.start = torch.cuda.Event(enable_timing=True)
        self.stop = torch.cuda.Event(enable_timing=True)

    def launch(self, kernel):
        grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
        kernel[grid](self.da, self.db, self.dc, M, N, K, self.da.stride(0), self.da.stride(1), self.db.stride(0),
                     self.db.stride(1), self.dc.stride(0), self.dc.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                     BLOCK_K=BLOCK_K, GROUP_M=GROUP_M, num_warps=8, num_stages=3)

    def check(self, kernel):
        self.dc.zero_()
        self.launch(kernel)
        torch.cuda.synchronize()
        got = self.dc.cpu().double()
        rows = random.Random(29).sample(range(M), 64)
        want = self.a[rows].double() @ self.b.double()
        err = (got[rows] - want).abs()
        # fp32 accumulation, fp16 output: half an fp16 ulp of the result plus
        # the accumulation error.
        tol = want.abs() * 2.0 ** -10 + 1e-2
        bad = (err > tol).nonzero()
        if bad.numel():
            r, c = bad[0].tolist()
            return f"C[{rows[r]}][{c}] = {got[rows[r], c].item()}, want {want[r, c].item()}"
        return None

    def sample(self, kernel, round_):
        self.flush.fill_(round_ & 0xFF)
        self.start.record()
        self.launch(kernel)
        self.stop.record()
        self.stop.synchronize()
        return self.start.elapsed_time(self.stop)


def load_variants(directory, shard):
    names = sorted(f[:-len(".controls")] for f in os.listdir(directory) if f.endswith(".controls"))
    if shard:
        index, count = (int(x) for x in shard.split("/"))
        names = names[index::count]
    return names


def build(directory, name):
    """A fresh JIT function compiled under this variant's controls and cache."""
    path = os.path.join(directory, name + ".controls")
    with open(path) as f:
        knobs = [line for line in f if "=" in line and not line.startswith(("format", "space"))]
    if knobs:
        os.environ["CIQ_CONTROLS"] = os.path.abspath(path)
    else:
        os.environ.pop("CIQ_CONTROLS", None)
    os.environ["TRITON_CACHE_DIR"] = os.path.abspath(os.path.join(directory, "triton-cache", name))
    return triton.jit(matmul_kernel)


def resources(kernel):
    """Registers and spills of a JIT function's compiled kernel, when Triton says."""
    try:
        for cache in kernel.device_caches.values():
            for compiled in cache[0].values():
                return f"registers {compiled.n_regs}, spills {compiled.n_spills}"
    except (AttributeError, IndexError, TypeError):
        pass
    return "registers unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--variants")
    parser.add_argument("--compile-only", action="store_true")
    parser.add_argument("--shard")
    parser.add_argument("--seed", type=int, default=random.SystemRandom().randrange(2**31))
    args = parser.parse_args()
    print(f"seed: {args.seed}", file=sys.stderr)
    problem = Problem(args.seed)

    if args.variants:
        names = load_variants(args.variants, args.shard)
        kernels = []
        for name in names:
            kernel = build(args.variants, name)
            why = problem.check(kernel)  # compiles (or loads the variant's cache)
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
        if args.compile_only:
            return 0
    else:
        kernel = triton.jit(matmul_kernel)
        why = problem.check(kernel)
        if why:
            print(f"WRONG ANSWER: {why}", file=sys.stderr)
            return 1
        if args.check:
            print("check: ok")
            return 0
        kernels = [("default", kernel)]

    for _, kernel in kernels:  # warm up
        problem.sample(kernel, 0)
    times = {name: [] for name, _ in kernels}
    order = list(range(len(kernels)))
    shuffle = random.Random(args.seed)
    for round_ in range(args.samples):
        shuffle.shuffle(order)
        for i in order:
            name, kernel = kernels[i]
            times[name].append(problem.sample(kernel, round_ + 1))

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


if __name__ == "__main__":
    sys.exit(main())
