#!/usr/bin/env bash
# Issue 23 on the GPU machine: kernel timing inside unmodified programs
# (libciq-inject), `ciq-tuner profile`, the injection's overhead, and
# tuning by kernel time, on examples/wave (CUDA C++, CMake through
# ciq-nvcc) and examples/torch/block.py (torch.compile, Triton through
# ciq-ptxas).
#
#   bench/gpu/whole-program.sh BIN OUT [STEP...]
# STEP: env, profile, overhead, torch, torch-caches, tune-wave, campaign-wave,
# confirm-wave, campaign-torch, energy (default: env profile overhead torch torch-caches).
# BIN holds ciq-*; BIN/../lib the library. Everything goes to OUT/log.txt;
# traces and run directories to OUT/work (tar them for the trip back).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "$1" && pwd) out=$2
shift 2
steps=${*:-env profile overhead torch torch-caches}
cuda=${CUDA_HOME:-/usr/local/cuda}
export PATH="$bin:$cuda/bin:$PATH" CIQ_REAL_NVCC="$cuda/bin/nvcc" CIQ_REAL_PTXAS="$cuda/bin/ptxas"
work=$out/work
mkdir -p "$work"
export CIQ_CACHE_DIR="$work/cache"
lib=$(cd "$bin/../lib" && pwd)/libciq-inject.so
log() { printf '\n== %s (%s)\n' "$*" "$(date +%T)"; }
wave=/tmp/ciq-wave

build_wave() {
  [[ -x $wave/wave ]] && return 0
  CUDACXX="$bin/ciq-nvcc" cmake -S "$root/examples/wave" -B "$wave" >"$work/wave-configure.log" 2>&1 &&
    cmake --build "$wave" >"$work/wave-build.log" 2>&1 || { tail -20 "$work"/wave-*.log; return 1; }
}

# Median wall seconds and kernel-time ms of N interleaved runs with and
# without the library: prints one table row per side.
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
wall() { local t0; t0=$(now); "$@" >/dev/null 2>&1; local rc=$?; echo "$rc $(since "$t0")"; }

for step in $steps; do
  case $step in
  env)
    log "machine"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv
    nvcc --version | tail -2
    ls "$cuda"/extras/CUPTI/lib64/libcupti.so* "$cuda"/lib64/libcupti.so* 2>&1 | head
    python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
    ;;
  profile)
    log "build examples/wave through ciq-nvcc (CMake) and profile it"
    build_wave || continue
    grep -E "maxrregcount" "$work/wave-build.log" | head -1
    ciq-tuner profile --build "cmake --build $wave --clean-first" --out "$work/profile-wave" -- "$wave/wave" --steps 100
    echo "profile exit $?"
    ciq-tuner profile --trace "$work/profile-wave/kernels" --build-trace "$work/profile-wave/build-trace" --json >"$work/profile-wave.json"
    echo "--- the same program, CIQ_KERNEL_TRACE_VERBOSE=1, no ciq-tuner"
    CUDA_INJECTION64_PATH=$lib CIQ_KERNEL_TRACE=$work/verbose CIQ_KERNEL_TRACE_VERBOSE=1 "$wave/wave" --steps 20
    echo "exit $?"; head -c 600 "$work"/verbose/kernels-*.jsonl; echo
    ;;
  overhead)
    log "overhead: wave (wall) and bench programs (CUDA-event kernel times), 7 interleaved pairs each"
    build_wave || continue
    for k in stencil3d softmax reduce; do
      nvcc -O3 -arch=sm_90a -I "$root/bench/common" "$root/bench/kernels/$k.cu" -o "/tmp/bench_$k" || continue
    done
    echo "program,side,run,exit,wall_s,event_ms"
    for i in 1 2 3 4 5 6 7; do
      for side in off on; do
        if [[ $side == on ]]; then pre=(env CUDA_INJECTION64_PATH=$lib CIQ_KERNEL_TRACE=$work/overhead/$i); else pre=(env); fi
        echo "wave,$side,$i,$(wall "${pre[@]}" "$wave/wave" --steps 100 | tr ' ' ','),"
        for k in stencil3d softmax reduce; do
          t0=$(now); ms=$("${pre[@]}" "/tmp/bench_$k" --samples 50 2>/dev/null | sed -n 's/time_ms: //p'); rc=$?
          echo "$k,$side,$i,$rc,$(since "$t0"),$ms"
        done
      done
    done | tee "$work/overhead.csv"
    ;;
  torch)
    log "profile examples/torch/block.py (torch.compile; Triton through ciq-ptxas)"
    export TRITON_PTXAS_PATH=$bin/ciq-ptxas TORCHINDUCTOR_CACHE_DIR=$work/inductor TRITON_CACHE_DIR=$work/triton
    ciq-tuner profile --out "$work/profile-torch" -- python3 "$root/examples/torch/block.py" --steps 20
    echo "profile exit $?"
    ciq-tuner profile --trace "$work/profile-torch/kernels" --build-trace "$work/profile-torch/build-trace" --json >"$work/profile-torch.json"
    ls "$work/profile-torch/build-trace" | head -3; ls "$work/profile-torch/build-trace" | wc -l
    unset TRITON_PTXAS_PATH TORCHINDUCTOR_CACHE_DIR TRITON_CACHE_DIR
    ;;
  torch-caches)
    log "which caches make Triton recompile (ciq-ptxas calls per run, seconds per run)"
    export TRITON_PTXAS_PATH=$bin/ciq-ptxas
    shared=$work/caches/inductor-shared
    for case in cold warm-all warm-inductor-fresh-triton warm-inductor-fresh-triton-nobundle; do
      d=$work/caches/$case; mkdir -p "$d"
      case $case in
      cold) envs=(TORCHINDUCTOR_CACHE_DIR=$d/inductor TRITON_CACHE_DIR=$d/triton) ;;
      warm-all) envs=(TORCHINDUCTOR_CACHE_DIR=$shared TRITON_CACHE_DIR=$shared/triton) ;;
      warm-inductor-fresh-triton) envs=(TORCHINDUCTOR_CACHE_DIR=$shared TRITON_CACHE_DIR=$d/triton) ;;
      warm-inductor-fresh-triton-nobundle) envs=(TORCHINDUCTOR_CACHE_DIR=$shared TRITON_CACHE_DIR=$d/triton TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0) ;;
      esac
      [[ $case == warm-all ]] && env TORCHINDUCTOR_CACHE_DIR=$shared TRITON_CACHE_DIR=$shared/triton python3 "$root/examples/torch/block.py" --steps 2 >/dev/null 2>&1
      t0=$(now)
      env "${envs[@]}" CIQ_TRACE=$d/trace python3 "$root/examples/torch/block.py" --steps 20 >"$d/out.log" 2>&1
      rc=$?
      echo "$case: exit $rc, $(since "$t0") s, files in the ciq trace: $(find "$d/trace" -type f 2>/dev/null | wc -l)"
    done
    unset TRITON_PTXAS_PATH
    ;;
  tune-wave)
    log "tune examples/wave's propagate kernel by its own GPU time inside the program (kernel-time)"
    build_wave || continue
    "$wave/wave" --steps 100 -o "$work/wave-ref.bin" >/dev/null
    t0=$(now)
    ciq-tuner run --build "cmake --build $wave --clean-first" --bench "$wave/wave --steps 100 -o {workdir}/out.bin" \
      --check "$wave/wave --compare $work/wave-ref.bin {workdir}/out.bin" --objective kernel-time --kernels "${TUNE_KERNELS:-*propagate*}" \
      --budget "${BUDGET:-10}" --repeats 3 --verify-runs "${VERIFY:-6}" --out "$work/tune-wave" --json >"$work/tune-wave.out" 2>"$work/tune-wave.log"
    echo "tuner exit $? in $(since "$t0") s"; tail -n 30 "$work/tune-wave.log"; tail -c 1500 "$work/tune-wave.out"
    ;;
  campaign-wave)
    log "campaign --from-profile on examples/wave: its hottest kernels, each by its own GPU time"
    build_wave || continue
    [[ -f $work/wave-ref.bin ]] || "$wave/wave" --steps 100 -o "$work/wave-ref.bin" >/dev/null
    t0=$(now)
    ciq-tuner campaign --from-profile --cover "${COVER:-90%}" --build "cmake --build $wave --clean-first" \
      --bench "$wave/wave --steps 100 -o {workdir}/out.bin" --check "$wave/wave --compare $work/wave-ref.bin {workdir}/out.bin" \
      --budget "${BUDGET:-16}" --repeats 3 --verify-runs "${VERIFY:-6}" --out "$work/campaign-wave" --json \
      >"$work/campaign-wave.out" 2>"$work/campaign-wave.log"
    echo "campaign exit $? in $(since "$t0") s"; grep -E "ciq-tuner: +[0-9.]+%|to tune|\[[0-9]+/[0-9]+\]|share|program" "$work/campaign-wave.log" | tail -n 25
    ;;
  campaign-torch)
    log "campaign --from-profile on examples/torch/block.py: its hottest Triton kernels, each by its own GPU time"
    # Fresh Inductor and Triton caches per evaluation: the only way the
    # program's kernels recompile with a candidate's controls (torch-caches).
    export TRITON_PTXAS_PATH=$bin/ciq-ptxas
    t0=$(now)
    ciq-tuner campaign --from-profile --cover "${TCOVER:-50%}" \
      --bench "env TORCHINDUCTOR_CACHE_DIR={workdir}/inductor TRITON_CACHE_DIR={workdir}/triton python3 $root/examples/torch/block.py --steps 20" \
      --budget "${TBUDGET:-4}" --repeats 1 --verify-runs "${TVERIFY:-3}" --out "$work/campaign-torch" --json \
      >"$work/campaign-torch.out" 2>"$work/campaign-torch.log"
    echo "campaign exit $? in $(since "$t0") s"; grep -vE "^ciq-tuner: \[gen|ETA" "$work/campaign-torch.log" | tail -n 30
    unset TRITON_PTXAS_PATH
    ;;
  confirm-wave)
    log "confirm: fresh CMake builds with ciq on (the cache applies) and off, 8 interleaved runs each"
    for side in on off; do
      rm -rf "/tmp/wave-$side"
      if [[ $side == off ]]; then export CIQ_DISABLE=1; fi
      CUDACXX="$bin/ciq-nvcc" cmake -S "$root/examples/wave" -B "/tmp/wave-$side" >/dev/null 2>&1 &&
        cmake --build "/tmp/wave-$side" >"$work/confirm-build-$side.log" 2>&1 || echo "build $side failed"
      unset CIQ_DISABLE
    done
    ciq-cache stats | grep -E "^ +(hit|applied)"
    echo "side,run,wall_s,kernel_total_ms,propagate_ms,absorb_ms"
    for i in 1 2 3 4 5 6 7 8; do
      for side in off on; do
        w=$(wall "/tmp/wave-$side/wave" --steps 100 | cut -d' ' -f2)
        ciq-tuner profile --json --out "$work/confirm/$side-$i" -- "/tmp/wave-$side/wave" --steps 100 2>/dev/null >"$work/confirm-$side-$i.json"
        python3 - "$work/confirm-$side-$i.json" "$side,$i,$w" <<'PY'
import json, sys
j = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
k = {x["kernel"]: x["total_ns"] / 1e6 for x in j["kernels"]}
pick = lambda s: sum(v for n, v in k.items() if s in n)
print(f"{sys.argv[2]},{j['total_ns'] / 1e6:.3f},{pick('propagate'):.3f},{pick('absorb'):.3f}")
PY
      done
    done | tee "$work/confirm-wave.csv"
    python3 - "$work/confirm-wave.csv" <<'PY'
import csv, statistics as st, sys
rows = [r.split(",") for r in open(sys.argv[1]).read().split()]
for col, name in ((2, "wall s"), (3, "kernels ms"), (4, "propagate ms"), (5, "absorb ms")):
    v = {s: [float(r[col]) for r in rows if r[0] == s] for s in ("off", "on")}
    m = {s: st.median(v[s]) for s in v}
    print(f"{name}: off {m['off']:.3f} [{min(v['off']):.3f}-{max(v['off']):.3f}], on {m['on']:.3f} [{min(v['on']):.3f}-{max(v['on']):.3f}], off/on {m['off'] / m['on']:.3f}")
PY
    ;;
  energy)
    log "NVML's energy counter: how often it moves; energy and time of bench programs (issue 26)"
    python3 - <<'PY'
import ctypes, time
nvml = ctypes.CDLL("libnvidia-ml.so.1")
assert nvml.nvmlInit_v2() == 0
dev = ctypes.c_void_p()
nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev))
e = ctypes.c_ulonglong()
last, changes, t0 = None, [], time.perf_counter()
while time.perf_counter() - t0 < 2.0:
    nvml.nvmlDeviceGetTotalEnergyConsumption(dev, ctypes.byref(e))
    if last is not None and e.value != last:
        changes.append(time.perf_counter())
    last = e.value
gaps = [b - a for a, b in zip(changes, changes[1:])]
gaps.sort()
print(f"idle: the counter moved {len(changes)} times in 2 s; median gap {1000 * gaps[len(gaps) // 2] if gaps else float('nan'):.1f} ms")
PY
    for k in stencil3d softmax; do
      [[ -x /tmp/bench_$k ]] || nvcc -O3 -arch=sm_90a -I "$root/bench/common" "$root/bench/kernels/$k.cu" -o "/tmp/bench_$k"
      t0=$(now)
      ciq-tuner run --build "ciq-nvcc -O3 -arch=sm_90a -I $root/bench/common $root/bench/kernels/$k.cu -o {workdir}/bench" \
        --bench "{workdir}/bench --samples ${SAMPLES:-200}" --metric 'time_ms: ([0-9.]+)' --objective energy \
        --check "{workdir}/bench --check" --budget "${EBUDGET:-8}" --repeats 2 --verify-runs 4 --no-ship \
        --out "$work/energy-$k" --json >"$work/energy-$k.out" 2>"$work/energy-$k.log"
      echo "$k: exit $? in $(since "$t0") s"; grep -E "front|default|verdict" "$work/energy-$k.log" | tail -n 12
      head -c 700 "$work/energy-$k/journal.jsonl"; echo
    done
    ;;
  *) echo "unknown step $step" ;;
  esac
done
