#!/usr/bin/env python3
"""Checks that every knob of a ciq space file changes the code ptxas
generates for at least one of the given PTX files.

Each knob is compiled through ciq-ptxas with a CIQ_CONTROLS file (so the
real rendering and directive editing are what is exercised), for a few
values of its domain, and the .text sections of the resulting cubin are
compared with the default build's. The cubin's other sections embed the
command line, so only code is compared.

  verify_space.py --ciq-ptxas BIN --ptxas BIN SPACE PTX... [--all]
  verify_space.py --ciq-nvcc BIN --nvcc BIN SPACE CU... [--all]

The second form checks a space of the NVVM stage (tool = cicc): each .cu is
compiled to PTX (`nvcc -ptx`, sm_90a) through ciq-nvcc, whose ciq-cicc
applies the knob (`nvcc.KNOB = VALUE` in CIQ_CONTROLS), and the PTX is
compared with the default build's.

Prints one line per knob: `KNOB changes code: VALUE on KERNEL-FILE`, or
`KNOB no effect on: ...`. Exits 1 if any knob changed nothing. With --all
every sampled value and file is tried and reported (slower; for the notes in
the space file).
"""
import argparse
import os
import re
import struct
import subprocess
import sys
import tempfile


def text_sections(cubin):
    """Concatenated contents of the ELF's .text.* sections, by name."""
    data = open(cubin, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise SystemExit(f"{cubin}: not a 64-bit ELF")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = []
    for i in range(shnum):
        name, _type, _flags, _addr, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        sections.append((name, off, size))
    str_off = sections[shstrndx][1]
    out = []
    for name, off, size in sections:
        end = data.index(b"\0", str_off + name)
        sname = data[str_off + name:end].decode()
        if sname.startswith(".text."):
            out.append((sname, data[off:off + size]))
    return sorted(out)


def parse_space(path):
    """(knobs, conflicts) from a space file, only what this script needs:
    knobs as {level, name, render, values, ...}, conflicts as {name, when,
    excludes} with when/excludes = (knob, [values])."""
    knobs, conflicts, current = [], [], None
    for raw in open(path):
        line = raw.split("#", 1)[0].strip()
        m = re.match(r"\[(option|directive|conflict)\.(.+)\]$", line)
        if m:
            current = {"level": m.group(1), "name": m.group(2), "values": [], "range": None, "dims": False}
            (conflicts if m.group(1) == "conflict" else knobs).append(current)
            continue
        if line.startswith("["):
            current = None
            continue
        if current is None or "=" not in line:
            continue
        key, value = (s.strip() for s in line.split("=", 1))
        if key == "values":
            current["values"] = [v.strip() for v in value.split(",") if v.strip()]
        elif key in ("range", "dims"):
            lo, hi = (int(v) for v in value.split(".."))
            current["range"] = (lo, hi)
            current["dims"] = key == "dims"
        elif key == "render":
            current["render"] = value
        elif key in ("when", "excludes"):
            knob, values = value.split(":", 1)
            current[key] = (knob.strip(), [v.strip() for v in values.split(",") if v.strip()])
        elif key == "effect":
            current["effect"] = value
    for k in knobs:
        if k["range"]:
            lo, hi = k["range"]
            if k["dims"]:
                k["values"] = ["1024", "512", "128"]
            elif hi <= 10:
                k["values"] = [str(v) for v in range(lo, hi + 1)]
            else:
                k["values"] = [str(v) for v in sorted({lo, 32, 64, 128, hi}) if lo <= v <= hi]
    return knobs, conflicts


def conflicts_hold(knobs, conflicts, ptxas, ptx, out):
    """Every pair a conflict names is refused by the real ptxas (effect =
    refused: a non-zero exit) or compiled with the warning that it ignores
    one of them (effect = ignored); `*` stands for the knob's test values.
    Returns the pairs it accepted without a word."""
    options = {k["name"]: k for k in knobs if k["level"] == "option"}
    accepted = []
    for c in conflicts:
        (knob, values), (excluded, excluded_values) = c["when"], c["excludes"]
        values = options[knob]["values"] if values == ["*"] else values
        excluded_values = options[excluded]["values"] if excluded_values == ["*"] else excluded_values
        ignored = c.get("effect") == "ignored"
        held = 0
        for v in values:
            for e in excluded_values:
                args = [options[knob]["render"].replace("{}", v), options[excluded]["render"].replace("{}", e)]
                r = subprocess.run([ptxas, "-arch=sm_90a", *args, ptx, "-o", out], capture_output=True, text=True)
                if ignored:
                    ok = r.returncode == 0 and "ignoring" in r.stderr
                else:
                    ok = r.returncode != 0
                if ok:
                    held += 1
                else:
                    accepted.append(f"{c['name']}: {' '.join(args)}")
        verb = "ignored a knob in" if ignored else "refused"
        print(f"conflict {c['name']}: ptxas {verb} {held} of {len(values) * len(excluded_values)} pairs")
    return accepted


def compile_with(ciq_ptxas, ptxas, ptx, controls, out, workdir):
    env = dict(os.environ, CIQ_REAL_PTXAS=ptxas, CIQ_CACHE_DIR=os.path.join(workdir, "cache"), CIQ_ALLOW_UNSAFE="1")
    if controls is not None:
        path = os.path.join(workdir, "candidate.controls")
        with open(path, "w") as f:
            f.write(controls)
        env["CIQ_CONTROLS"] = path
    r = subprocess.run([ciq_ptxas, "-arch=sm_90a", ptx, "-o", out], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return text_sections(out)


def compile_nvvm(ciq_nvcc, nvcc, cu, knob, value, out, workdir):
    """PTX text of `cu` built through ciq-nvcc with one NVVM-stage knob (none: the default); None if it failed."""
    env = dict(os.environ, CIQ_REAL_NVCC=nvcc, CIQ_CACHE_DIR=os.path.join(workdir, "cache"), CIQ_ALLOW_UNSAFE="1")
    if knob is not None:
        path = os.path.join(workdir, "candidate.controls")
        with open(path, "w") as f:
            f.write(f"nvcc.{knob} = {value}\n")
        env["CIQ_CONTROLS"] = path
    r = subprocess.run([ciq_nvcc, "-arch=sm_90a", "-ptx", cu, "-o", out], env=env, capture_output=True, text=True)
    return open(out).read() if r.returncode == 0 else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ciq-ptxas")
    ap.add_argument("--ptxas")
    ap.add_argument("--ciq-nvcc")
    ap.add_argument("--nvcc")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("space")
    ap.add_argument("ptx", nargs="+")
    a = ap.parse_args()

    work = tempfile.mkdtemp(prefix="ciq-verify-")
    knobs, conflicts = parse_space(a.space)
    if a.ciq_nvcc:
        out = os.path.join(work, "k.ptx")
        compile_knob = lambda cu, knob, value: compile_nvvm(a.ciq_nvcc, a.nvcc, cu, knob and knob["name"], value, out, work)
        sys.exit(1 if survey(knobs, a.ptx, compile_knob, "cicc", a.all) else 0)
    if not (a.ciq_ptxas and a.ptxas):
        ap.error("give --ciq-ptxas and --ptxas (a ptxas space) or --ciq-nvcc and --nvcc (an NVVM-stage space)")
    kernels = {p: re.findall(r"\.entry\s+([\w$]+)\s*\(", open(p).read()) for p in a.ptx}

    def compile_knob(ptx, knob, value):
        if knob is None:
            controls = None
        elif knob["level"] == "option":
            controls = f"{knob['name']} = {value}\n"
        else:
            controls = "".join(f"{k}:{knob['name']} = {value}\n" for k in kernels[ptx])
        return compile_with(a.ciq_ptxas, a.ptxas, ptx, controls, os.path.join(work, "k.cubin"), work)

    useless = survey(knobs, a.ptx, compile_knob, "ptxas", a.all)
    accepted = conflicts_hold(knobs, conflicts, a.ptxas, a.ptx[0], os.path.join(work, "conflict.cubin"))
    for pair in accepted:
        print(f"conflict {pair}: ptxas accepts it")
    sys.exit(1 if useless or accepted else 0)


def survey(knobs, inputs, compile_knob, tool, every):
    """Prints what each knob does to the code of `inputs` (compile_knob(input,
    knob, value) gives the code, None when the tool refused; knob None: the
    default); returns the names of the knobs that changed nothing."""
    defaults = {}
    for path in inputs:
        defaults[path] = compile_knob(path, None, None)
        if defaults[path] is None:
            raise SystemExit(f"default compile of {path} failed")
    useless = []
    for knob in knobs:
        effects = []
        for value in knob["values"]:
            for path in inputs:
                code = compile_knob(path, knob, value)
                if code is None:
                    effects.append(f"{value} on {os.path.basename(path)}: {tool} refused")
                elif code != defaults[path]:
                    effects.append(f"{value} on {os.path.basename(path)}")
                    if not every:
                        break
            if effects and not effects[-1].endswith("refused") and not every:
                break
        changed = [e for e in effects if not e.endswith("refused")]
        if changed:
            print(f"{knob['level']} {knob['name']} changes code: " + "; ".join(changed))
        else:
            useless.append(knob["name"])
            print(f"{knob['level']} {knob['name']} no effect on: " + ", ".join(os.path.basename(p) for p in inputs)
                  + (" (" + "; ".join(effects) + ")" if effects else ""))
    return useless


if __name__ == "__main__":
    main()
