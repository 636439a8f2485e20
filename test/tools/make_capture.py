#!/usr/bin/env python3
"""Writes a kernel capture by hand (the format of tuner/formats/capture.h),
for tests on a machine without a GPU.

  make_capture.py DIR KERNEL [--launches N] [--module-key KEY] [--compile PTX PTXAS TARGET ARG...]

DIR gets launch.json (grid 4, block 128, two pointer parameters into one
allocation of 4096 bytes and an int) and mem-0.bin; with --compile, also
module.ptx (a copy of PTX) and compile.json naming PTXAS, TARGET and the
ptxas arguments ARG... as `ciq-tuner profile` writes them, and the module's
key KEY ("" unless given). N: the launches of this configuration (3).
"""
import json
import os
import shutil
import sys

directory, kernel = sys.argv[1], sys.argv[2]
own = sys.argv[:sys.argv.index("--compile")] if "--compile" in sys.argv else sys.argv


def option(name, default):
    return own[own.index(name) + 1] if name in own else default


os.makedirs(directory, exist_ok=True)
base = 0x7F0000000000
memory = bytes(range(256)) * 16
open(os.path.join(directory, "mem-0.bin"), "wb").write(memory)
params = (base + 0).to_bytes(8, "little") + (base + 2048).to_bytes(8, "little") + (1024).to_bytes(4, "little")
launch = {
    "ciq_capture": 1, "kernel": kernel, "pid": 1, "exe": "/stand-in", "device": 0,
    "device_name": "stand-in GPU", "compute_capability": [9, 0],
    "grid": [4, 1, 1], "block": [128, 1, 1], "dynamic_smem": 0, "launch_api": "cuLaunchKernel",
    "params": [{"offset": 0, "size": 8}, {"offset": 8, "size": 8}, {"offset": 16, "size": 4}],
    "param_bytes": params.hex(),
    "pointers": [{"param": 0, "allocation": 0, "offset": 0}, {"param": 1, "allocation": 0, "offset": 2048}],
    "allocations": [{"base": hex(base), "size": len(memory), "file": "mem-0.bin",
                     "before_xxh128": "", "after_xxh128": ""}],
    "config_launches": int(option("--launches", 3)),
}
json.dump(launch, open(os.path.join(directory, "launch.json"), "w"))
if "--compile" in sys.argv:
    ptx, ptxas, target, *args = sys.argv[sys.argv.index("--compile") + 1:]
    shutil.copy(ptx, os.path.join(directory, "module.ptx"))
    json.dump({"ptx": "module.ptx", "ptxas": ptxas, "target": target, "args": args, "module_key": option("--module-key", "")},
              open(os.path.join(directory, "compile.json"), "w"))
