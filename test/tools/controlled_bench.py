#!/usr/bin/env python3
"""A benchmark whose numbers a test sets: prints `ms=<value>`.

  controlled_bench.py CONTROLS FILE

CONTROLS is the candidate's control set ({controls}). The default (a set
with no knob) takes 100 ms; any other set takes the number in FILE (read
at every run, so a test changes what a tuned entry is worth by writing
it). A little noise, as a real benchmark has.
"""
import random
import sys

controls, value_file = sys.argv[1], sys.argv[2]
reserved = ("format", "space", "nvcc-space")
knobs = [line for line in open(controls).read().splitlines()
         if "=" in line and not line.startswith("#") and line.split("=")[0].strip() not in reserved]
ms = float(open(value_file).read()) if knobs else 100.0
print(f"ms={ms + random.gauss(0, 0.05):.4f}")
