#!/usr/bin/env python3
"""A stand-in for a user's program run under libciq-inject, for machines
without a GPU: it writes the kernel trace the library would write (the
format of tuner/formats/kernel_trace.h) into $CIQ_KERNEL_TRACE, as if it
had launched its kernels, and prints nothing a --metric could read.

  fake_kernel_program.py X [--no-trace] [--processes N] [--names TARGET,OTHER]
                         [--autotune-at X N]

Kernels: `_Z6targetPf` takes ((X - 7)^2 + 1) ms over 4 launches (best at
X = 7); `_Z5otherPf` takes 50 ms over 2 launches whatever X. With
--processes N, N processes each write a trace (a launcher and workers).
--no-trace writes nothing (as a run where CUDA never started). --names
gives the two kernels other (mangled) names. --autotune-at X N launches
`_Z6targetPf` N times as often when X is that value, each launch as long
(as an autotuner in the program does while it compiles the kernel, when
the kernel's code makes it try another configuration).
"""
import json
import os
import sys

args = sys.argv[1:]
x = float(args[0])
trace = os.environ.get("CIQ_KERNEL_TRACE", "")
print(f"step done (x={args[0]})")
if "--no-trace" in args or not trace:
    sys.exit(0)
processes = int(args[args.index("--processes") + 1]) if "--processes" in args else 1
autotune = args[args.index("--autotune-at") + 1:args.index("--autotune-at") + 3] if "--autotune-at" in args else None
repeat = int(autotune[1]) if autotune and float(autotune[0]) == x else 1
target_name, other_name = args[args.index("--names") + 1].split(",") if "--names" in args else ("_Z6targetPf", "_Z5otherPf")


def kernel(name, demangled, total_ms, launches):
    each = int(total_ms * 1e6 / launches)
    return {"kernel": name, "demangled": demangled, "device": 0, "grid": [128, 1, 1], "block": [256, 1, 1],
            "dynamic_smem": 0, "static_smem": 0, "registers": 32, "local_bytes": 0, "launches": launches,
            "total_ns": each * launches, "min_ns": each, "max_ns": each, "first_start_ns": 1,
            "last_end_ns": 1 + each * launches, "durations_ns": [each] * launches, "code_xxh128": "", "module": -1}


for p in range(processes):
    pid = os.getpid() * 100 + p
    lines = [{"ciq_kernel_trace": 1, "pid": pid, "exe": sys.executable, "status": "ok", "reason": "",
              "dropped_launches": 0, "dropped_records": 0, "incomplete_records": 0, "module_identity": "ok"},
             kernel(target_name, "target(float*)", repeat * ((x - 7) ** 2 + 1) / processes, 4 * repeat),
             kernel(other_name, "other(float*)", 50.0 / processes, 2)]
    path = os.path.join(trace, f"kernels-{pid}.jsonl")
    with open(path + ".tmp", "w") as f:
        f.write("".join(json.dumps(line) + "\n" for line in lines))
    os.rename(path + ".tmp", path)
