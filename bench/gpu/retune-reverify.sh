#!/usr/bin/env bash
# Issue 38 on the GPU machine: an entry tuned and verified here, then
# `ciq-tuner reverify` (does it still win?) and `ciq-tuner retune` (tune it
# again from its recorded run) on the same machine, by the kernel's own time
# inside the program (--objective kernel-time:NAME, libciq-inject) with the
# program as --bench. Then the two stale cases: another GPU model named
# (--gpu), and a toolkit "upgrade" (test/tools/ptxas_release.py: the real
# ptxas reporting release 13.2), each re-tuned with `retune --stale`.
#
#   bench/gpu/retune-reverify.sh BIN OUT [KERNEL:NAME] [BUDGET]   (default stencil3d:wave_step 16)
# Writes OUT/: work/ (the runs' working directory), cache/, tune/ (the
# first run), reverify-*/ and retune-*/ (their runs and logs), *.txt (each
# command's table), *.json (the same with --json), commands.txt.
source "$(dirname "$0")/common.sh"
shift 2
spec=${1:-stencil3d:wave_step} budget=${2:-16}
kernel=${spec%%:*} name=${spec#*:}
export PATH="$bin:$cuda/bin:$PATH" CIQ_REAL_NVCC="$cuda/bin/nvcc" CIQ_REAL_PTXAS="$cuda/bin/ptxas"
export CIQ_INJECT_LIBRARY=$(cd "$bin/../lib" && pwd)/libciq-inject.so
export CIQ_CACHE_DIR=$out/cache
rm -rf "$out/work" "$out/cache" "$out"/tune "$out"/reverify-* "$out"/retune-*
mkdir -p "$out/work" && cd "$out/work" || exit 1
flags="-O3 -DNDEBUG -arch=sm_90a -I $root/bench/common $root/bench/kernels/$kernel.cu"
step() { # NAME COMMAND...: run it, its stdout to OUT/NAME.txt, stderr to OUT/NAME.log, timed
  local what=$1; shift
  echo "$*" >>"$out/commands.txt"
  local t0=$SECONDS
  "$@" >"$out/$what.txt" 2>"$out/$what.log"
  local rc=$?
  echo "== $what: exit $rc in $((SECONDS - t0)) s"
  cat "$out/$what.txt"
}
: >"$out/commands.txt"

step tune ciq-tuner run --build "ciq-nvcc $flags -o {workdir}/bench" --bench "{workdir}/bench --samples 30" \
  --check "{workdir}/bench --check" --objective "kernel-time:$name" --budget "$budget" --repeats 3 --verify-runs 8 \
  --seed 1 --out "$out/tune" --json
grep -E "verdict|shipped" "$out/tune.log" | tail -n 2
step list ciq-cache list
step reverify-1 ciq-tuner reverify --out "$out/reverify-1"
step reverify-20 ciq-tuner reverify --runs 20 --json --out "$out/reverify-20"
step retune-dry ciq-tuner retune --kernels '*' --dry-run
step retune-same ciq-tuner retune --kernels '*' --out "$out/retune-same"
step list-after-retune ciq-cache list

# Another GPU model named: the entries are stale by GPU; retune them here.
step stale-gpu ciq-cache stale --gpu 'NVIDIA B200'
step retune-gpu ciq-tuner retune --stale --gpu 'NVIDIA B200' --out "$out/retune-gpu"

# A toolkit upgrade: the same ptxas reporting 13.2, so every key changes.
export CIQ_REAL_PTXAS=$root/test/tools/ptxas_release.py PTXAS_RELEASE_REAL=$cuda/bin/ptxas PTXAS_RELEASE=13.2
step stale-toolkit ciq-cache stale
step retune-toolkit ciq-tuner retune --stale --json --out "$out/retune-toolkit"
step list-after-upgrade ciq-cache list
step reverify-upgrade ciq-tuner reverify --out "$out/reverify-upgrade"
