#!/usr/bin/env python3
"""stamps_older.py MARK STAMPS_DIR: exit 0 when STAMPS_DIR holds stamps and
none was modified after MARK (a file touched before a build), else print the
late ones and exit 1. Ninja 1.12 and later record a command's start time for
its output and rebuild, on the next run, an output with a dependency modified
after that: a stamp dated during the compile would compile it once more."""
import os
import sys

mark = os.stat(sys.argv[1]).st_mtime_ns
names = sorted(os.listdir(sys.argv[2]))
late = [n for n in names if os.stat(os.path.join(sys.argv[2], n)).st_mtime_ns > mark]
if not names:
    sys.exit("no stamps in " + sys.argv[2])
if late:
    sys.exit("stamps modified after %s: %s" % (sys.argv[1], ", ".join(late)))
print("%d stamps, none modified after the mark" % len(names))
