#!/usr/bin/env python3
"""What ciq-ptxas, ciq-cicc and ciq-nvcc add to a compile: a miss (a cache exists but
holds nothing for this PTX) and a hit (an entry is applied), against the
plain tools, interleaved round by round so drift hits all variants alike.

  bench/wrapper_overhead.py --bin build/bin [--rounds 30] [--ptx FILE] [--cu FILE]

The hit is compared with plain ptxas given the same extra option, so the
difference is ciq's own work (lookup, rendering, spawning), not a different
compile. ciq-cicc (the NVVM stage) is timed on the cicc command nvcc runs for
the .cu (recorded through --cicc-prefix, its temporaries kept): a miss, and a
hit of a unit entry (fmad=0) against cicc given -fmad=0 itself. Prints a Markdown table of medians (ms), added ms and ratios.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def timed(cmd, env):
    t = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(root, "build", "bin"))
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--ptx", default=os.path.join(root, "test", "lit", "Inputs", "light.ptx"))
    ap.add_argument("--cu", default=os.path.join(root, "test", "lit", "Inputs", "light.cu"))
    ap.add_argument("--cuda", default=os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    a = ap.parse_args()

    ptxas = os.path.join(a.cuda, "bin", "ptxas")
    nvcc = os.path.join(a.cuda, "bin", "nvcc")
    ciq_ptxas, ciq_nvcc, ciq_cache = (os.path.join(a.bin, n) for n in ("ciq-ptxas", "ciq-nvcc", "ciq-cache"))
    work = tempfile.mkdtemp(prefix="ciq-overhead-")
    out = os.path.join(work, "out.cubin")
    env = dict(os.environ, CIQ_REAL_PTXAS=ptxas, CIQ_REAL_NVCC=nvcc)
    env.pop("CIQ_LOG_LEVEL", None)
    env.pop("CIQ_LOG_FILE", None)
    miss_env = dict(env, CIQ_CACHE_DIR=os.path.join(work, "miss"))
    hit_env = dict(env, CIQ_CACHE_DIR=os.path.join(work, "hit"))
    # The miss cache holds an entry for other PTX; the hit cache one for this PTX.
    other = os.path.join(root, "test", "lit", "Inputs", "two_kernels.ptx")
    subprocess.run([ciq_cache, "put", "--ptx", other, "--arch", "sm_90a", "--set", "maxrregcount=64"],
                   env=miss_env, check=True, stdout=subprocess.DEVNULL)
    subprocess.run([ciq_cache, "put", "--ptx", a.ptx, "--arch", "sm_90a", "--set", "maxrregcount=32"],
                   env=hit_env, check=True, stdout=subprocess.DEVNULL)
    # nvcc -c hands ptxas the PTX of this .cu; store its entry under that PTX.
    cu_ptx = os.path.join(work, "cu.ptx")
    subprocess.run([nvcc, "-arch=sm_90a", "-ptx", a.cu, "-o", cu_ptx], check=True)
    subprocess.run([ciq_cache, "put", "--ptx", cu_ptx, "--arch", "sm_90a", "--set", "maxrregcount=32"],
                   env=hit_env, check=True, stdout=subprocess.DEVNULL)

    # The cicc step of nvcc -c, recorded with its input kept.
    keep = os.path.join(work, "keep")
    os.makedirs(keep)
    recorder = os.path.join(work, "record.sh")
    with open(recorder, "w") as f:
        f.write(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {work}/cicc.args\nexec \"$@\"\n")
    os.chmod(recorder, 0o755)
    subprocess.run([nvcc, "--cicc-prefix=" + recorder, "-keep", "-keep-dir", keep, "-arch=sm_90a", "-c", a.cu,
                    "-o", os.path.join(work, "rec.o")], check=True, cwd=work)
    cicc_cmd = open(os.path.join(work, "cicc.args")).read().splitlines()
    ciq_cicc = os.path.join(a.bin, "ciq-cicc")
    trace = os.path.join(work, "trace")
    subprocess.run([ciq_cicc] + cicc_cmd, env=dict(miss_env, CIQ_TRACE=trace), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    unit_key = json.load(open(os.path.join(trace, "units", os.listdir(os.path.join(trace, "units"))[0])))["key"]
    subprocess.run([ciq_cache, "put", "--unit", unit_key, "--set", "fmad=0"], env=dict(hit_env, CIQ_REAL_NVCC=nvcc),
                   check=True, stdout=subprocess.DEVNULL)
    cicc_fmad0 = [w if w != "-fmad=1" else "-fmad=0" for w in cicc_cmd]

    args = ["-arch=sm_90a", "-m64", a.ptx, "-o", out]
    cu_args = ["-arch=sm_90a", "-c", a.cu, "-o", os.path.join(work, "k.o")]
    md_args = cu_args + ["-MD", "-MF", os.path.join(work, "k.d")]  # a dependency file: ciq-nvcc adds the stamps
    stamps_list = os.path.join(work, "stamps.list")
    open(stamps_list, "w").close()
    stamps_env = dict(hit_env, CIQ_STAMPS_OUT=stamps_list)  # as ciq-nvcc sets it for its ptxas steps
    variants = {
        "ptxas plain": ([ptxas] + args, env),
        "ptxas plain + --maxrregcount=32": ([ptxas] + args + ["--maxrregcount=32"], env),
        "ciq-ptxas miss": ([ciq_ptxas] + args, miss_env),
        "ciq-ptxas hit (maxrregcount=32)": ([ciq_ptxas] + args, hit_env),
        "ciq-ptxas hit, stamps listed": ([ciq_ptxas] + args, stamps_env),
        "cicc plain": (cicc_cmd, env),
        "ciq-cicc miss": ([ciq_cicc] + cicc_cmd, miss_env),
        "cicc plain -fmad=0": (cicc_fmad0, env),
        "ciq-cicc hit (fmad=0)": ([ciq_cicc] + cicc_cmd, hit_env),
        "nvcc -c plain": ([nvcc] + cu_args, env),
        "nvcc -c plain -Xptxas --maxrregcount=32": ([nvcc] + cu_args + ["-Xptxas", "--maxrregcount=32"], env),
        "ciq-nvcc -c miss": ([ciq_nvcc] + cu_args, miss_env),
        "ciq-nvcc -c hit": ([ciq_nvcc] + cu_args, hit_env),
        "nvcc -c -MD plain -Xptxas --maxrregcount=32": ([nvcc] + md_args + ["-Xptxas", "--maxrregcount=32"], env),
        "ciq-nvcc -c -MD hit (stamps added)": ([ciq_nvcc] + md_args, hit_env),
    }
    for cmd, e in variants.values():  # warm caches, and check the hit really hits
        timed(cmd, e)
    samples = {k: [] for k in variants}
    for _ in range(a.rounds):
        for name, (cmd, e) in variants.items():
            samples[name].append(timed(cmd, e))
    stats = subprocess.run([ciq_cache, "stats"], env=hit_env, capture_output=True, text=True).stdout
    if "applied" not in stats or "unit.applied" not in stats:
        sys.exit("the hit variants never applied their entries:\n" + stats)

    med = {k: statistics.median(v) for k, v in samples.items()}
    def row(name, base):
        m, b = med[name], med[base]
        spread = statistics.quantiles(samples[name], n=4)
        return f"| {name} | {m:.1f} | {spread[0]:.1f}-{spread[2]:.1f} | {m - b:+.1f} | {m / b:.3f} |"
    print(f"{a.rounds} interleaved rounds; PTX {os.path.basename(a.ptx)}, CUDA file {os.path.basename(a.cu)}\n")
    print("| variant | median ms | IQR ms | added ms | ratio |")
    print("|---|---|---|---|---|")
    print(row("ptxas plain", "ptxas plain"))
    print(row("ciq-ptxas miss", "ptxas plain"))
    print(row("ptxas plain + --maxrregcount=32", "ptxas plain + --maxrregcount=32"))
    print(row("ciq-ptxas hit (maxrregcount=32)", "ptxas plain + --maxrregcount=32"))
    print(row("cicc plain", "cicc plain"))
    print(row("ciq-cicc miss", "cicc plain"))
    print(row("cicc plain -fmad=0", "cicc plain -fmad=0"))
    print(row("ciq-cicc hit (fmad=0)", "cicc plain -fmad=0"))
    print(row("nvcc -c plain", "nvcc -c plain"))
    print(row("ciq-nvcc -c miss", "nvcc -c plain"))
    print(row("nvcc -c plain -Xptxas --maxrregcount=32", "nvcc -c plain -Xptxas --maxrregcount=32"))
    print(row("ciq-nvcc -c hit", "nvcc -c plain -Xptxas --maxrregcount=32"))
    print(row("ciq-ptxas hit, stamps listed", "ptxas plain + --maxrregcount=32"))
    print(row("nvcc -c -MD plain -Xptxas --maxrregcount=32", "nvcc -c -MD plain -Xptxas --maxrregcount=32"))
    print(row("ciq-nvcc -c -MD hit (stamps added)", "nvcc -c -MD plain -Xptxas --maxrregcount=32"))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
