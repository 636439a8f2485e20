#!/usr/bin/env python3
"""A stand-in JIT benchmark for ciq-tuner tests: compiles PTX through
ciq-ptxas while it runs (as Triton does; ciq-ptxas picks up CIQ_CONTROLS
and CIQ_TRACE from the environment), then prints `time_ms: T` where T is
scripted from the candidate's control set:

  1.0, minus 0.1 if it sets `KERNEL:maxnreg = 128` (the real effect),
  minus 0.005 if it sets `opt-level = 3` (ptxas' default: the same code,
  so this is noise that favours the knob).

  jit_bench.py CIQ_PTXAS PTX OUT_DIR
"""
import os
import subprocess
import sys

ciq_ptxas, ptx, out = sys.argv[1:4]
subprocess.run([ciq_ptxas, "-arch=sm_90a", ptx, "-o", os.path.join(out, "jit.cubin")], check=True)
controls = ""
if os.environ.get("CIQ_CONTROLS"):
    with open(os.environ["CIQ_CONTROLS"]) as f:
        controls = f.read()
t = 1.0
if ":maxnreg = 128" in controls:
    t -= 0.1
if "opt-level = 3" in controls:
    t -= 0.005
print(f"time_ms: {t}")
