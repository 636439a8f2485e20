#!/usr/bin/env python3
"""A Triton kernel of ciq's benchmark suite: a 256-bin histogram of 128 Mi
bytes drawn from a skewed distribution (one byte in four folded onto 8 hot
bins, like bench/kernels/histogram.cu); each program counts a 16 KiB block
with tl.histogram and adds it to the global bins atomically. The check is
exact; timed like bench/common/bench.h.

Run it with ciq's ptxas wrapper:
  TRITON_PTXAS_PATH=ciq-ptxas CIQ_REAL_PTXAS=/usr/local/cuda/bin/ptxas \\
  TRITON_ALWAYS_COMPILE=1 python3 bench/triton/histogram.py

Options: bench/triton/harness.py (or --help).
"""
import os
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

N, BINS, BLOCK = 128 << 20, 256, 16384


def histogram_kernel(data_ptr, bins_ptr, BINS: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    counts = tl.histogram(tl.load(data_ptr + offsets).to(tl.int32), BINS)
    tl.atomic_add(bins_ptr + tl.arange(0, BINS), counts)


class Problem:
    def __init__(self, seed):
        gen = torch.Generator().manual_seed(seed)
        data = torch.randint(0, 256, (N // 4, 4), generator=gen, dtype=torch.uint8)
        data[:, 0] &= 7
        self.want = torch.bincount(data.flatten().long(), minlength=BINS)
        self.data = data.flatten().cuda()
        self.bins = torch.zeros(BINS, dtype=torch.int32, device="cuda")

    def launch(self, kernel):
        self.bins.zero_()  # every launch counts from zero (part of the timed work, as in use)
        kernel[(N // BLOCK,)](self.data, self.bins, BINS=BINS, BLOCK=BLOCK, num_warps=8)

    def check(self, kernel):
        self.launch(kernel)
        torch.cuda.synchronize()
        got = self.bins.cpu().long()
        bad = (got != self.want).nonzero()
        if bad.numel():
            b = bad[0].item()
            return f"bin {b}: {got[b].item()}, want {self.want[b].item()}"
        return None


if __name__ == "__main__":
    sys.exit(harness.main(__doc__, histogram_kernel, Problem))
