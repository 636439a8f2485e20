"""One row-wise layernorm, run once per process, for bench/gpu/triton-cache-reach.sh.

  --mode compile   torch.compile of a layernorm written in torch (Inductor makes
                   one fused reduction kernel), Inductor's and Triton's caches
                   as they are by default
  --mode triton    the same as a hand-written @triton.jit kernel (Triton's own
                   cache only)

Prints one JSON line: the median kernel time (triton.testing.do_bench, ms),
the seconds the first call took (compiling or loading), and Inductor's
FX graph cache counters.
"""
import argparse
import json
import time

import torch
import triton
import triton.language as tl


def layernorm_torch(x, w, b):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) * torch.rsqrt(var + 1e-5) * w + b


@triton.jit
def layernorm_kernel(X, Y, W, B, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, 0) / N
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, 0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(W + cols, mask=mask, other=0.0)
    b = tl.load(B + cols, mask=mask, other=0.0)
    tl.store(Y + row * N + cols, xc * rstd * w + b, mask=mask)


def layernorm_triton(x, w, b):
    y = torch.empty_like(x)
    rows, cols = x.shape
    layernorm_kernel[(rows,)](x, y, w, b, cols, 1e-5, BLOCK=triton.next_power_of_2(cols), num_warps=4)
    return y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["compile", "triton"], default="compile")
    p.add_argument("--rows", type=int, default=65536)
    p.add_argument("--cols", type=int, default=1024)
    a = p.parse_args()
    torch.manual_seed(0)
    x = torch.randn(a.rows, a.cols, device="cuda")
    w = torch.randn(a.cols, device="cuda")
    b = torch.randn(a.cols, device="cuda")
    fn = torch.compile(layernorm_torch) if a.mode == "compile" else layernorm_triton
    t0 = time.perf_counter()
    y = fn(x, w, b)
    torch.cuda.synchronize()
    first_s = time.perf_counter() - t0
    err = (y - layernorm_torch(x, w, b)).abs().max().item()
    ms = triton.testing.do_bench(lambda: fn(x, w, b), warmup=50, rep=300, return_mode="median")
    fx = {}
    try:
        from torch._dynamo.utils import counters
        fx = {k: v for k, v in counters["inductor"].items() if "cache" in k or "bundler" in k}
    except Exception:  # counters are an internal of torch: report none rather than fail
        pass
    print(json.dumps({"mode": a.mode, "time_ms": ms, "first_call_s": first_s, "max_abs_err": err,
                      "device": torch.cuda.get_device_name(), "inductor": fx}))


if __name__ == "__main__":
    main()
