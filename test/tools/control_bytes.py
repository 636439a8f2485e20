#!/usr/bin/env python3
"""Copies stdin to stdout, then says how many bytes a terminal would act on
instead of showing: `control bytes: N`. Counted: C0 controls but '\n', DEL,
and C1 controls (raw 0x80-0x9f outside UTF-8, or U+0080-U+009F in it).
FileCheck cannot match a raw ESC, so tests check `control bytes: 0`.

  COMMAND 2>&1 | control_bytes.py | FileCheck ...
"""
import sys

data = sys.stdin.buffer.read()
sys.stdout.buffer.write(data)
text = data.decode("utf-8", errors="surrogateescape")
count = 0
for ch in text:
    c = ord(ch)
    if (c < 0x20 and ch != "\n") or c == 0x7F or 0x80 <= c <= 0x9F:
        count += 1
    elif 0xDC80 <= c <= 0xDC9F:  # a raw byte 0x80-0x9f that is not UTF-8
        count += 1
sys.stdout.write("\ncontrol bytes: %d\n" % count)
