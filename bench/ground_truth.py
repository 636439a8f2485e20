#!/usr/bin/env python3
"""Ground truth for the benchmark suite: every kernel built under every
control set of a grid, each build timed in several processes.

  bench/ground_truth.py compile --bin BUILD/bin --out VARIANTS [--jobs N] [--grid G] [--only P,...]
      (any machine with the CUDA toolkit) For each kernel of bench/kernels,
      PTX from nvcc once, then one cubin per control set, compiled by
      ciq-ptxas with the set as CIQ_CONTROLS (so the knobs are rendered as
      ciq renders them); its trace must say the set was applied. A set ptxas
      refuses (ciq-ptxas then builds the default instead) is left out and
      listed in VARIANTS/NAME/refused.txt. The Triton kernel gets the
      control files only; it is compiled on the GPU machine.

  bench/ground_truth.py measure --variants VARIANTS --build BENCH_BUILD
                        --out DATA [--processes 3] [--samples 20] [--grid G]
      (the GPU machine) Runs each kernel's program over its cubins
      (bench_NAME --variants DIR), P times, one fresh process each, kernels
      interleaved; writes DATA/NAME.csv, one row per sample:
      kernel,config,controls,process,sample,ms,gpu,driver,toolkit
      (DATA/NAME-registers.csv for --grid registers)

  bench/ground_truth.py stages --data DATA [--only P,...]
      Per kernel of DATA/NAME-nvvm.csv: the default's time and the fastest
      set using ptxas knobs only, NVVM-stage (nvcc.*) knobs only, and both;
      time = median of all samples, spread = range of the per-process
      medians. Prints a Markdown table and the geomean speedups.

Grids (--grid):
  knobs      maxrregcount x register-usage-level x def-load-cache (96 sets),
             the module-wide knobs measured to matter on the H200
             (bench/RESULTS.md; the data in bench/data/NAME.csv)
  registers  per-kernel maxnreg (11 values and none) x register-usage-level
             {none, 0, 10} x def-load-cache {none, cs} (72 sets): the axis
             that holds stencil3d's 2.5x and Triton attention's 1.4x
  nvvm       the NVVM stage (cicc, nvcc-13.space) with ptxas: nvvm-version
             {none, nvvm-latest} x opt-level {none, 1} x disable-nvvm-remat
             {none, on} x register-usage-level {none, 3, 10} x def-load-cache
             {none, cs} (48 sets; exact knobs only: no check runs here). Each
             NVVM set's PTX comes from ciq-nvcc -ptx with the set as
             CIQ_CONTROLS (ciq-cicc applies it; its trace must say so), then
             ciq-ptxas compiles it per ptxas set. CUDA programs only.
"""
import argparse
import concurrent.futures
import csv
import io
import json
import itertools
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ciq_trace  # noqa: E402

KERNELS = {  # program -> extern "C" kernel
    "reduce": "reduce_sum", "softmax": "softmax_rows", "layernorm": "layernorm_rows", "sgemm": "sgemm_tiled",
    "wmma_gemm": "wmma_gemm", "stencil3d": "wave_step", "attention": "attention_fwd", "histogram": "histogram256",
}
TRITON = "triton_matmul"
TRITON_KERNEL = "matmul_kernel"
GRIDS = {
    "knobs": [
        ("maxrregcount", [None, "32", "48", "64", "96", "128", "168", "255"]),
        ("register-usage-level", [None, "0", "8", "10"]),
        ("def-load-cache", [None, "cg", "cs"]),
    ],
    "nvvm": [
        ("nvcc.nvvm-version", [None, "nvvm-latest"]),
        ("nvcc.opt-level", [None, "1"]),
        ("nvcc.disable-nvvm-remat", [None, "on"]),
        ("register-usage-level", [None, "3", "10"]),
        ("def-load-cache", [None, "cs"]),
    ],
    "registers": [  # KERNEL: the program's kernel
        ("KERNEL:maxnreg", [None, "32", "40", "48", "56", "64", "80", "96", "128", "160", "200", "255"]),
        ("register-usage-level", [None, "0", "10"]),
        ("def-load-cache", [None, "cs"]),
    ],
}
ARCH = "sm_90a"


def control_sets(grid="knobs", kernel=None):
    """(config id, [(knob, value)]) for a grid; cfg000 is the default."""
    axes = [(k.replace("KERNEL", kernel or "KERNEL"), v) for k, v in GRIDS[grid]]
    sets = []
    for values in itertools.product(*(v for _, v in axes)):
        knobs = [(k, v) for (k, _), v in zip(axes, values) if v is not None]
        sets.append((f"cfg{len(sets):03d}", knobs))
    return sets


def controls_text(knobs):
    nvvm = "nvcc-space = nvcc-13\n" if any(k.startswith("nvcc.") for k, _ in knobs) else ""
    return "format = ciq-controls/1\nspace = ptxas-13\n" + nvvm + "".join(f"{k} = {v}\n" for k, v in knobs)


def nvvm_ptx(args, program, out, knobs, cache):
    """The PTX of `program` with the NVVM-stage part of `knobs` applied by
    ciq-cicc (through ciq-nvcc -ptx); the default PTX when there is none."""
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    nvvm = [(k, v) for k, v in knobs if k.startswith("nvcc.")]
    tag = "-".join(f"{k[5:]}={v}" for k, v in nvvm) or "default"
    ptx = os.path.join(out, f"{program}.{tag}.ptx")
    if os.path.exists(ptx):
        return ptx
    env = dict(os.environ, CIQ_CACHE_DIR=cache, CIQ_REAL_NVCC=f"{cuda}/bin/nvcc")
    trace = os.path.join(cache, "nvvm-trace", program, tag)
    if nvvm:
        controls = os.path.join(cache, f"{program}.{tag}.controls")
        with open(controls, "w") as f:
            f.write(controls_text(nvvm))
        env.update(CIQ_CONTROLS=controls, CIQ_TRACE=trace)
    subprocess.run([os.path.join(os.path.abspath(args.bin), "ciq-nvcc"), "-O3", "-std=c++17", f"-arch={ARCH}", "-ptx",
                    "-I", f"{HERE}/common", f"{HERE}/kernels/{program}.cu", "-o", ptx], env=env, check=True)
    if nvvm:
        units = [json.load(open(os.path.join(trace, "units", n))) for n in os.listdir(os.path.join(trace, "units"))]
        if not units or not all(u["controls_applied"] for u in units):
            raise RuntimeError(f"{program} {tag}: ciq-cicc did not apply the NVVM set: {units}")
    return ptx


def controls_label(knobs):
    return ";".join(f"{k}={v}" for k, v in knobs)


def compile_variants(args):
    ciq_ptxas = os.path.join(os.path.abspath(args.bin), "ciq-ptxas")
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    jobs = []
    cache = tempfile.mkdtemp(prefix="ciq-gt-cache-")
    for program in list(KERNELS) + ([] if args.grid == "nvvm" else [TRITON]):
        if args.only and program not in args.only.split(","):
            continue
        sets = control_sets(args.grid, TRITON_KERNEL if program == TRITON else KERNELS[program])
        out = os.path.join(args.out, program)
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "configs.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["config", "controls"])
            for name, knobs in sets:
                w.writerow([name, controls_label(knobs)])
                with open(os.path.join(out, name + ".controls"), "w") as c:
                    c.write(controls_text(knobs))
        if program == TRITON:
            continue
        if args.grid == "nvvm":
            for name, knobs in sets:
                jobs.append((out, nvvm_ptx(args, program, out, knobs, cache), name, [kv for kv in knobs if not kv[0].startswith("nvcc.")]))
            continue
        ptx = os.path.join(out, program + ".ptx")
        subprocess.run([f"{cuda}/bin/nvcc", "-O3", "-std=c++17", f"-arch={ARCH}", "-ptx", "-I", f"{HERE}/common",
                        f"{HERE}/kernels/{program}.cu", "-o", ptx], check=True)
        for name, knobs in sets:
            jobs.append((out, ptx, name, knobs))

    def one(job):
        out, ptx, name, knobs = job
        trace = os.path.join(cache, "trace", os.path.basename(out), name)
        env = dict(os.environ, CIQ_CACHE_DIR=cache, CIQ_REAL_PTXAS=f"{cuda}/bin/ptxas", CIQ_TRACE=trace)
        if knobs:
            env["CIQ_CONTROLS"] = os.path.join(out, name + ".controls")
        cubin = os.path.join(out, name + ".cubin")
        r = subprocess.run([ciq_ptxas, f"-arch={ARCH}", ptx, "-o", cubin], env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{out}/{name}: ciq-ptxas failed: {r.stderr}")
        why = ciq_trace.not_applied(trace) if knobs else ""
        if why is None:
            why = "no trace record"
        if why:  # ptxas refused the set and ciq-ptxas built the default: not this variant
            os.remove(cubin)
            os.remove(os.path.join(out, name + ".controls"))
        return out, name, knobs, why

    refused = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for i, (out, name, knobs, why) in enumerate(pool.map(one, jobs), 1):
            if why:
                refused.setdefault(out, []).append(f"{name} {controls_label(knobs)}: {why}")
            if i % 96 == 0 or i == len(jobs):
                print(f"compiled {i}/{len(jobs)}", file=sys.stderr)
    for out, lines in refused.items():
        with open(os.path.join(out, "refused.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        print(f"{out}: {len(lines)} set(s) refused by ptxas (refused.txt)", file=sys.stderr)
    shutil.rmtree(cache)


def machine():
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.splitlines()[0]
    gpu, driver = (x.strip() for x in smi.split(","))
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    version = subprocess.run([f"{cuda}/bin/ptxas", "--version"], capture_output=True, text=True).stdout
    release = [line for line in version.splitlines() if "release" in line][0]
    toolkit = release.split(",")[-1].strip().lstrip("V")
    return gpu, driver, toolkit


def measure(args):
    gpu, driver, toolkit = machine()
    programs = [p for p in list(KERNELS) + [TRITON] if not args.only or p in args.only.split(",")]
    os.makedirs(args.out, exist_ok=True)
    files = {}
    for program in programs:
        suffix = "" if args.grid == "knobs" else "-" + args.grid
        f = open(os.path.join(args.out, program + suffix + ".csv"), "w", newline="")
        w = csv.writer(f)
        w.writerow(["kernel", "config", "controls", "process", "sample", "ms", "gpu", "driver", "toolkit"])
        files[program] = (f, w)
    labels = {}
    for program in programs:
        with open(os.path.join(args.variants, program, "configs.csv")) as f:
            labels[program] = {row["config"]: row["controls"] for row in csv.DictReader(f)}
    for process in range(1, args.processes + 1):
        for program in programs:
            vdir = os.path.join(args.variants, program)
            if program == TRITON:
                cmd = [sys.executable, f"{HERE}/triton/matmul.py", "--variants", vdir]
            else:
                cmd = [os.path.join(args.build, "bench_" + program), "--variants", vdir]
            cmd += ["--samples", str(args.samples), "--seed", str(random.SystemRandom().randrange(2**31))]
            r = subprocess.run(cmd, capture_output=True, text=True)
            sys.stderr.write(f"== {program} process {process}: exit {r.returncode}\n{r.stderr[-3000:]}")
            if r.returncode != 0:
                continue
            f, w = files[program]
            for row in csv.DictReader(io.StringIO(r.stdout)):
                w.writerow([program, row["config"], labels[program][row["config"]], process, row["sample"], row["ms"],
                            gpu, driver, toolkit])
            f.flush()
    for f, _ in files.values():
        f.close()


def stages(args):
    """What the NVVM stage adds in a measured nvvm grid (see --help)."""
    import statistics
    rows, gains = [], {"ptxas": [], "nvvm": [], "both": []}
    programs = [p for p in KERNELS if not args.only or p in args.only.split(",")]
    for program in programs:
        path = os.path.join(args.data, program + "-nvvm.csv")
        if not os.path.exists(path):
            continue
        samples = {}
        with open(path) as f:
            for row in csv.DictReader(f):
                samples.setdefault(row["controls"], {}).setdefault(row["process"], []).append(float(row["ms"]))

        def time(label):
            return statistics.median(ms for per in samples[label].values() for ms in per)

        def spread(label):
            medians = [statistics.median(v) for v in samples[label].values()]
            return min(medians), max(medians)

        def best(keep):
            labels = [c for c in samples if c and keep([k.split("=", 1)[0] for k in c.split(";")])]
            return min(labels, key=time) if labels else ""

        default = time("")
        picks = {"ptxas": best(lambda ks: not any(k.startswith("nvcc.") for k in ks)),
                 "nvvm": best(lambda ks: all(k.startswith("nvcc.") for k in ks)),
                 "both": best(lambda ks: True)}
        cells = []
        for mode, label in picks.items():
            gain = default / time(label) if label else 1.0
            gains[mode].append(gain)
            lo, hi = spread(label) if label else spread("")
            cells.append(f"{gain:.3f}x `{label or 'default'}` ({lo:.4f}-{hi:.4f})")
        lo, hi = spread("")
        rows.append(f"| {program} | {default:.4f} ({lo:.4f}-{hi:.4f}) | " + " | ".join(cells) + " |")
    print("| kernel | default ms (process range) | ptxas only | NVVM only | both |")
    print("| --- | --- | --- | --- | --- |")
    print("\n".join(rows))
    geo = {m: statistics.geometric_mean(g) for m, g in gains.items() if g}
    print("\ngeomean: " + ", ".join(f"{m} {v:.3f}x" for m, v in geo.items()))


def main():
    parser = argparse.ArgumentParser(description="ground truth for ciq's benchmark suite")
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compile")
    c.add_argument("--bin", required=True, help="directory of ciq-ptxas")
    c.add_argument("--out", required=True)
    c.add_argument("--jobs", type=int, default=os.cpu_count())
    c.add_argument("--grid", choices=sorted(GRIDS), default="knobs")
    c.add_argument("--only", help="comma-separated programs")
    m = sub.add_parser("measure")
    m.add_argument("--variants", required=True)
    m.add_argument("--build", required=True, help="CMake build directory of bench/")
    m.add_argument("--out", required=True)
    m.add_argument("--processes", type=int, default=3)
    m.add_argument("--samples", type=int, default=20)
    m.add_argument("--only", help="comma-separated programs")
    m.add_argument("--grid", choices=sorted(GRIDS), default="knobs", help="names the data files (NAME-GRID.csv)")
    st = sub.add_parser("stages")
    st.add_argument("--data", required=True, help="directory of NAME-nvvm.csv")
    st.add_argument("--only", help="comma-separated programs")
    args = parser.parse_args()
    {"compile": compile_variants, "measure": measure, "stages": stages}[args.command](args)


if __name__ == "__main__":
    main()
