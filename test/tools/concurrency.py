#!/usr/bin/env python3
"""32 ciq-ptxas compiles in parallel while ciq-cache writes other entries.

Usage: concurrency.py CIQ_PTXAS CIQ_CACHE PTX EXPECTED_CUBIN WORKDIR
Every compile must exit 0 with an output byte-identical to EXPECTED_CUBIN
(the tuned build) and nothing on stdout; every write must succeed. Prints
one summary line; exits 1 on the first problem found.
"""
import os
import subprocess
import sys

ciq_ptxas, ciq_cache, ptx, expected_path, work = sys.argv[1:6]
expected = open(expected_path, "rb").read()
readers = []
for i in range(32):
    out = os.path.join(work, f"r{i}.cubin")
    p = subprocess.Popen([ciq_ptxas, "-arch=sm_90a", "-m64", ptx, "-o", out],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    readers.append((p, out))

# The writer stores entries under other keys (other flags) meanwhile.
writes = 0
for level in range(0, 3):
    for regs in (32, 40, 48, 56):
        r = subprocess.run([ciq_cache, "put", "--ptx", ptx, "--arch", "sm_90a",
                            f"--flags=--opt-level={level}", f"--set=maxrregcount={regs}"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            sys.exit(f"writer failed: {r.stderr.decode()}")
        writes += 1

bad = 0
for p, out in readers:
    stdout, stderr = p.communicate()
    if p.returncode != 0 or stdout or open(out, "rb").read() != expected:
        bad += 1
        sys.stderr.write(f"reader {out}: exit {p.returncode}, stdout {stdout!r}, stderr {stderr.decode()}\n")
print(f"readers=32 bad={bad} writes={writes}")
sys.exit(1 if bad else 0)
