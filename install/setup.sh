#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a working ciq: installs the
# packages that are missing (install/deps.sh), builds ciq in ./build, and
# runs the main job on the bundled example (examples/run-example.sh).
#
#   install/setup.sh            # everything
#   install/setup.sh --no-run   # install and build only
#
# Afterwards put build/bin on PATH, or `cmake --install build --prefix DIR`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/install/deps.sh"
build=$("$root/install/configure.sh")   # the options install/test.sh uses too
cmake --build "$build" --target ciq-ptxas ciq-nvcc ciq-cicc ciq-cache ciq-tuner
echo "ciq: built into $build/bin" >&2
if [[ ${1:-} != --no-run ]]; then
  exec "$root/examples/run-example.sh" "$build/bin"
fi
