#!/usr/bin/env python3
"""A tuning run whose run directory fills up: on a 1 MiB tmpfs, the
benchmark fills the file system at its fourth call. The tuner must stop with
an error (not warn and go on), leave a journal of whole lines, and resume to
its budget once there is room again.

  tuner_disk_full.py WORK CIQ_TUNER     (run as root: it mounts a tmpfs)
  tuner_disk_full.py bench X CALLS FILLER   (the benchmark)

Prints what it saw, one fact a line, for FileCheck."""
import json
import os
import subprocess
import sys

if sys.argv[1] == "bench":
    x, calls, filler = float(sys.argv[2]), sys.argv[3], sys.argv[4]
    n = int(open(calls).read()) + 1 if os.path.exists(calls) else 1
    open(calls, "w").write(str(n))
    if n == 4:
        try:
            with open(filler, "wb") as f:
                while True:
                    f.write(b"\0" * 4096)
                    f.flush()
        except OSError:
            pass
    print(f"f={x * x}")
    sys.exit(0)

work, tuner = sys.argv[1], sys.argv[2]
mnt = os.path.join(work, "mnt")
os.makedirs(mnt, exist_ok=True)
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt], check=True)
try:
    run = os.path.join(mnt, "run")
    bench = f"{sys.executable} {os.path.abspath(__file__)} bench {{param:x}} {work}/calls {mnt}/filler"
    args = [tuner, "run", "--space", "none", "--param", "x=range:1:40:1,default=5", "--bench", bench,
            "--metric", "f=([-0-9.e]+)", "--repeats", "1", "--budget", "16", "--verify-runs", "2", "--out", run]
    first = subprocess.run(args, capture_output=True, text=True)
    print("first run exit", first.returncode)
    for line in first.stderr.splitlines():
        if "error" in line or "stopped" in line:
            print(line)
    journal = open(os.path.join(run, "journal.jsonl"), "rb").read()
    print("journal ends in a newline:", "yes" if journal.endswith(b"\n") else "no")
    lines = journal.decode().splitlines()
    print("journal lines parse:", "yes" if all(json.loads(l) for l in lines) else "no")
    csv = open(os.path.join(run, "results.csv"), "rb").read()
    print("results.csv ends in a newline:", "yes" if csv.endswith(b"\n") else "no")

    os.unlink(os.path.join(mnt, "filler"))
    second = subprocess.run([tuner, "run", "--resume", run], capture_output=True, text=True)
    print("resume exit", second.returncode)
    if second.returncode:
        print(second.stderr)
    numbers = [json.loads(l)["n"] for l in open(os.path.join(run, "journal.jsonl"))]
    whole = sorted(numbers) == list(range(len(numbers)))
    print("journal numbers:", "0..n-1, each once" if whole else "gaps or repeats: " + str(sorted(numbers)),
          "(at least the budget)" if len(numbers) >= 16 else f"({len(numbers)}, under the budget)")
finally:
    subprocess.run(["umount", mnt])
