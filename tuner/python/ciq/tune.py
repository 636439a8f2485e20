"""`ciq.tune(objective, ...)`: ciq-tuner driven from Python, with this process as its resident server.

    import ciq

    def objective(c):
        return c.params["x"] ** 2 + c.params["y"]

    result = ciq.tune(objective, params={"x": ciq.Range(1, 20, 0.5, default=10),
                                         "y": ciq.Choice(1, 2, 3),
                                         "z": ciq.Literal(7, knockout=0.5)}, budget=60)
    print(result.best, result.best_params)       # 2 {'x': 1, 'y': 1}

How: tune() runs the real `ciq-tuner run` (search, memoising, verification,
shipping, the run directory: all the CLI's) with `--bench-server 'python3 -m
ciq.relay SOCKET'`. The relay is a small standard-library process that
forwards each request to a Unix socket on which this process listens
(ciq.server.SocketListener, a background thread), so your objective runs
here, with your imports, inputs and compiled kernels kept between
candidates. With a compiler space (space="ptxas"), the tuner's `--build` is
`python3 -m ciq.relay SOCKET build ...`, which makes this process compile
the candidate afresh (with CIQ_CONTROLS and CIQ_TRACE set for ciq-ptxas) so
the tuner reads what was compiled; `compile=` does that if given, else the
objective is called once and its value discarded.

The objective takes a ciq.Candidate (`params`, `controls_text`, `controls`,
`options`, `digest`) and returns a number (or, with several `directions`, a
sequence of numbers); raising, or returning something that is not a finite
number, makes the candidate invalid, with the exception as the reason in
results.csv. `check(candidate)` returning False or raising is a wrong answer.
"""
import csv
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import protocol
from .candidate import typed_value
from .controls import ControlSetError, parse_control_set
from .server import BenchServer, SocketListener

PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class TuneError(RuntimeError):
    """ciq-tuner could not be found, or stopped without a result (the message says why)."""


class ParamSpec:
    """One application parameter's `--param NAME=...` specification: build it
    with Range, Choice or Literal; str() gives the command-line text, and a
    spec equals that text (or another spec of the same text)."""

    def __init__(self, text: str, default: Optional[object] = None, knockout: Optional[float] = None) -> None:
        text += f",default={default}" if default is not None else ""
        self.text: str = text + (f",knockout={knockout}" if knockout is not None else "")

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.text!r})"

    def __eq__(self, other: object) -> bool:
        return self.text == (other.text if isinstance(other, ParamSpec) else other)

    def __hash__(self) -> int:
        return hash(self.text)


class Range(ParamSpec):
    """`--param NAME=range:START:END:STEP`: START, START+STEP, ... up to END."""

    def __init__(self, start: float, end: float, step: float, default: Optional[float] = None,
                 knockout: Optional[float] = None) -> None:
        super().__init__(f"range:{start}:{end}:{step}", default, knockout)


class Choice(ParamSpec):
    """`--param NAME=choice:A,B,C`: one of the values (the first is the default unless given)."""

    def __init__(self, *values: object, default: Optional[object] = None, knockout: Optional[float] = None) -> None:
        if len(values) == 1 and isinstance(values[0], (list, tuple)):
            values = tuple(values[0])
        for v in values:
            if any(ch in str(v) for ch in ",;\n") or str(v) != str(v).strip() or not str(v):
                raise ValueError(f"Choice value {v!r}: a value cannot be empty, hold ',', ';' or a newline, or start or end with a space")
        super().__init__("choice:" + ",".join(str(v) for v in values), default, knockout)


class Literal(ParamSpec):
    """`--param NAME=literal:V`: always V, or (with knockout=P) left out with chance P."""

    def __init__(self, value: object, knockout: Optional[float] = None) -> None:
        super().__init__(f"literal:{value}", None, knockout)


def param_options(params: Optional[Mapping[str, object]]) -> List[str]:
    """`--param` arguments for {name: spec}: a spec is a Range, Choice or
    Literal, any `--param` text after `NAME=`, or a list/tuple (a choice)."""
    out = []
    for name, spec in (params or {}).items():
        if isinstance(spec, (list, tuple)):
            spec = Choice(*spec)
        out.append(f"--param={name}={spec}")
    return out


def split_candidate(text: Optional[str]) -> Tuple[Dict[str, object], List[str]]:
    """({param: typed value}, [knob assignments]) of a candidate string such as
    `maxrregcount=64;param:x=1` (summary.json's `controls`, results.csv's `candidate`)."""
    params, knobs = {}, []
    for part in filter(None, (text or "").split(";")):
        if part.startswith("param:") and "=" in part:
            name, value = part[len("param:"):].split("=", 1)
            params[name] = typed_value(value)
        else:
            knobs.append(part)
    return params, knobs


@dataclass
class TuneResult:
    """What a tuning run found, read from its run directory.

    best / baseline: the first objective's best value and the default's
    (summary.json); best_params and best_knobs: the winner's parameters and
    compiler knobs; best_controls: the winner's control-set text
    (best.controls); rows: every evaluation of results.csv, each a dict with
    `number`, `generation`, `candidate`, `params`, `knobs`, `values` (the
    objectives, None when invalid), `status`, `reason`; summary: summary.json
    (shipped, verdict, p_value, ...); run_dir; returncode: ciq-tuner's."""
    run_dir: str
    summary: dict
    rows: list = field(default_factory=list)
    best_controls: str = ""
    returncode: int = 0

    @property
    def best(self) -> Optional[float]:
        return self.summary.get("best")

    @property
    def baseline(self) -> Optional[float]:
        return self.summary.get("baseline")

    @property
    def verdict(self) -> str:
        return self.summary.get("verdict", "")

    @property
    def shipped(self) -> bool:
        return bool(self.summary.get("shipped"))

    @property
    def best_params(self) -> Dict[str, object]:
        return split_candidate(self.summary.get("controls", ""))[0]

    @property
    def best_knobs(self) -> List[str]:
        return split_candidate(self.summary.get("controls", ""))[1]


def read_rows(run_dir: str) -> List[Dict[str, object]]:
    """Every evaluation of `<run_dir>/results.csv` as TuneResult describes; [] when it is missing."""
    path = os.path.join(run_dir, "results.csv")
    if not os.path.isfile(path):
        return []
    rows = []
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader, [])
        objectives = header[3:-4]
        for r in reader:
            if len(r) != len(header):
                continue  # a partial last line of a killed run
            rec = dict(zip(header, r))
            params, knobs = split_candidate(rec["candidate"])
            values = [float(rec[o]) if rec[o] not in ("", None) else None for o in objectives]
            rows.append({"number": int(rec["number"]), "generation": int(rec["generation"]), "candidate": rec["candidate"],
                         "params": params, "knobs": knobs, "values": values, "status": rec["status"],
                         "reason": rec["reason"]})
    return rows


def find_tuner(tuner: Optional[str] = None) -> str:
    """ciq-tuner: `tuner`, else $CIQ_TUNER, else the one on PATH. TuneError if none."""
    found = tuner or os.environ.get("CIQ_TUNER") or shutil.which("ciq-tuner")
    if not found:
        raise TuneError("ciq-tuner not found: put it on PATH, set CIQ_TUNER, or pass tuner=")
    return found


def tuner_arguments(socket_path, space="none", params=None, budget=None, directions=None, check=False, out=None,
                    ship=True, cache_dir=None, repeats=1, verify_runs=None, seed=None, timeout=None, kernels=None,
                    extra_args=(), python=None):
    """The `ciq-tuner run` arguments tune() passes (without the program)."""
    python = python or sys.executable
    relay = f"{shlex.quote(python)} -S -m ciq.relay {shlex.quote(socket_path)}"
    names = list((params or {}).keys())
    args = ["run", f"--space={space}"] + param_options(params)
    args += ["--bench-server", relay, "--bench", protocol.request_template("bench", names)]
    if check:
        args += ["--check", protocol.request_template("check", names)]
    if space != "none":
        args += ["--build", relay + " " + protocol.request_template("build", names)]
    directions = list(directions or ["min"])
    for pattern in protocol.metric_patterns(len(directions)):
        args += ["--metric", pattern]
    for d in directions:
        args += ["--direction", d]
    args += ["--repeats", str(repeats), "--jobs", "1", "--json"]
    for flag, value in (("--budget", budget), ("--verify-runs", verify_runs), ("--seed", seed),
                        ("--timeout", timeout), ("--kernels", kernels), ("--out", out), ("--cache-dir", cache_dir)):
        if value is not None:
            args += [flag, str(value)]
    if not ship:
        args.append("--no-ship")
    return args + list(extra_args)


class _Tail:
    """A log that keeps its last `lines` lines: with quiet=True, the
    objective's tracebacks stay out of the terminal, the last of them for
    the error."""

    def __init__(self, lines=40):
        self.lines, self.text = lines, ""

    def write(self, text):
        self.text = "\n".join((self.text + text).split("\n")[-self.lines:])

    def flush(self):
        pass


# A Unix socket's address holds 107 bytes of path (Linux's sun_path).
SOCKET_PATH_MAX = 107


def socket_folder():
    """A fresh private folder (0700) for the server's socket: in $TMPDIR, or in
    /tmp when $TMPDIR is too deep for the socket's path to fit an address."""
    folder = tempfile.mkdtemp(prefix="ciq-tune-")
    if len(os.fsencode(os.path.join(folder, "server.sock"))) <= SOCKET_PATH_MAX:
        return folder
    os.rmdir(folder)
    return tempfile.mkdtemp(prefix="ciq-tune-", dir="/tmp")


def tune(objective: Callable[..., object], space: str = "none", params: Optional[Mapping[str, object]] = None,
         budget: int = 32, directions: Union[str, Sequence[str], None] = None, check: Optional[Callable[..., object]] = None,
         compile: Optional[Callable[..., object]] = None, caches: Sequence[object] = (), out: Optional[str] = None,
         ship: bool = True, cache_dir: Optional[str] = None, repeats: int = 1, verify_runs: Optional[int] = None,
         seed: Optional[int] = None, timeout: Optional[float] = None, kernels: Optional[str] = None,
         tuner: Optional[str] = None, extra_args: Sequence[str] = (), quiet: bool = False) -> "TuneResult":
    """Tunes `params` (and, with space="ptxas" or another knob space, the compiler's
    controls) for `objective`; returns a TuneResult. See the module docstring.

    directions: "min"/"max" per objective (default one, minimised). repeats:
    objective calls per evaluation (the median is taken; default 1).
    caches: cache layers selected for each candidate (ciq.jit.KernelCache,
    ciq.triton_caches.TritonCaches). ship=False is `--no-ship`; out is the
    run directory (default: the CLI's, ./ciq-tune-<date>-<time>).
    verify_runs, seed, timeout, kernels, cache_dir, budget: the CLI's options.
    extra_args: more `ciq-tuner run` arguments. quiet: keep the tuner's
    progress (stderr) and the objective's tracebacks out of the terminal;
    their last lines are in the error if it fails.
    Raises TuneError when ciq-tuner is missing or stops without a summary.
    """
    program = find_tuner(tuner)
    if isinstance(directions, str):
        directions = [directions]
    workdir = socket_folder()
    socket_path = os.path.join(workdir, "server.sock")
    log = _Tail() if quiet else None
    server = BenchServer(objective, check, compile, caches, values=len(directions or ["min"]), log=log)
    listener = SocketListener(server, socket_path).start()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PACKAGE_PARENT, env.get("PYTHONPATH", "")]))
    argv = [program] + tuner_arguments(socket_path, space, params, budget, directions, check is not None, out, ship,
                                       cache_dir, repeats, verify_runs, seed, timeout, kernels, extra_args)
    try:
        run = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE if quiet else None, env=env,
                             text=True)
    except OSError as e:
        raise TuneError(f"cannot run ciq-tuner ({program}): {e.strerror or e}") from None
    finally:
        listener.close()
        shutil.rmtree(workdir, ignore_errors=True)
    lines = run.stdout.strip().splitlines()
    summary = None
    if lines:
        try:
            summary = json.loads(lines[-1])
        except ValueError:
            summary = None
    if not isinstance(summary, dict) or "run_dir" not in summary:
        tail = "\n".join((run.stderr or "").strip().splitlines()[-8:]) if quiet else "its error is above"
        if log is not None and log.text.strip():
            tail += "\nthe objective's last traceback:\n" + log.text.strip()
        raise TuneError(f"ciq-tuner exited with status {run.returncode} without a result: {tail}")
    if summary.get("outcome") == "failed" and "verdict" not in summary:
        # It stopped before its search ended: its summary says why.
        tail = "\n".join((run.stderr or "").strip().splitlines()[-8:]) if quiet else ""
        if log is not None and log.text.strip():
            tail += "\nthe objective's last traceback:\n" + log.text.strip()
        raise TuneError(f"ciq-tuner: {summary.get('reason', 'failed')}" + (f"\n{tail.strip()}" if tail.strip() else ""))
    run_dir = summary["run_dir"]
    return TuneResult(run_dir, summary, read_rows(run_dir), read_best_controls(run_dir), run.returncode)


# best.controls is a few hundred bytes; a file far larger is not one.
_BEST_CONTROLS_LIMIT = 1 << 20


def read_best_controls(run_dir: str) -> str:
    """The text of `run_dir`/best.controls, checked as ciq-ptxas reads a
    control set (ciq.controls.parse_control_set: its `format` line, names,
    values); "" when the run wrote none (nothing beat the default, or it
    tuned parameters only). TuneError for a file that is not one: another
    format (a newer ciq's), or over 1 MiB."""
    path = os.path.join(run_dir, "best.controls")
    try:
        with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
            text = f.read(_BEST_CONTROLS_LIMIT + 1)
    except FileNotFoundError:
        return ""
    except OSError as e:
        raise TuneError(f"cannot read {path}: {e.strerror or e}") from None
    if len(text) > _BEST_CONTROLS_LIMIT:
        raise TuneError(f"{path}: over {_BEST_CONTROLS_LIMIT} bytes: not a control set")
    try:
        parse_control_set(text, path)
    except ControlSetError as e:
        raise TuneError(str(e)) from None
    return text
