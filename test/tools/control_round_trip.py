#!/usr/bin/env python3
"""Checks that the Python package (ciq.controls) reads control sets exactly
as the C++ side writes and reads them.

  control_round_trip.py CIQ_TEST_CONTROLS WORKDIR

For every value form format_control_set can write (plain, holding `#`,
backslashes or escapes, opening with `[`, with bytes Python's str methods
take for line breaks or blanks, non-UTF-8), as a module option, a kernel
directive and an NVVM-stage knob, and then all in one set: the C++ tool
writes the set, the C++ tool reads it back, ciq.controls reads it; the two
readings must be equal, and equal to the value written. Hand-written texts
(comments, spacing, CRLF) are read by both sides and compared likewise.
Prints one line per case, `ok` or `DIFFERS ...`; exit status 1 if any differs.
"""
import os
import subprocess
import sys

from ciq.controls import parse_control_set

TOOL, WORK = sys.argv[1], sys.argv[2]

# Values as add_assignment takes them: one word, no quotes.
VALUES = [
    b"64", b"a#b", b"#a", b"a#", b"##", b"a\\b", b"\\a", b"a\\", b"\\\\", b"a\\nb", b"a\\tb",
    b"[x", b"[x]", b"x]", b"a=b", b"=", b"k:v", b"a;b", b"#[\\", b"a\rb", b"a\fb", b"a\vb",
    b"a\x1cb", b"a\x1eb", "a\u0085b".encode(), "\u00a0a\u00a0".encode(), "a\u2028b".encode(),
    "caf\u00e9".encode(), b"a\xffb", b"sha256:00ff",
]
# An option, a directive, an NVVM-stage knob; numbered, so that one set holds them all.
KEYS = [b"knob%d", b"_Z5k$v.%d:maxnreg", b"nvcc.knob%d"]


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True)


def cpp_reading(path):
    """{(field, key): value} as the C++ reader reads file `path`; None if it refuses it."""
    r = run("read", path)
    if r.returncode != 0:
        return None
    out = {}
    for line in r.stdout.decode().splitlines():
        field, key, value = line.split(" ")
        unhex = lambda h: b"" if h == "-" else bytes.fromhex(h)
        out[(field, unhex(key))] = unhex(value)
    return out


def python_reading(text):
    """The same for ciq.controls (strings back to the file's bytes)."""
    cs = parse_control_set(text.decode("utf-8", errors="surrogateescape"))
    b = lambda s: s.encode("utf-8", errors="surrogateescape")
    out = {}
    if cs.space:
        out[("space", b"")] = b(cs.space)
    for k, v in cs.options.items():
        out[("option", b(k))] = b(v)
    for kernel, knobs in cs.directives.items():
        for k, v in knobs.items():
            out[("directive", b(kernel + ":" + k))] = b(v)
    if cs.acf:
        out[("acf", b"")] = b(cs.acf)
    if cs.nvcc_space:
        out[("nvcc-space", b"")] = b(cs.nvcc_space)
    for k, v in cs.nvcc.items():
        out[("nvcc", b(k))] = b(v)
    return out


def check(name, text, written=None):
    """Reads `text` both ways; `written`: the values the set was made of."""
    path = os.path.join(WORK, "case-%d.controls" % check.count)
    check.count += 1
    with open(path, "wb") as f:
        f.write(text)
    cpp, py = cpp_reading(path), python_reading(text)
    problems = []
    if cpp is None:
        problems.append("the C++ reader refuses it")
    elif cpp != py:
        problems.append("C++ reads %r, Python %r" % (cpp, py))
    if written is not None and sorted(py.values()) != sorted(written):
        problems.append("written %r, Python reads %r" % (written, sorted(py.values())))
    print(ascii(name), "DIFFERS: " + "; ".join(problems) if problems else "ok")
    return not problems


check.count = 0


def main():
    os.makedirs(WORK, exist_ok=True)
    good = True
    everything, written = [], []
    for key in KEYS:
        for i, value in enumerate(VALUES):
            assignment = key % i + b"=" + value
            r = run("write", assignment)
            if r.returncode != 0:
                print(ascii(assignment), "DIFFERS: the C++ writer refuses it:", r.stderr.decode().strip())
                good = False
                continue
            line = r.stdout.split(b"\n")[1]  # after the format line
            good &= check(line.decode("utf-8", errors="surrogateescape"), r.stdout, [value])
            everything.append(assignment)
            written.append(value)
    r = run("write", "space=ptxas-13", "nvcc-space=nvcc-13", "acf=sha256:" + "ab" * 32, *everything)
    good &= check("all in one set", r.stdout, written + [b"ptxas-13", b"nvcc-13", b"sha256:" + b"ab" * 32])
    for name, text in [
        ("comments and spacing",
         b"# a comment\n  format=ciq-controls/1\n\nmaxrregcount=64 # why\nk:maxnreg =\t96\t\n  # indented\n"),
        ("a quoted value and a comment", b'opt = "a#b" # said\nflag = "x\\\\y"   \n'),
        ("CRLF lines", b"format = ciq-controls/1\r\nmaxrregcount = 32\r\nnvcc.fmad = 0\r\n"),
        ("a later line wins", b"maxrregcount = 32\nmaxrregcount = 64\n"),
        ("a hash inside an unquoted value", b"opt = a#b\n"),
    ]:
        good &= check(name, text)
    print("all read the same" if good else "some differ")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
