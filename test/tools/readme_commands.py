#!/usr/bin/env python3
"""Checks that the README's commands run as written (test/lit/readme-commands.test).

  readme_commands.py --readme README.md [--readme docs/PAGE.md ...] --bin BUILD/bin
                     --source REPO --work DIR [--fake-ptxas SCRIPT] [--list]

The README is its front page and the docs/ pages it links, given in
reading order and checked as one text.

The README's Environment table must list every variable `ciq-cache env`
does, and the sentence above it name exactly the rows marked libciq-inject,
the variables tuner/inject reads; its Layout names every entry of
examples/. Every command of the README's ```sh blocks, and every inline
`ciq-cache ...` or `ciq-tuner ...` in its prose, is classified and
reported, one line each:

  OPTS ok    its subcommand and every option exist (parsed from `--help`);
             done for every ciq-cache and ciq-tuner command
  EXEC ok    it was run, as written, and exited 0 (EXECUTED below: the
             self-contained, CPU-only ones, in README order, in DIR, with the
             fixtures named there; `/tmp/` is replaced by DIR/tmp/)
  SKIP why   not run here: it needs a GPU, the user's own project, root, a
             Slurm cluster or a Redis server (the reason is printed; the
             lit tests named there cover what it does)
  FAIL why   an unknown option or subcommand, a failed run, a README command
             this script does not classify, or an EXECUTED one the README
             no longer holds

Exit status 1 when anything failed. A needed tool that is missing (nvcc,
ptxas) turns an EXEC into a SKIP with that reason, never into a pass.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys

TOOLS = ("ciq-cache", "ciq-tuner")

# The self-contained commands: exact README text (continuations joined,
# comment dropped) -> (what it needs, where it runs). "nvcc"/"ptxas": the
# real CUDA tool (CPU-only compiles); "src": run in the repository root.
EXECUTED = {
    "nvcc -arch=sm_90a -ptx kernels.cu -o kernels.ptx": ("nvcc", "work"),
    "ciq-cache put --ptx kernels.ptx --arch sm_90a --set maxrregcount=128": ("", "work"),
    "ciq-cache put --ptx kernels.ptx --arch sm_90a --set _Z7heavy_aPKfPfi:maxnreg=96": ("", "work"),
    "ciq-cache put --ptx kernels.ptx --arch sm_90a --controls best.controls --acf tuned.acf": ("", "work"),
    "CIQ_TRACE=/tmp/t ciq-nvcc -arch=sm_90a -c kernels.cu -o kernels.o": ("nvcc", "work"),
    "ciq-cache put --unit 8069f59c996baf875bd23a8716ce54cd --set nvvm-version=nvvm-latest": ("nvcc", "work"),
    "ciq-nvcc -arch=sm_90a -c kernels.cu -o kernels.o": ("nvcc", "work"),
    "ciq-cache stats": ("", "work"),
    "ciq-cache list": ("", "work"),
    "ciq-cache env": ("", "work"),
    "export CIQ_REAL_PTXAS=/usr/local/cuda/bin/ptxas": ("ptxas", "work"),
    "ciq-tuner run --build 'ciq-ptxas -arch=sm_90a kernel.ptx -o {workdir}/kernel.cubin' "
    "--objective ptxas:spill-stores --budget 32": ("ptxas", "work"),
    "ciq-ptxas -arch=sm_90a kernel.ptx -o kernel.cubin": ("ptxas", "work"),
    "ciq-tuner run --replay bench/data/stencil3d.csv --budget 32 --seed 7 --out /tmp/replay-run --json": ("", "src"),
    "ciq-tuner run --replay bench/data/stencil3d.csv --budget 32 --seed 7 --strategy random --out /tmp/replay-random --json":
        ("", "src"),
    "ciq-cache export -o kernels.ciqpack --kernels '*attention*'": ("", "work"),
    "ciq-cache import kernels.ciqpack --dry-run": ("", "work"),
    "ciq-cache import kernels.ciqpack": ("", "work"),
    "ciq-cache merge mine.ciqpack theirs.ciqpack -o team.ciqpack": ("", "work"),
}

# Why the others are not run: the first pattern that matches.
SKIPPED = [
    (r"^install/", "installs Debian packages and builds ciq (CI runs install/test.sh itself)"),
    (r"^export PATH=|^cmake --install build ", "uses or installs the user's build of ciq (install-prefix.test installs one)"),
    (r"^python3 -m venv .*pip install", "a venv of the user's (python-pip-install.test, install-prefix.test make one)"),
    (r"cmake ", "builds the user's own CMake project (test/lit/*cmake*.test build a bundled one)"),
    (r"^cd my-project", "the user's own project"),
    (r"TRITON_PTXAS_PATH", "Triton (a GPU and its Python stack)"),
    (r"--executor slurm|^# on a login node", "a Slurm cluster (test/lit/slurm-*.test run one on loopback)"),
    (r"redis-server|push redis://|--publish|CIQ_REMOTE=", "a team Redis server (test/lit/remote-*.test, cache-push-secret.test)"),
    (r"^git ", "a git repository of the user's"),
    (r"CIQ_PACKS=", "the user's packs (test/lit/packs-read-through.test)"),
    (r"ciq-tuner run \.\.\.|ciq-tuner run$", "an elided command line ('...')"),
    (r"ciq-tuner campaign", "the user's project and a GPU benchmark (test/lit/campaign*.test)"),
    (r"f\.py", "the user's f.py (a function of the parameters; tuner-params-only.test runs one)"),
    (r"ciq\.serve", "the user's benchmark module (python-serve.test serves one)"),
    (r"--bench ", "a benchmark of the user's that runs on a GPU"),
    (r"bench/replay\.py", "minutes of CPU over every recorded kernel (test/lit/bench-replay*.test run it on a sample)"),
    (r"import-acfs", "an NVIDIA Booster Pack (test/lit/acf-booster-pack.test builds one)"),
    (r"ciq-cache (show|rm) 3fa2", "a key prefix of the user's cache ('3fa2'; cache-cli.test runs show and rm)"),
    (r"ciq-cache (verify|gc) \[", "optional flags in brackets (cache-cli.test, acf-refused-quarantine.test run them)"),
    (r"ciq-cache export / import / merge", "three commands named at once (run below, under Sharing across a team)"),
    (r"ciq-cache list --kernels", "follows a tuning run of the user's project"),
    (r"^export CIQ_GPU_(MODEL|POLICY)=", "a team's GPU policy, for the commands after it (gpu-policy.test sets one)"),
]


def code_blocks(text):
    """The commands of ```sh blocks: continuation lines joined, blank lines dropped."""
    out, block, pending = [], False, ""
    for line in text.splitlines():
        if line.startswith("```"):
            block = line.strip() == "```sh"
            continue
        if not block:
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1].strip() + " "
            continue
        line = (pending + line.strip()).strip()
        pending = ""
        if line:
            out.append(line)
    return out


def inline_commands(text):
    """`ciq-cache ...` / `ciq-tuner ...` spans of the prose (outside ```sh blocks)."""
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    spans = []
    for m in re.finditer(r"`([^`]+)`", prose):
        span = " ".join(m.group(1).split())
        words = span.split()
        while words and re.match(r"^[A-Z_]+=", words[0]):
            words = words[1:]
        if words and words[0] in TOOLS and len(words) > 1:
            spans.append(span)
    return spans


def without_comment(line):
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        tokens = list(lexer)
    except ValueError:
        return line, line.split()
    # The text before an unquoted '#': re-derive it by position.
    cut = line
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            cut = line[:i]
            break
    return cut.strip(), tokens


class Help:
    """Subcommands and options of a tool, from its --help output."""

    def __init__(self, bin_dir):
        self.bin_dir = bin_dir
        self.cache = {}

    def text(self, tool, sub):
        key = (tool, sub)
        if key not in self.cache:
            argv = [os.path.join(self.bin_dir, tool)] + ([sub] if sub else []) + ["--help"]
            run = subprocess.run(argv, capture_output=True, text=True)
            self.cache[key] = run.stdout + run.stderr
        return self.cache[key]

    def subcommands(self, tool):
        text = self.text(tool, "")
        part = text.split("SUBCOMMANDS:", 1)[1] if "SUBCOMMANDS:" in text else ""
        part = part.split("OPTIONS:", 1)[0]
        return set(re.findall(r"^\s+([a-z][a-z0-9-]*)\s+-", part, flags=re.M))

    def options(self, tool, sub):
        text = self.text(tool, sub) + self.text(tool, "")
        return set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", text))


def check_options(tokens, help_):
    """'' when the ciq-cache/ciq-tuner command in `tokens` is fine, else why not."""
    words = list(tokens)
    while words and re.match(r"^[A-Z_]+=", words[0]):
        words = words[1:]
    # Commands chained with && or ; are checked one by one.
    problems = []
    start = 0
    for i in range(len(words) + 1):
        if i == len(words) or words[i] in ("&&", "||", ";", "|", "&"):
            cmd = words[start:i]
            start = i + 1
            if not cmd or cmd[0] not in TOOLS:
                continue
            tool = cmd[0]
            sub = cmd[1] if len(cmd) > 1 and not cmd[1].startswith("-") else ""
            if sub and re.search(r"[<\[A-Z]", sub):
                continue  # a placeholder such as <sub>
            if sub and sub not in help_.subcommands(tool):
                problems.append(f"{tool} has no subcommand '{sub}'")
                continue
            known = help_.options(tool, sub)
            for word in cmd[2 if sub else 1:]:
                if word == "--":
                    break  # the program after `--` (profile) has options of its own
                word = word.strip("[],")
                if not word.startswith("-") or word in ("-", "--") or re.match(r"^-[0-9]", word):
                    continue
                name = word.split("=", 1)[0]
                if name not in known:
                    problems.append(f"'{tool} {sub}' has no option {name}".replace("  ", " "))
    return "; ".join(problems)


def make_fixtures(work, source, have_nvcc):
    inputs = os.path.join(source, "test", "lit", "Inputs")
    os.makedirs(os.path.join(work, "tmp"), exist_ok=True)
    shutil.copy(os.path.join(inputs, "two_kernels.cu"), os.path.join(work, "kernels.cu"))
    if not have_nvcc:  # what `nvcc -ptx` would have made
        shutil.copy(os.path.join(inputs, "two_kernels.ptx"), os.path.join(work, "kernels.ptx"))
    shutil.copy(os.path.join(inputs, "two_kernels.ptx"), os.path.join(work, "kernel.ptx"))
    with open(os.path.join(work, "best.controls"), "w") as f:
        f.write("space = ptxas-13\nregister-usage-level = 8\n")
    with open(os.path.join(work, "tuned.acf"), "wb") as f:
        f.write(b"an ACF you bring (stored as an opaque blob)\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--readme", required=True, action="append",
                    help="a page to check; repeat for the README and its docs/ pages, in reading order")
    ap.add_argument("--bin", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--fake-ptxas", default="")
    ap.add_argument("--list", action="store_true", help="classify only; run nothing")
    args = ap.parse_args()

    # The pages as one text, in the order given: the executed examples run
    # in that order, and the Environment table may be on any of them.
    text = "\n".join(open(page).read() for page in args.readme)
    args.bin = os.path.abspath(args.bin)
    args.source = os.path.abspath(args.source)
    help_ = Help(args.bin)
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    nvcc = shutil.which("nvcc") or (os.path.join(cuda, "bin", "nvcc") if os.access(os.path.join(cuda, "bin", "nvcc"), os.X_OK) else "")
    ptxas = os.path.join(cuda, "bin", "ptxas") if os.access(os.path.join(cuda, "bin", "ptxas"), os.X_OK) else ""
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    if not args.list:
        make_fixtures(work, args.source, bool(nvcc))

    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([args.bin] + ([os.path.dirname(nvcc)] if nvcc else []) + [env.get("PATH", "")])
    env["CIQ_CACHE_DIR"] = os.path.join(work, "cache")
    os.makedirs(env["CIQ_CACHE_DIR"], exist_ok=True)
    env["CIQ_REAL_PTXAS"] = ptxas or args.fake_ptxas
    if nvcc:
        env["CIQ_REAL_NVCC"] = nvcc

    counts = {"OPTS": 0, "EXEC": 0, "SKIP": 0, "FAIL": 0}

    def report(kind, what, line):
        counts[kind] += 1
        print(f"{kind} {what}  {line}")

    seen = set()
    for line in code_blocks(text):
        command, tokens = without_comment(line)
        if not command:
            continue
        seen.add(command)
        problem = check_options(tokens, help_)
        words = [t for t in tokens if not re.match(r"^[A-Z_]+=", t)]
        if words and words[0] in TOOLS:
            if problem:
                report("FAIL", problem + ":", command)
                continue
            report("OPTS", "ok", command)
        if command in EXECUTED:
            needs, where = EXECUTED[command]
            missing = {"nvcc": not nvcc, "ptxas": not ptxas}.get(needs, False)
            if missing:
                report("SKIP", f"no {needs} here (CUDA Toolkit):", command)
                continue
            if args.list:
                report("SKIP", "--list:", command)
                continue
            run_line = command.replace("/tmp/", work + "/tmp/")
            if command.startswith("ciq-cache merge"):  # two packs to merge: copies of the exported one
                for name in ("mine.ciqpack", "theirs.ciqpack"):
                    if os.path.exists(os.path.join(work, "kernels.ciqpack")):
                        shutil.copy(os.path.join(work, "kernels.ciqpack"), os.path.join(work, name))
            env_file = os.path.join(work, "env.out")
            script = f"set -e\n{run_line}\nenv -0 > '{env_file}'\n"
            cwd = args.source if where == "src" else work
            run = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True)
            if run.returncode != 0:
                tail = (run.stderr or run.stdout).strip().splitlines()[-3:]
                report("FAIL", f"exit {run.returncode} ({' | '.join(tail)}):", command)
                continue
            with open(env_file) as f:  # `export` lines carry over, as in a shell
                env = dict(kv.split("=", 1) for kv in f.read().split("\0") if "=" in kv)
            report("EXEC", "ok", command)
            continue
        for pattern, why in SKIPPED:
            if re.search(pattern, command):
                report("SKIP", why + ":", command)
                break
        else:
            if not (words and words[0] in TOOLS):
                report("FAIL", "not classified (add it to EXECUTED or SKIPPED in test/tools/readme_commands.py):", command)
            else:
                report("SKIP", "inputs of the user's own:", command)

    for command in EXECUTED:
        if command not in seen:
            report("FAIL", "listed as executed but no longer in the README (update readme_commands.py):", command)

    for span in inline_commands(text):
        try:
            tokens = shlex.split(span)
        except ValueError:
            tokens = span.split()
        problem = check_options(tokens, help_)
        report("FAIL" if problem else "OPTS", (problem + ":") if problem else "ok (prose)", span)

    # Every link between the pages, and to files of the repository, leads
    # somewhere (anchors within a page are not followed).
    for page in args.readme:
        base = os.path.dirname(os.path.abspath(page))
        for target in re.findall(r"\]\(([^)\s]+)\)", open(page).read()):
            if re.match(r"^(https?:|mailto:|#)", target):
                continue
            path = os.path.normpath(os.path.join(base, target.split("#")[0]))
            if os.path.exists(path):
                report("OPTS", "ok (link)", f"{os.path.basename(page)}: {target}")
            else:
                report("FAIL", f"{os.path.basename(page)} links to a missing file:", target)

    # The Environment table says it is complete: every variable of
    # utils/config's table (as `ciq-cache env --json` lists them) is a row.
    listed = subprocess.run([os.path.join(args.bin, "ciq-cache"), "env", "--json"], capture_output=True, text=True)
    rows = set(re.findall(r"^\| `(CIQ_[A-Z_]+)", text, flags=re.M))
    known = set(re.findall(r'"name":"(CIQ_[A-Z_]+)"', listed.stdout))
    for name in sorted(known):
        if name in rows:
            report("OPTS", "ok (environment table)", name)
        else:
            report("FAIL", "missing from the README's Environment table:", name)
    # ... and every row is a variable of that table (CIQ_TUNER was a row that
    # `ciq-cache env` did not list).
    for name in sorted(rows - known):
        report("FAIL", "a row of the Environment table that `ciq-cache env` does not list:", name)

    # The sentence above the table names the variables libciq-inject.so
    # reads: the rows marked libciq-inject, and the names tuner/inject reads
    # (as env_name(Env::x) or env(Env::x): utils/env_table.cpp's table gives
    # each Env::x its name; a name spelled out in quotes counts too).
    sentence = re.search(r"The rows marked\s+libciq-inject \(([^)]*)\)", text)
    named = set(re.findall(r"`(CIQ_[A-Z_]+)`", sentence.group(1))) if sentence else set()
    marked = set(re.findall(r"^\| `(CIQ_[A-Z_]+)[^|]*\| libciq-inject\b", text, flags=re.M))
    with open(os.path.join(args.source, "utils", "env_table.cpp"), errors="replace") as table:
        env_names = dict(re.findall(r'\{Env::(\w+), "(CIQ_[A-Z_]+)"', table.read()))
    read = set()
    for root, _, files in os.walk(os.path.join(args.source, "tuner", "inject")):
        for f in files:
            with open(os.path.join(root, f), errors="replace") as source:
                code = source.read()
                read |= set(re.findall(r'"(CIQ_[A-Z_]+)"', code))
                read |= {env_names[e] for e in re.findall(r"\bEnv::(\w+)", code) if e in env_names}
    for name in sorted(named | marked | read):
        if name in named and name in marked and name in read:
            report("OPTS", "ok (read by libciq-inject)", name)
        else:
            report("FAIL", "libciq-inject reads it" if name in read else "libciq-inject does not read it",
                   f"{name}: named in 'The rows marked libciq-inject (...)': {name in named}, "
                   f"its row marked libciq-inject: {name in marked}")

    # The Layout block names every folder and script of examples/.
    layout = re.search(r"^## Layout\n+```\n(.*?)^```", text, flags=re.M | re.S)
    layout_text = layout.group(1) if layout else ""
    for entry in sorted(os.listdir(os.path.join(args.source, "examples"))):
        shown = entry + "/" if os.path.isdir(os.path.join(args.source, "examples", entry)) else entry
        if re.search(r"(^|\s)" + re.escape(shown) + r"(\s|$)", layout_text):
            report("OPTS", "ok (layout)", "examples/" + shown)
        else:
            report("FAIL", "not in the README's Layout:", "examples/" + shown)

    print(f"readme: {counts['OPTS']} option checks, {counts['EXEC']} executed, {counts['SKIP']} skipped, "
          f"{counts['FAIL']} failed")
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
