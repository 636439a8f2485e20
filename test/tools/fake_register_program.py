#!/usr/bin/env python3
"""A stand-in for a user's program run under libciq-inject whose kernels'
times depend on their own compiled code, for machines without a GPU: it
reads the register count of every kernel of CUBIN (the cubin the --build
compiled through ciq-ptxas: EIATTR_REGCOUNT in its .nv.info section) and
writes the kernel trace libciq-inject would (tuner/formats/kernel_trace.h)
into $CIQ_KERNEL_TRACE, each kernel's time a function of its own registers
only. So a candidate's knobs for one kernel change that kernel's time and
no other's, as per-kernel directives do on a GPU.

  fake_register_program.py CUBIN [--best KERNEL=REGS[*WEIGHT],...] [--flat KERNEL,...] [--absent KERNEL,...]

A kernel named in --best takes 10 + WEIGHT * |registers - REGS| / 8 ms
(fastest at REGS registers; WEIGHT 1 unless given); one in --flat 10 ms
whatever its code; any other 5 ms. A kernel in --absent is not launched
(not in the trace). FAKE_REGISTER_BEST in the environment (the --best
form) overrides --best kernel by kernel: the program as it behaves after
a change (a driver update, say) without another command line.
Each run appends "KERNEL REGISTERS" lines to CUBIN.runs (what the program
saw), so that a test can count the program's runs. With
FAKE_REGISTER_FAIL_AFTER=N, every run after the first N (counted in
CUBIN.count) fails: status 1, "launch failed", no trace (a GPU gone bad).
"""
import json
import os
import struct
import sys


def register_counts(path):
    """{kernel: registers} from the cubin's .nv.info (EIATTR_REGCOUNT, 0x2f)."""
    data = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]

    def name(table, offset):
        start = sections[table][4] + offset
        return data[start:data.index(b"\0", start)].decode()

    named = {name(shstrndx, s[0]): s for s in sections}
    symtab, strtab = named[".symtab"], sections.index(named[".strtab"])
    symbols = [name(strtab, struct.unpack_from("<I", data, symtab[4] + i * 24)[0]) for i in range(symtab[5] // 24)]
    info = named[".nv.info"]
    counts, at, end = {}, info[4], info[4] + info[5]
    while at < end:
        form, attribute = data[at], data[at + 1]
        if form == 0x04:  # a sized value
            size, = struct.unpack_from("<H", data, at + 2)
            if attribute == 0x2F:
                symbol, registers = struct.unpack_from("<II", data, at + 4)
                counts[symbols[symbol]] = registers
            at += 4 + size
        elif form == 0x03:  # a 16-bit value
            at += 4
        elif form == 0x02:  # an 8-bit value
            at += 3
        else:
            at += 2
    return counts


def option(args, flag):
    return [p for p in args[args.index(flag) + 1].split(",") if p] if flag in args else []


args = sys.argv[1:]
cubin = args[0]
best = {k: v for k, v in (p.split("=") for p in option(args, "--best"))}
best.update(dict(p.split("=") for p in os.environ.get("FAKE_REGISTER_BEST", "").split(",") if p))
weight = {k: float(v.split("*")[1]) if "*" in v else 1.0 for k, v in best.items()}
best = {k: int(v.split("*")[0]) for k, v in best.items()}
flat = set(option(args, "--flat"))
absent = set(option(args, "--absent"))
counts = register_counts(cubin)
fail_after = int(os.environ.get("FAKE_REGISTER_FAIL_AFTER", "-1"))
if fail_after >= 0:
    ran = int(open(cubin + ".count").read()) if os.path.exists(cubin + ".count") else 0
    open(cubin + ".count", "w").write(str(ran + 1))
    if ran >= fail_after:
        sys.exit("launch failed: an illegal memory access was encountered")
with open(cubin + ".runs", "a") as f:
    f.write("".join(f"{k} {r}\n" for k, r in sorted(counts.items())))
print("step done")
trace = os.environ.get("CIQ_KERNEL_TRACE", "")
if not trace:
    sys.exit(0)


def kernel(name, total_ms, registers):
    each = int(total_ms * 1e6)
    return {"kernel": name, "demangled": "", "device": 0, "grid": [128, 1, 1], "block": [256, 1, 1],
            "dynamic_smem": 0, "static_smem": 0, "registers": registers, "local_bytes": 0, "launches": 1,
            "total_ns": each, "min_ns": each, "max_ns": each, "first_start_ns": 1, "last_end_ns": 1 + each,
            "durations_ns": [each], "code_xxh128": "", "module": -1}


lines = [{"ciq_kernel_trace": 1, "pid": os.getpid(), "exe": sys.executable, "status": "ok", "reason": "",
          "dropped_launches": 0, "dropped_records": 0, "incomplete_records": 0, "module_identity": "ok"}]
for name, registers in sorted(counts.items()):
    if name in absent:
        continue
    ms = 10 + weight[name] * abs(registers - best[name]) / 8 if name in best else 10 if name in flat else 5
    lines.append(kernel(name, ms, registers))
path = os.path.join(trace, f"kernels-{os.getpid()}.jsonl")
with open(path + ".tmp", "w") as f:
    f.write("".join(json.dumps(line) + "\n" for line in lines))
os.rename(path + ".tmp", path)
