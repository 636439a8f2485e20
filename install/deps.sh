#!/usr/bin/env bash
# Installs every Debian package ciq needs to build and test, and nothing that
# is already there. Safe to run again; needs root (or sudo) only when
# something is missing. The CUDA Toolkit is not a Debian package: it is found
# at $CUDA_HOME (default /usr/local/cuda) and only warned about when absent.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config python3
  python3-venv                  # pip install of the Python package into a venv (its test too)
  liblmdb-dev lmdb-utils        # the cache store
  libxxhash-dev                 # PTX hashing
  libspdlog-dev libfmt-dev      # logging
  libsodium-dev                 # SHA-256, hex, base64
  nlohmann-json3-dev            # JSON (header-only)
  libhiredis-dev                # the Redis protocol
  libminizip-dev                # ACF zips
  libboost-math-dev             # Welch's test: the t distribution
  libre2-dev                    # the tuner's user regexes (--metric), in linear time
  llvm-14-dev llvm-14-tools     # LLVM Support (cl::opt), lit, FileCheck, not
  zlib1g-dev libtinfo-dev       # what static LLVMSupport links against
  libgtest-dev libgmock-dev     # unit tests
  redis-server                  # the Redis team tier's tests (a real server on loopback)
  slurmctld slurmd slurm-client munge  # --executor slurm's tests (a one-node cluster on loopback)
  chromium                      # the report's test renders it headless
  ccache                        # tuned results through a compiler cache (depend mode): the build tests
  clang-14 libclang-rt-14-dev   # the libFuzzer targets (test/fuzz), with ASan and UBSan
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "ciq: installing ${missing[*]}" >&2
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cuda_home=${CUDA_HOME:-/usr/local/cuda}
if [[ ! -x "$cuda_home/bin/ptxas" ]]; then
  echo "ciq: warning: no CUDA Toolkit at $cuda_home (set CUDA_HOME); tests that need nvcc/ptxas will be skipped" >&2
fi
