# Sourced by the bench/gpu scripts that take `BIN OUT ...`: sets root (the
# repository), bin and out (absolute; OUT made), cuda, pkg (ciq's Python
# package: BIN/../share/ciq/python, else this checkout's), and shifts the two
# arguments off the caller's "$@" (call as: source common.sh; shift 2).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=$(cd "$1" && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$2"
out=$(cd "$2" && pwd)
pkg="$bin/../share/ciq/python"
[ -d "$pkg/ciq" ] || pkg="$root/tuner/python"
