#!/usr/bin/env python3
"""A benchmark whose output attacks the tuner that reads it.

  hostile_bench.py MODE

normal       prints `f=2.5`
digits<N>    prints `f=` and N digits (a match std::regex recursed on per
             character; as a number it overflows a double)
flood<MiB>   prints `f=9` first, then MiB mebibytes of progress lines, then
             `f=1.5` (the result is in the tail)
backtrack    a long run of x (catastrophic for a backtracking regex like
             `(?:x+x+)+y=([0-9]+)`), then `xxy=7`
escapes      fails (exit 1) after printing terminal control sequences: a
             window title (OSC), clear screen (CSI), a C1 CSI (U+009B), a
             carriage return that overwrites, a byte that is not UTF-8
"""
import sys

mode = sys.argv[1]
out = sys.stdout
if mode == "normal":
    out.write("f=2.5\n")
elif mode.startswith("digits"):
    out.write("f=" + "1" * int(mode[6:]) + "\n")
elif mode.startswith("flood"):
    out.write("f=9\n")
    line = "progress: still going, nothing to see here\n" * 1024
    block = line * (1024 * 1024 // len(line) + 1)
    block = block[: 1024 * 1024]
    for _ in range(int(mode[5:])):
        out.write(block)
    out.write("\nf=1.5\n")
elif mode == "backtrack":
    out.write("x" * 5000 + "z\nxxy=7\n")
elif mode == "escapes":
    out.buffer.write(b"starting \x1b[31mred\x1b[0m\n")
    out.flush()
    sys.stderr.buffer.write(b"\x1b]0;pwned\x07error: \x1b[2J\x1b[Hcleared\rover \xc2\x9b31m c1 \xff\n")
    sys.stderr.flush()
    sys.exit(1)
else:
    sys.exit("unknown mode " + mode)
out.flush()
