#!/usr/bin/env python3
"""readme_map.py ROOT FOLDER: checks FOLDER/README.md's map of its files
against the files that exist. The map is the tables' first cells: each
name in backquotes, under the section heading it is in ("## measure/":
measure/NAME; any other heading: NAME from FOLDER), with NAME.{h,cpp}
standing for both and a bare name (`local_executor`) for whichever of
NAME.h and NAME.cpp exist; a name with another ending (`ciq/tune.py`,
`inject/exports.map`) stands for that file. Every C++ source and header,
Python module and linker map under FOLDER must be named (build files,
CMakeLists.txt and pyproject.toml, are not), and every name must exist.
Prints what is wrong; exit 1 if anything.
"""
import os
import re
import sys

root, folder = sys.argv[1], sys.argv[2]
base = os.path.join(root, folder)
text = open(os.path.join(base, "README.md"), encoding="utf-8").read()
existing = set()
for parent, _, files in os.walk(base):
    for name in files:
        if name.endswith((".h", ".cpp", ".py", ".map")) and "__pycache__" not in parent:
            existing.add(os.path.relpath(os.path.join(parent, name), base))

named, dangling = set(), []
section = ""
for line in text.splitlines():
    heading = re.match(r"^## (\S+)/\s*$", line)
    if line.startswith("## "):
        section = heading.group(1) + "/" if heading else ""
        continue
    if not line.startswith("| `"):
        continue
    first_cell = line.split("|")[1]
    for token in re.findall(r"`([^`]+)`", first_cell):
        path = token if "/" in token else section + token
        if token.endswith(".{h,cpp}"):
            stems = [path[: -len(".{h,cpp}")] + ext for ext in (".h", ".cpp")]
            missing = [p for p in stems if p not in existing]
            dangling += missing
            named.update(stems)
        elif token.endswith((".h", ".cpp", ".py", ".map")):
            (named.add(path) if path in existing else dangling.append(path))
        else:
            found = [path + ext for ext in (".h", ".cpp") if path + ext in existing]
            (named.update(found) if found else dangling.append(path + ".{h,cpp}"))

unnamed = sorted(existing - named)
for f in unnamed:
    print("%s/README.md does not name %s/%s" % (folder, folder, f))
for f in sorted(set(dangling)):
    print("%s/README.md names %s/%s, which does not exist" % (folder, folder, f))
if unnamed or dangling:
    sys.exit(1)
print("%s/README.md names all %d files of %s/" % (folder, len(existing), folder))
