#!/usr/bin/env python3
"""What `cmake --install BUILD` would put where, read from a configured (not
built) build directory's cmake_install.cmake scripts: one line per file or
directory, `DESTINATION NAME`, sorted. For checking an install's contents
without building it (test/lit/install-portable-contents.test).

  install_plan.py BUILD
"""
import os
import re
import sys

rows = set()
for root, _, files in os.walk(sys.argv[1]):
    if "cmake_install.cmake" not in files:
        continue
    text = open(os.path.join(root, "cmake_install.cmake")).read()
    for call in re.findall(r"file\(INSTALL (.*?)\)\n", text, flags=re.S):
        dest = re.search(r'DESTINATION "\$\{CMAKE_INSTALL_PREFIX\}/([^"]*)"', call)
        parts = re.split(r"\sFILES\s", call, maxsplit=1)
        listed = re.split(r"\s(?:REGEX|PATTERN|FILES_MATCHING|PERMISSIONS|USE_SOURCE_PERMISSIONS)\s", parts[1])[0] if len(parts) > 1 else ""
        names = re.findall(r'"([^"]+)"', listed)
        for name in names:
            if dest:
                rows.add(f"{dest.group(1)} {os.path.basename(name)}")
for row in sorted(rows):
    print(row)
