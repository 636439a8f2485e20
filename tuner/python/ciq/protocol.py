"""The `ciq-tuner --bench-server` wire protocol, both ends.

A request is a line `ciq-request: ID`, then the words of `--bench` or
`--check` (placeholders filled in), one per line, then an empty line. The
answer is the benchmark's output (where `--metric` looks) and a last line
`ciq-status: ID N` that echoes the request's ID: N = 0 is success; for a
check, non-zero means a wrong answer; any non-zero status makes the tuner
score the candidate invalid, with the first output line that says "error"
(else the last line) as the reason. An answer is its request's only output:
another ID, or anything written after the status line, is a garbled answer
(the candidate is invalid and the tuner starts a fresh server). The tuner
starts the server with the request stream on its stdin and reads answers
from its stdout; the server's stderr goes to `<run dir>/bench-server*.log`.

ciq's Python servers (`ciq.serve`, `ciq.tune`) give the words a meaning:

    ACTION --controls=PATH --workdir=DIR NAME=VALUE ...

ACTION is `bench`, `check` or `build` (compile the candidate's kernels
afresh, traced); `--controls` is the candidate's control-set file (the
`{controls}` placeholder), `--workdir` its scratch directory (`{workdir}`:
ciq-ptxas writes its trace to `<workdir>/trace`); every other `NAME=VALUE`
word is an application parameter (`NAME={param:NAME}`), and `NAME=` (an
empty value: the tuner knocked the parameter out) leaves it absent.
Values the benchmark returns are answered as `ciq-value: V` (one
objective), `ciq-value-K: V` (the K-th of a sequence) or `ciq-value-NAME: V`
(a mapping), each a finite number; a failure (an exception, or a value
that is not a finite number: nan, inf, 10**400) as one `ciq-error: <why>`
line and status 1.
"""
import math
from dataclasses import dataclass, field

STATUS_PREFIX = "ciq-status: "
REQUEST_PREFIX = "ciq-request: "
ERROR_PREFIX = "ciq-error: "
ACTIONS = ("bench", "check", "build")
NO_REQUEST_ID = ("this request has no first line `ciq-request: ID`: ciq-tuner now sends one with every request and "
                 "needs `ciq-status: ID N` back (a ciq-tuner and ciq package of the same version speak the same protocol)")


class ProtocolError(ValueError):
    """A request ciq's servers cannot read (unknown action, a stray word), or an answer not to the request asked."""


def read_request(stream):
    """(ID, words) of the next request from a text stream; None at end of input.

    ID is the text of the request's first line `ciq-request: ID`, echoed in
    the answer; None when the request has none (a tuner of the protocol
    before request ids). Words gathered before an end of input that lacks
    the empty line are returned as a request (the tuner always ends one; a
    person typing may not).
    """
    words = []
    for line in stream:
        line = line.rstrip("\n")
        if line:
            words.append(line)
        elif words:
            break
    if not words:
        return None
    if words[0].startswith(REQUEST_PREFIX):
        return words[0][len(REQUEST_PREFIX):].strip(), words[1:]
    return None, words


def encode_request(words, request_id):
    """The request's bytes as the tuner writes them (no empty word, no newline inside one)."""
    for w in words:
        if not w or "\n" in w:
            raise ProtocolError(f"a request word cannot be empty or hold a newline: {w!r}")
    return f"{REQUEST_PREFIX}{request_id}\n" + "".join(w + "\n" for w in words) + "\n"


def format_answer(lines, status, request_id):
    """An answer's text: the output lines, then `ciq-status: ID N` (`ciq-status: N`
    for a request without an ID, which only a tuner before request ids sends)."""
    echo = "" if request_id is None else f"{request_id} "
    return "".join(line + "\n" for line in lines) + f"{STATUS_PREFIX}{echo}{int(status)}\n"


def error_lines(why):
    """(lines, status) of an answer that makes the candidate invalid, with `why` as the tuner's reason."""
    return [ERROR_PREFIX + " ".join(str(why).split())], 1


def error_answer(why, request_id):
    """An answer that makes the candidate invalid, with `why` as the tuner's reason."""
    return format_answer(*error_lines(why), request_id)


# What C++'s trim() strips (utils/text.cpp).
_BLANKS = " \t\r\n\f\v"


def _canonical_unsigned(text):
    """bench_protocol.cpp's canonical_unsigned: ASCII digits, no sign, no
    leading zero, below 2**64; None otherwise."""
    if not text or (text[0] == "0" and len(text) > 1) or not all("0" <= c <= "9" for c in text):
        return None
    value = int(text)
    return value if value < 2 ** 64 else None


def read_status(rest, request_id):
    """The status N of `ciq-status: rest`, an answer to request `request_id`,
    read exactly as the tuner reads it (tuner/measure/bench_protocol.cpp,
    read_answer_status): `ID N` (blanks around it and after the first space
    allowed), ID the request's and N an exit status 0-255, both canonical
    decimals. ProtocolError for anything else ("1 256", "00", a status
    without an ID) and for another request's ID: a relay then fails instead
    of exiting with N modulo 256."""
    line = shown(STATUS_PREFIX + rest)
    text = rest.strip(_BLANKS)
    space = text.find(" ")
    if space < 0:
        raise ProtocolError(f"the answer's status line is {line}, not `{STATUS_PREFIX}ID N`"
                            + (" (it has no request id: the server speaks the protocol before request ids)"
                               if text.lstrip("+-").isdigit() and text.lstrip("+-").isascii() else ""))
    answered = _canonical_unsigned(text[:space])
    status = _canonical_unsigned(text[space + 1:].strip(_BLANKS))
    if answered is None or status is None or status > 255:
        raise ProtocolError(f"the answer's status line is {line}, not `{STATUS_PREFIX}ID N` (ID the request's, N 0-255)")
    if str(answered) != str(request_id):
        raise ProtocolError(f"an answer to request {answered} came for request {request_id}")
    return status


def shown(value, limit=60):
    """repr(value) for a message: at most `limit` characters; never raises
    (a huge int's repr can, and a user's __repr__ may)."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a message must not fail
        return f"<a {type(value).__name__}>"
    return text if len(text) <= limit else f"{text[:limit // 2]}...({len(text)} characters)"


def number_text(value):
    """`value` as the tuner reads it; ValueError for anything not a finite
    number (nan, inf, an int too large for a double such as 10**400)."""
    if isinstance(value, (bool, str, bytes)):
        raise ValueError(f"returned {shown(value)}, not a number")
    try:
        v = float(value)
    except OverflowError:
        raise ValueError(f"returned {shown(value)}, not a finite number (too large for a double)") from None
    except Exception:  # noqa: BLE001 - whatever __float__ of the user's object raises
        raise ValueError(f"returned {shown(value)}, not a number") from None
    if not math.isfinite(v):
        raise ValueError(f"returned {v!r}, not a finite number")
    return repr(int(value)) if isinstance(value, int) else repr(v)


def value_lines(result, expected=None):
    """Answer lines for what a benchmark returned: a number, a sequence of
    numbers or a mapping NAME -> number. ValueError when any is not a finite
    number, or (with `expected`, the number of objectives) when there are not
    that many: one objective also takes a sequence of one."""
    if expected is not None and not isinstance(result, dict):
        count = len(result) if isinstance(result, (list, tuple)) else 1
        if count != expected:
            raise ValueError(f"returned {count} value(s) ({shown(result)}); the tuning has {expected} objective(s)")
        if expected == 1 and isinstance(result, (list, tuple)):
            result = result[0]
    if isinstance(result, dict):
        for name in result:
            if not isinstance(name, str) or not name or ":" in name or any(c.isspace() or not c.isprintable() for c in name):
                raise ValueError(f"returned a value named {shown(name)}: a name is one word without ':'")
        return [f"ciq-value-{name}: {number_text(v)}" for name, v in result.items()]
    if isinstance(result, (list, tuple)):
        return [f"ciq-value-{k}: {number_text(v)}" for k, v in enumerate(result)]
    return [f"ciq-value: {number_text(result)}"]


def metric_patterns(objectives):
    """The `--metric` regexes that read `value_lines` back: one objective, or
    K of them (a sequence), or named ones (a mapping)."""
    number = r"([-+0-9.eE]+)"
    if isinstance(objectives, int):
        return ["ciq-value: " + number] if objectives == 1 else [f"ciq-value-{k}: " + number for k in range(objectives)]
    return [f"ciq-value-{name}: " + number for name in objectives]


@dataclass
class Request:
    """One request of ciq's servers, read from its words."""
    action: str
    controls_path: str = ""
    workdir: str = ""
    params: dict = field(default_factory=dict)   # NAME -> raw text; knocked-out ones absent


def parse_request(words):
    """A Request from the words; ProtocolError for an unknown action or word."""
    if not words or words[0] not in ACTIONS:
        raise ProtocolError(f"a request starts with one of {', '.join(ACTIONS)}, not {words[0] if words else 'nothing'!r}")
    r = Request(words[0])
    for w in words[1:]:
        if w.startswith("--controls="):
            r.controls_path = w[len("--controls="):]
        elif w.startswith("--workdir="):
            r.workdir = w[len("--workdir="):]
        elif "=" in w and not w.startswith("-") and w.index("=") > 0:
            name, value = w.split("=", 1)
            if value != "":
                r.params[name] = value
        else:
            raise ProtocolError(f"cannot read request word {w!r} (expected --controls=, --workdir= or NAME=VALUE)")
    return r


def request_template(action, param_names):
    """The `--bench`/`--check`/`--build` text that makes the tuner send such a request."""
    words = [action, "--controls={controls}", "--workdir={workdir}"]
    words += [f"{name}={{param:{name}}}" for name in param_names]
    return " ".join(words)
