#!/usr/bin/env python3
"""A benchmark for the energy objective's tests: it 'uses' ((X - 3)^2 + 1) J
by adding that to the fake NVML's counter (test/nvml/fake_nvml.c reads the
state file), and prints time_ms: 10 - X (so time and energy disagree:
a front). Options set what the GPU ran under for this run:

  fake_energy_bench.py X STATE [--reasons BITS] [--sm MHZ] [--no-energy] [--hot-at X]

--hot-at X: the GPU is thermally throttled (1410 MHz) in runs of that X;
--idle-at X: it idles at 345 MHz in them (NVML's gpu-idle reason).

  fake_energy_bench.py --serve STATE STARTUP_J

the same as a resident benchmark (--bench-server): it 'uses' STARTUP_J
joules starting up, then answers each request (its words: X and options,
as above) with the run's output and `ciq-status: ID 0`.
"""
import os
import sys
import time


def read_state(path):
    state = {}
    try:
        for line in open(path):
            key, value = line.split()
            state[key] = int(value)
    except FileNotFoundError:
        pass
    return state


def write_state(path, state):
    with open(path + ".tmp", "w") as f:
        f.write("".join(f"{k} {v}\n" for k, v in state.items()))
    os.replace(path + ".tmp", path)


def run(x, path, args):
    state = read_state(path)
    state["energy_mj"] = state.get("energy_mj", 0) + int(((x - 3) ** 2 + 1) * 1000)
    state["reasons"] = int(args[args.index("--reasons") + 1], 0) if "--reasons" in args else 0
    state["sm_mhz"] = int(args[args.index("--sm") + 1]) if "--sm" in args else 1980
    if "--idle-at" in args and float(args[args.index("--idle-at") + 1]) == x:
        state["reasons"], state["sm_mhz"] = 0x1, 345  # idle at the lowest clock: says nothing of the kernels
    if "--hot-at" in args and float(args[args.index("--hot-at") + 1]) == x:
        state["reasons"], state["sm_mhz"] = 0x40, 1410
    if "--no-energy" in args:
        state["energy_mj"] -= int(((x - 3) ** 2 + 1) * 1000)
    write_state(path, state)
    time.sleep(0.1)  # the conditions last while it runs: the tuner samples every 20 ms
    state["reasons"], state["sm_mhz"] = 0, 1980
    write_state(path, state)
    print(f"time_ms: {10 - x}")


if sys.argv[1] == "--serve":
    path = sys.argv[2]
    state = read_state(path)
    state["energy_mj"] = state.get("energy_mj", 0) + int(float(sys.argv[3]) * 1000)
    write_state(path, state)
    from server_requests import requests, status_line
    for request_id, words in requests():
        run(float(words[0]), path, words[1:])
        print(status_line(request_id, 0), flush=True)
else:
    run(float(sys.argv[1]), sys.argv[2], sys.argv[3:])
