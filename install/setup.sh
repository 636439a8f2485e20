#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a working ciq: installs the
# packages that are missing (install/deps.sh), builds in ./build everything
# `cmake --install` installs (target ciq-tools: ciq-ptxas, ciq-nvcc,
# ciq-cicc, ciq-cache, ciq-tuner, ciq-replay and, where the CUDA Toolkit has CUPTI's
# headers, lib/libciq-inject.so), runs the main job on the bundled example
# (examples/run-example.sh), and ends by saying how to use the build.
#
#   install/setup.sh            # everything
#   install/setup.sh --no-run   # install and build only
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/install/deps.sh"
build=$("$root/install/configure.sh")   # the options install/test.sh uses too
cmake --build "$build" --target ciq-tools
echo "ciq: built into $build (bin/, lib/, share/ciq/)" >&2
if [[ ${1:-} != --no-run ]]; then
  "$root/examples/run-example.sh" "$build/bin"
fi
# What to do next: the tools on PATH (in place, or installed), and the
# Python package into a virtual environment (offline: no index is needed).
cat <<EOF

Next: put ciq on PATH, in place or installed (bin/, lib/, share/ciq/):
  export PATH="$build/bin:\$PATH"    # or: cmake --install "$build" --prefix ~/.local
The Python package (import ciq), into a virtual environment:
  python3 -m venv ~/.venvs/ciq && ~/.venvs/ciq/bin/pip install "$root/tuner/python"
EOF
# Last: where the example's result is. run-example.sh tunes into a cache of
# its own, so a plain `ciq-cache list` (your cache) does not show it.
if [[ ${1:-} != --no-run ]]; then
  example_cache="${CIQ_EXAMPLE_DIR:-/tmp/ciq-example}/cache"
  echo
  echo "The example's tuned entry is in the example's own cache, not in yours (\$CIQ_CACHE_DIR, else ~/.cache/ciq):"
  CIQ_CACHE_DIR="$example_cache" "$build/bin/ciq-cache" list 2>&1 | sed 's/^/  /' || true
  echo "List it again with:"
  echo "  CIQ_CACHE_DIR=$example_cache $build/bin/ciq-cache list"
fi
