#!/usr/bin/env python3
"""A stand-in benchmark for ciq-tuner tests: prints `f=<x*x + y>`.

  objective.py X Y [--log FILE] [--sleep S]

Failure modes, to check the tuner survives them: y == 3 and x > 15 crashes
(SIGSEGV); y == 3 and 10 < x <= 15 prints no number; x == 2 sleeps 30 s
(for --timeout); a --log FILE gets one line per call.
"""
import os
import signal
import sys
import time

x, y = float(sys.argv[1]), float(sys.argv[2])
args = sys.argv[3:]
if "--log" in args:
    with open(args[args.index("--log") + 1], "a") as f:
        f.write(f"{x} {y}\n")
if "--sleep" in args:
    time.sleep(float(args[args.index("--sleep") + 1]))
if y == 3 and x > 15:
    os.kill(os.getpid(), signal.SIGSEGV)
if y == 3 and 10 < x <= 15:
    print("the answer is unclear")
    sys.exit(0)
if x == 2:
    time.sleep(30)
print(f"f={x * x + y}")
