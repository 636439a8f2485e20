#!/usr/bin/env bash
# Issue 34 on the GPU machine: kernel capture and replay measured on a
# program nobody here wrote, llm.c's GPT-2 training (train_gpt2.cu, built by
# its own Makefile through ciq-nvcc; a copy in LLMC, random weights -e d12,
# random tokens from llmc_data.py), against today's program-run campaign.
#
#   bench/gpu/capture-replay.sh BIN OUT LLMC [STEP...]
# STEP: env smoke build replay program together confirm confirm-cost torch
# (default: env smoke build replay program confirm). KERNELS: a --kernels
# glob for the replay campaign. torch: the same capture/replay campaign on a torch.compile'd
# transformers GPT-2 (gpt2_compile.py; Triton's ptxas is ciq-ptxas, fresh
# Triton and Inductor caches per evaluation).
# BIN holds ciq-*; BIN/../lib libciq-inject.so. Everything goes to
# OUT/log.txt (wall times as "== STEP took S s"); run directories to OUT/work.
source "$(dirname "$0")/common.sh"
llmc_src=$(cd "$3" && pwd)
shift 3
steps=${*:-env smoke build replay program confirm}
export PATH="$bin:$cuda/bin:$PATH" CIQ_REAL_NVCC="$cuda/bin/nvcc" CIQ_REAL_PTXAS="$cuda/bin/ptxas"
export CIQ_INJECT_LIBRARY=$(cd "$bin/../lib" && pwd)/libciq-inject.so
work=$out/work
mkdir -p "$work"
export CIQ_CACHE_DIR=$work/cache
llmc=/tmp/ciq-llmc
exec > >(tee -a "$out/log.txt") 2>&1
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
build="make -C $llmc -B train_gpt2cu NVCC=$bin/ciq-nvcc NO_MULTI_GPU=1 USE_CUDNN=0 GPU_COMPUTE_CAPABILITY=90"
# Ten training steps of GPT-2 124M, B=4, T=256 (T=1024 would make captures of ~3 GB each); no validation until the end, no sampling.
program="$llmc/train_gpt2cu -i $llmc/data/train.bin -j $llmc/data/val.bin -e d12 -b 4 -t 256 -x 10 -v 1000 -s 0 -m 2"

# The GPU's busy fraction while a step runs: nvidia-smi's utilization.gpu
# (the share of time a kernel was running) sampled every 500 ms.
busy_start() { nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 500 >"$work/busy-$1.txt" 2>/dev/null & busy_pid=$!; }
busy_stop() {
  kill "$busy_pid" 2>/dev/null; wait "$busy_pid" 2>/dev/null
  awk -v s="$1" '{ t += $1; n++ } END { if (n) printf "busy %s: %.1f %% of %d samples\n", s, t / n, n }' "$work/busy-$1.txt"
}

for step in $steps; do
  t0=$(now)
  printf '\n== %s (%s)\n' "$step" "$(date +%T)"
  case $step in
  env)
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv
    nvcc --version | tail -2
    ;;
  smoke)
    [[ -x $root/bench/gpu/replay-smoke.sh ]] && bash "$root/bench/gpu/replay-smoke.sh" "$bin" "$work/smoke"
    ;;
  build)
    rm -rf "$llmc" && cp -r "$llmc_src" "$llmc"
    python3 "$root/bench/gpu/llmc_data.py" "$llmc/data" 2000000
    $build >"$work/llmc-build.log" 2>&1 || { tail -30 "$work/llmc-build.log"; exit 1; }
    grep -E "nvcc|ciq" "$work/llmc-build.log" | head -3
    t1=$(now); $program >"$work/llmc-run.log" 2>&1; echo "program exit $? in $(since "$t1") s"
    grep -E "^step" "$work/llmc-run.log" | tail -3
    ;;
  replay)
    # The capture/replay campaign: profile, capture, replay per candidate,
    # confirm in the program.
    busy_start replay
    ciq-tuner campaign --from-profile --cover "${COVER:-80%}" --budget "${BUDGET:-32}" --build "$build" --bench "$program" \
      ${KERNELS:+--kernels "$KERNELS"} --check-program "${CHECK_PROGRAM:-5}" --out "$work/campaign-replay" --json >"$work/campaign-replay.json"
    echo "campaign exit $?"
    busy_stop replay
    ;;
  program)
    # Today's path on the hottest kernel the replay campaign tuned, budget
    # PROGRAM_BUDGET (8): every candidate a build and a run of the program.
    kernel=$(head -1 "$work/campaign-replay/kernels.txt")
    busy_start program
    ciq-tuner campaign --from-profile --capture-kernels=false --kernels "$kernel" --cover 100% --budget "${PROGRAM_BUDGET:-8}" \
      --build "$build" --bench "$program" --out "$work/campaign-program" --json >"$work/campaign-program.json"
    echo "campaign exit $?"
    busy_stop program
    ;;
  together)
    # Today's path improved by issue 34's 4b: the kernels the replay
    # campaign tuned, every one by its own time in the same program runs
    # (--capture-kernels=false --together: one `run --separately`, per-kernel
    # directives only), TOGETHER_BUDGET (16) program runs for all of them;
    # nothing shipped, so the cache of the replay campaign stays as it was.
    busy_start together
    ciq-tuner campaign --from-profile --capture-kernels=false --together --kernels "$(paste -sd, "$work/campaign-replay/kernels.txt" | sed 's/^/{/; s/$/}/')" \
      --cover 100% --budget "${TOGETHER_BUDGET:-16}" --no-ship \
      --build "$build" --bench "$program" --out "$work/campaign-together" --json >"$work/campaign-together.json"
    echo "campaign exit $?"
    busy_stop together
    ;;
  confirm-cost)
    # The first confirmation of the replay campaign run again as it was
    # before 158f23e (three program runs per evaluation, a discovery build
    # of its own), nothing shipped: the same machine's cost before and after.
    dir=$(ls -d "$work"/campaign-replay/runs/0*.replay 2>/dev/null | while read -r d; do
      [[ -f ${d%.replay}/summary.json ]] && echo "${d%.replay}"; done | head -1)
    [[ -n $dir ]] || { echo "no confirmation to run again"; continue; }
    kernel=$(awk 'p { k = $0; p = 0 } /^--kernels$/ { p = 1 } END { print k }' "$dir/command-line")
    t1=$(now)
    ciq-tuner run --build "$build" --bench "$program" --objective=kernel-time --kernels "$kernel" \
      --seed-controls "$dir.replay/best.controls" --budget 2 --occupancy-probes=false --prune=false --repeats 3 --no-ship \
      --out "$dir.before" >/dev/null 2>"$dir.before.log"
    echo "confirmation as before 158f23e: exit $? in $(since "$t1") s; the campaign's: $(( $(stat -c %Y "$dir/summary.json") - $(stat -c %Y "$dir/command-line") )) s ($(basename "$dir"))"
    ;;
  confirm)
    # Fresh builds, default (CIQ_DISABLE=1) and tuned (the cache), each in
    # its own copy; then 5 interleaved pairs of runs, each run's mean step
    # time (ms) over steps 2..10.
    for side in default tuned; do
      rm -rf "$llmc-$side" && cp -r "$llmc" "$llmc-$side"
      if [[ $side == default ]]; then
        CIQ_DISABLE=1 make -C "$llmc-$side" -B train_gpt2cu NVCC=$bin/ciq-nvcc NO_MULTI_GPU=1 USE_CUDNN=0 GPU_COMPUTE_CAPABILITY=90 >/dev/null 2>&1
      else
        # Traced: which controls the cache's entries gave the module.
        rm -rf "$work/tuned-trace" && mkdir -p "$work/tuned-trace"
        CIQ_TRACE=$work/tuned-trace make -C "$llmc-$side" -B train_gpt2cu NVCC=$bin/ciq-nvcc NO_MULTI_GPU=1 USE_CUDNN=0 GPU_COMPUTE_CAPABILITY=90 >/dev/null 2>&1
        cat "$work"/tuned-trace/*.json 2>/dev/null | grep -o '"controls":"[^"]*"' | sort | uniq -c
      fi
      echo "built $side: $?"
    done
    ciq-cache stats 2>&1 | head -20
    for i in 1 2 3 4 5; do
      for side in default tuned; do
        ${program//$llmc\/train_gpt2cu/$llmc-$side/train_gpt2cu} 2>/dev/null |
          awk -v side=$side -v i=$i '/^step +([2-9]|10)\// { for (f = 2; f <= NF; f++) if ($f == "ms") { s += $(f - 1); n++ } }
            END { printf "confirm %s %d mean_step_ms %.3f over %d steps\n", side, i, s / n, n }'
      done
    done
    ;;
  torch)
    busy_start torch
    TRITON_PTXAS_PATH=$bin/ciq-ptxas ciq-tuner campaign --from-profile --cover "${COVER:-80%}" --budget "${BUDGET:-32}" \
      --bench "env TRITON_CACHE_DIR={workdir}/triton TORCHINDUCTOR_CACHE_DIR={workdir}/inductor python3 $root/bench/gpu/gpt2_compile.py --steps 6" \
      --out "$work/campaign-torch" --json >"$work/campaign-torch.json"
    echo "campaign exit $?"
    busy_stop torch
    ;;
  esac
  echo "== $step took $(since "$t0") s"
done
