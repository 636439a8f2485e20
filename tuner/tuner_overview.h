// What `ciq-tuner --help` prints before the subcommands: what the tuner
// does, examples of each subcommand, the placeholders and where results
// go. Only there: a subcommand's --help opens with its own usage
// (utils/cli/help.h). Its own file so that tuner_main.cpp stays the
// command line.
#pragma once

namespace ciq::tuner {

inline constexpr const char* k_overview = R"(search compiler controls (and application parameters) for your kernels

ciq-tuner runs your own commands for every candidate, with CIQ_CONTROLS and
CIQ_TRACE set so that ciq-ptxas inside your build applies the candidate and
reports what it compiled. It keeps only winners that beat the default with
statistical significance, and writes them to the cache ciq-nvcc/ciq-ptxas
read, with their provenance.

Examples:
  # GPU benchmark: build into the evaluation's scratch dir, time, check.
  ciq-tuner run --build 'ciq-nvcc -O3 -arch=sm_90a stencil.cu -o {workdir}/stencil' \
      --bench '{workdir}/stencil' --metric 'time_ms: ([0-9.]+)' \
      --check '{workdir}/stencil --check' --budget 32

  # A CMake project built in place (recompiled for every candidate).
  ciq-tuner run --build 'cmake --build build --clean-first' \
      --bench 'build/bench' --metric 'ms=([0-9.]+)' --kernels '*attention*'

  # No GPU: minimise spilled bytes that ptxas reports.
  ciq-tuner run --build 'ciq-nvcc -arch=sm_90a -cubin k.cu -o {workdir}/k.cubin' \
      --objective ptxas:spill-stores --kernels '*heavy*'

  # Parameters only: a general command-line optimiser.
  ciq-tuner run --space none --param x=range:1:20:0.5 --param y=choice:1,2,3 \
      --bench 'python3 f.py {param:x} {param:y}' --metric 'f=([-0-9.e]+)'

  # Replay recorded ground truth (bench/data/*.csv): no build, no GPU.
  ciq-tuner run --replay bench/data/stencil3d.csv --budget 32 --seed 7

  # On a Slurm cluster (the run directory on a shared file system).
  ciq-tuner run --executor slurm --slurm-partition gpu --jobs 16 --build ... --bench ...

  # Every kernel of the build, one search each (one at a time: they share the tree).
  ciq-tuner campaign --build 'cmake --build build --clean-first' --bench 'build/bench' \
      --metric 'ms=([0-9.]+)' --out tuning/all

  # After a CUDA upgrade: tune again the runs behind the stale entries
  # (ciq-cache stale); after a driver update: do the shipped entries still win?
  ciq-tuner retune --stale --dry-run
  ciq-tuner retune --stale --drop-losers
  ciq-tuner reverify --kernels '*gemm*'

  ciq-tuner sample 5 --space ptxas-13
  ciq-tuner run --resume ciq-tune-20261202-101500
  ciq-tuner report ciq-tune-20261202-101500          # report.html and report/*.svg

Placeholders in commands: {controls} {workdir} {gpu} {param:NAME}.
Results: <run dir>/journal.jsonl, results.csv, best.controls, summary.json.
)";

} // namespace ciq::tuner
