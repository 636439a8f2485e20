"""A small torch.compile'd program for bench/gpu/compile-campaign-reach.sh:
the program a campaign tunes, and the program a user runs again afterwards.

  --workload attention  (default) flex_attention with a soft-capped score
                        (20*tanh(s/20), as some models cap their logits),
                        bf16, B x H x S x 128: Inductor turns it into one
                        Triton template kernel. PyTorch's H100 default for
                        bf16 and head dimension 128 (template_heuristics'
                        h100_default_flex_config in the sources read; not
                        checked in torch 2.11 itself) is a 128 x 64 tile with
                        8 warps, the tile of bench/triton/attention.py's
                        kernel (fp16 there), which a maxnreg directive made
                        1.39x faster on an H100. Measured here (H100,
                        2026-12-07, torch 2.11, Triton 3.6): 149 registers,
                        and campaigns of 12 and 40 replay evaluations found
                        nothing significant in it
  --workload norm       a row softmax followed by a layer norm over wide rows,
                        fp32, ROWS x COLS: one fused reduction kernel, cheap
                        to compile; compile-campaign-reach.sh's default since
                        a campaign's replay found it 11.6 % faster with a
                        per-kernel minnctapersm=3 (H100, 2026-12-07)

Every run launches the compiled function the same number of times
(1 + --warmup + --steps), whatever the compiled code's speed, so that a
campaign's kernel-time objective (the kernel's GPU time summed over a run)
compares like with like. The first call's output is checked against an eager
float32 reference (a sample of rows for attention): exit 1 when it differs.

Prints `time_ms: X` (the median of --steps calls, CUDA events); with
--result FILE also writes one JSON object there: that median, the seconds the
first call took (compiling, or loading from the caches), the error, the
device, torch and Triton versions, and Inductor's cache counters.
"""
import argparse
import json
import statistics
import sys
import time


def attention_program(a, torch):
    try:
        from torch.nn.attention.flex_attention import flex_attention
    except ImportError as e:  # torch < 2.5
        sys.exit(f"compile_campaign_reach.py: this torch has no flex_attention ({e}): use --workload norm")
    cap = 20.0

    def softcap(score, b, h, q_idx, kv_idx):
        return cap * torch.tanh(score / cap)

    shape = (a.batch, a.heads, a.seq, a.dim)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    options = {}
    for item in a.kernel_option:
        key, _, value = item.partition("=")
        options[key] = int(value) if value.lstrip("-").isdigit() else value
    compiled = torch.compile(flex_attention)

    def call():
        return compiled(q, k, v, score_mod=softcap, kernel_options=options or None)

    def error(y):
        # Two heads of the first batch, 256 query rows each, in float32.
        worst = 0.0
        rows = torch.arange(0, a.seq, max(1, a.seq // 256), device="cuda")
        for h in (0, a.heads - 1):
            qs, ks, vs = q[0, h, rows].float(), k[0, h].float(), v[0, h].float()
            s = (qs @ ks.T) * a.dim ** -0.5
            want = torch.softmax(cap * torch.tanh(s / cap), dim=-1) @ vs
            got = y[0, h, rows].float()
            worst = max(worst, ((got - want).abs() / (1e-2 + 1e-2 * want.abs())).max().item())
        return worst  # <= 1: within 1e-2 + 1e-2 |want|

    return call, error


def norm_program(a, torch):
    x = torch.randn(a.rows, a.cols, device="cuda")
    w = torch.randn(a.cols, device="cuda")
    b = torch.randn(a.cols, device="cuda")

    def fn(x, w, b):
        p = torch.softmax(x * 0.5, dim=-1) * x.shape[-1]
        return torch.nn.functional.layer_norm(p, (x.shape[-1],), w, b)

    compiled = torch.compile(fn)

    def error(y):
        want = fn(x, w, b)
        return ((y - want).abs() / (1e-3 + 1e-3 * want.abs())).max().item()

    return (lambda: compiled(x, w, b)), error


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workload", choices=["attention", "norm"], default="attention")
    p.add_argument("--steps", type=int, default=50, help="timed calls (default 50)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--seq", type=int, default=4096)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--kernel-option", action="append", default=[], metavar="KEY=VALUE",
                   help="one of flex_attention's kernel_options (repeatable; e.g. num_warps=4, BACKEND=TRITON)")
    p.add_argument("--rows", type=int, default=32768)
    p.add_argument("--cols", type=int, default=4096)
    p.add_argument("--result", default="", help="write the result as one JSON object to this file")
    a = p.parse_args()
    try:  # after the arguments: --help needs no torch
        import torch  # noqa: PLC0415
        import triton  # noqa: PLC0415
    except ImportError as e:
        sys.exit(f"compile_campaign_reach.py: {e}: this program needs torch 2.x and Triton")

    if not torch.cuda.is_available():
        sys.exit("compile_campaign_reach.py: no CUDA device")
    torch.manual_seed(0)
    call, error = (attention_program if a.workload == "attention" else norm_program)(a, torch)
    with torch.no_grad():
        t0 = time.perf_counter()
        y = call()
        torch.cuda.synchronize()
        first_s = time.perf_counter() - t0
        err = error(y)
        for _ in range(a.warmup):
            call()
        times = []
        for _ in range(a.steps):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            call()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    counters = {}
    try:
        from torch._dynamo.utils import counters as c  # noqa: PLC0415 (an internal of torch)
        for group in ("inductor", "aot_autograd"):
            counters.update({f"{group}.{k}": v for k, v in c[group].items() if "cache" in k or "bundler" in k})
    except Exception:  # report none rather than fail
        pass
    ms = statistics.median(times)
    result = {"workload": a.workload, "time_ms": ms, "first_call_s": first_s, "error": err, "ok": err <= 1.0,
              "calls": 1 + a.warmup + a.steps, "device": torch.cuda.get_device_name(), "torch": torch.__version__,
              "triton": triton.__version__, "caches": counters}
    if a.result:
        with open(a.result, "w") as f:
            f.write(json.dumps(result) + "\n")
    print(f"time_ms: {ms:.4f}", flush=True)
    if not err <= 1.0:  # NaN fails too
        print(f"compile_campaign_reach.py: the compiled output differs from the eager reference "
              f"(worst error {err:.3g} x the tolerance)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
