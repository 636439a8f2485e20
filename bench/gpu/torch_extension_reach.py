"""One run of a PyTorch C++/CUDA extension built by torch.utils.cpp_extension.load_inline
(ninja, in BUILD_DIR, kept across runs), for bench/gpu/torch-extension-reach.sh: builds
(or lets ninja find nothing to do), times its kernel with CUDA events and prints
`time_ms: MEDIAN` and `check: ok|WRONG`."""
import argparse
import os
import statistics
import sys

import torch
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
// Register-hungry on purpose: 32 values per thread kept live across a
// double loop (as test/lit/Inputs/two_kernels.cu): maxrregcount changes it.
__global__ void heavy(const float* __restrict__ in, float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float r[32];
#pragma unroll
  for (int k = 0; k < 32; ++k) r[k] = in[(i + k * 977) % n];
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < 32; ++k)
#pragma unroll
    for (int j = 0; j < 32; ++j) s += r[k] * r[j] * (k + j);
  out[i] = s;
}
torch::Tensor run(torch::Tensor in) {
  auto out = torch::empty_like(in);
  int n = in.numel();
  heavy<<<(n + 255) / 256, 256>>>(in.data_ptr<float>(), out.data_ptr<float>(), n);
  return out;
}
"""
CPP = "torch::Tensor run(torch::Tensor in);"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--n", type=int, default=1 << 22)
    ap.add_argument("--samples", type=int, default=200)
    a = ap.parse_args()
    os.makedirs(a.build_dir, exist_ok=True)
    ext = load_inline(name="ciq_reach_ext", cpp_sources=CPP, cuda_sources=CUDA, functions=["run"],
                      extra_cuda_cflags=["-O3", "-Xptxas=-v"], build_directory=a.build_dir, verbose=True)
    torch.manual_seed(0)
    x = torch.rand(a.n, device="cuda") * 0.01
    ref_in = x.double()
    idx = (torch.arange(a.n, device="cuda").unsqueeze(1) + torch.arange(32, device="cuda").unsqueeze(0) * 977) % a.n
    r = ref_in[idx]
    w = (torch.arange(32, device="cuda").unsqueeze(1) + torch.arange(32, device="cuda").unsqueeze(0)).double()
    ref = torch.einsum("nk,kj,nj->n", r, w, r)
    got = ext.run(x)
    ok = torch.allclose(got.double(), ref, rtol=1e-3, atol=1e-6)
    for _ in range(10):
        ext.run(x)
    torch.cuda.synchronize()
    times = []
    for _ in range(a.samples):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        ext.run(x)
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    print(f"time_ms: {statistics.median(times):.4f}")
    print("check: " + ("ok" if ok else "WRONG"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
