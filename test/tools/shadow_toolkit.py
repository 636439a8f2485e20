#!/usr/bin/env python3
"""A shadow of a CUDA Toolkit: a tree of symlinks to the real one with some
files replaced, so that a test can give nvcc a tool of its own where nvcc
itself names the path (it runs "$CICC_PATH/cicc" under its own directory).

    shadow_toolkit.py CUDA_HOME DEST REL=FILE [REL=FILE...]
e.g. shadow_toolkit.py /usr/local/cuda /tmp/cuda bin/nvcc=/usr/local/cuda/bin/nvcc nvvm/bin/cicc=warning_cicc.sh
(nvcc finds its tools through "bin/..": name bin/nvcc so that bin is a
directory of the shadow, not a link into the real toolkit)
"""
import os
import sys


def shadow(real, dest, replaced):
    """Links every entry of `real` into `dest`, descending only into the
    directories on the way to a replaced file."""
    os.makedirs(dest, exist_ok=True)
    below = {}
    for rel, target in replaced.items():
        head, _, rest = rel.partition("/")
        below.setdefault(head, {})
        if rest:
            below[head][rest] = target
        else:
            below[head] = target
    for name in sorted(os.listdir(real)):
        if name not in below:
            os.symlink(os.path.join(real, name), os.path.join(dest, name))
    for name, inner in below.items():
        if isinstance(inner, dict):
            shadow(os.path.join(real, name), os.path.join(dest, name), inner)
        else:
            os.symlink(os.path.abspath(inner), os.path.join(dest, name))


def main():
    if len(sys.argv) < 4 or any("=" not in a for a in sys.argv[3:]):
        sys.exit(__doc__)
    shadow(sys.argv[1], sys.argv[2], dict(a.split("=", 1) for a in sys.argv[3:]))


if __name__ == "__main__":
    main()
