#!/usr/bin/env python3
"""A scripted stand-in for nvcc: prints `fake-nvcc: <args>` to stderr, one
argument per line after it (so tests can check quoting), and answers
--version like nvcc."""
import sys

args = sys.argv[1:]
if "--version" in args:
    sys.stdout.write("nvcc: NVIDIA (R) Cuda compiler driver (fake)\nCuda compilation tools, release 13.0, V13.0.88\n")
    sys.exit(0)
sys.stderr.write("fake-nvcc: " + " ".join(args) + "\n")
for a in args:
    sys.stderr.write("arg: " + a + "\n")
