#!/usr/bin/env python3
"""The Triton kernel of ciq's benchmark suite: C = A @ B, fp16 in, fp32
accumulate, fp16 out, M = N = K = 4096, checked against a float64 CPU
reference on sampled rows, timed like bench/common/bench.h (L2 flushed with
a 256 MiB write before each sample, CUDA events, one launch per sample).

Run it with ciq's ptxas wrapper:
  TRITON_PTXAS_PATH=ciq-ptxas CIQ_REAL_PTXAS=/usr/local/cuda/bin/ptxas \\
  TRITON_ALWAYS_COMPILE=1 python3 bench/triton/matmul.py

Options: bench/triton/harness.py (or --help).
"""
import os
import random
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

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
        # The launch configuration; bench/triton/resident.py --configs tunes it.
        self.config = dict(BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M, num_warps=8,
                           num_stages=3)

    def launch(self, kernel):
        c = self.config
        grid = (triton.cdiv(M, c["BLOCK_M"]) * triton.cdiv(N, c["BLOCK_N"]),)
        kernel[grid](self.da, self.db, self.dc, M, N, K, self.da.stride(0), self.da.stride(1), self.db.stride(0),
                     self.db.stride(1), self.dc.stride(0), self.dc.stride(1), **c)

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


if __name__ == "__main__":
    sys.exit(harness.main(__doc__, matmul_kernel, Problem))
