"""ciq.tune over ptxas knobs with a kernel compiled in this process, as a
Triton kernel would be (test/lit/python-tune-ptxas.test): the KernelCache
compiles two_kernels.ptx through ciq-ptxas (CIQ_CONTROLS and CIQ_TRACE set
by the server) once per control set; the objective is the cubin's size.
Usage: python_tune_ptxas.py PTX RUN_DIR CACHE_DIR COMPILES_LOG"""
import os
import subprocess
import sys
import tempfile

import ciq
from ciq.jit import KernelCache

ptx, run_dir, cache_dir, log_path = sys.argv[1:5]
scratch = tempfile.mkdtemp()
log = open(log_path, "w")


def compile(kernel, c):
    out = os.path.join(scratch, c.digest + ".cubin")
    subprocess.run(["ciq-ptxas", "-arch=sm_90a", kernel, "-o", out], check=True)
    log.write(f"compile {c.digest} trace={os.environ.get('CIQ_TRACE', '')}\n")
    log.flush()
    return out


kernels = KernelCache(compile)


def objective(c):
    return os.path.getsize(kernels.get(ptx))


result = ciq.tune(objective, space="ptxas-13", caches=[kernels], budget=12, verify_runs=2, seed=1,
                  out=run_dir, ship=False, cache_dir=cache_dir, extra_args=["--occupancy-probes=false"])
print("baseline", result.baseline, "best", result.best, "verdict", result.verdict, "shipped", result.shipped)
print("rows", len(result.rows), "invalid", [r["reason"] for r in result.rows if r["status"] != "ok"])
