#!/usr/bin/env python3
"""A benchmark for the energy objective's tests: it 'uses' ((X - 3)^2 + 1) J
by adding that to the fake NVML's counter (test/nvml/fake_nvml.c reads the
state file), and prints time_ms: 10 - X (so time and energy disagree:
a front). Options set what the GPU ran under for this run:

  fake_energy_bench.py X STATE [--reasons BITS] [--sm MHZ] [--no-energy] [--hot-at X]

--hot-at X: the GPU is thermally throttled (1410 MHz) in runs of that X;
--idle-at X: it idles at 345 MHz in them (NVML's gpu-idle reason).
"""
import os
import sys
import time

x, path = float(sys.argv[1]), sys.argv[2]
args = sys.argv[3:]
state = {}
try:
    for line in open(path):
        key, value = line.split()
        state[key] = int(value)
except FileNotFoundError:
    pass
state["energy_mj"] = state.get("energy_mj", 0) + int(((x - 3) ** 2 + 1) * 1000)
state["reasons"] = int(args[args.index("--reasons") + 1], 0) if "--reasons" in args else 0
state["sm_mhz"] = int(args[args.index("--sm") + 1]) if "--sm" in args else 1980
if "--idle-at" in args and float(args[args.index("--idle-at") + 1]) == x:
    state["reasons"], state["sm_mhz"] = 0x1, 345  # idle at the lowest clock: says nothing of the kernels
if "--hot-at" in args and float(args[args.index("--hot-at") + 1]) == x:
    state["reasons"], state["sm_mhz"] = 0x40, 1410
if "--no-energy" in args:
    state["energy_mj"] -= int(((x - 3) ** 2 + 1) * 1000)


def write():
    with open(path + ".tmp", "w") as f:
        f.write("".join(f"{k} {v}\n" for k, v in state.items()))
    os.replace(path + ".tmp", path)


write()
time.sleep(0.1)  # the conditions last while it runs: the tuner samples every 20 ms
state["reasons"], state["sm_mhz"] = 0, 1980
write()
print(f"time_ms: {10 - x}")
