"""Control sets as the tuner writes them (`{controls}`, `CIQ_CONTROLS`), read in Python.

A control set is text, one `KEY = VALUE` per line (README, "Files"):
module options (`maxrregcount = 128`), per-kernel directives
(`KERNEL:maxnreg = 96`), `space`, `acf`, `nvcc-space` and `nvcc.KNOB`.
This module reads one, gives it a digest that names "the same controls"
(what the cache-busting layers key compiled kernels by), and renders its
module options into ptxas arguments from the knob space file, the way
ciq-ptxas does, for JIT compilers that take ptxas options directly
(Triton's `ptx_options`).

It agrees with the C++ side on every input: a text the C++ reader
(spaces/control_set.cpp) refuses raises ControlSetError here; a set
ciq-ptxas would not apply (a knob its space does not list, or marks
unsafe, a value outside the knob's domain, a conflict) is refused by
render_options; the digest is spaces::control_set_digest's, computed on the
file's bytes (a value that is not UTF-8 included). The table
test/vectors/cpp_python.json holds both sides to it.
"""
import hashlib
import os
import shutil
from dataclasses import dataclass, field

DEFAULT_DIGEST = "default"   # the digest of a control set that sets nothing
CONTROLS_FORMAT = "ciq-controls/1"


class ControlSetError(ValueError):
    """A control set (or a space file) the C++ side refuses, or a set
    ciq-ptxas would not apply; the message says where and why."""


# What C++'s trim() strips (utils/text.cpp): not str.strip()'s Unicode
# whitespace, which would also take U+0085, U+00A0, U+2028 from a value.
_BLANKS = " \t\r\n\f\v"
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-$.")
_HEX = frozenset("0123456789abcdefABCDEF")


def _bytes(text):
    """The file bytes a str read with surrogateescape stands for."""
    return text.encode("utf-8", errors="surrogateescape")


def _key_value_lines(text, origin):
    """[(section, key, value, line number)] of a `key = value` text, read
    exactly as utils/text.cpp's parse_key_values reads it: lines end at
    "\\n" only; blank lines and lines starting with `#` are skipped; `[NAME]`
    opens a section; a quoted value takes \\" \\\\ \\n \\t and may be followed
    by a `#` comment only; an unquoted one ends before " #". ControlSetError
    where the C++ reader fails."""
    out, section = [], ""
    for number, raw in enumerate(text.split("\n"), 1):
        def fail(why):
            return ControlSetError(f"{origin}:{number}: {why}")
        line = raw.strip(_BLANKS)
        if not line or line[0] == "#":
            continue
        if line[0] == "[":
            if line[-1] != "]" or len(_bytes(line)) < 3:
                raise fail(f"malformed section header '{line}'")
            section = line[1:-1].strip(_BLANKS)
            continue
        if "=" not in line:
            raise fail(f"expected 'key = value', got '{line}'")
        key, value = line.split("=", 1)
        key, value = key.strip(_BLANKS), value.strip(_BLANKS)
        if not key:
            raise fail("missing key before '='")
        if any(c in key for c in ' \t"'):
            raise fail(f"malformed key '{key}'")
        if value.startswith('"'):
            chars, i, closed = [], 1, False
            while i < len(value):
                c = value[i]
                if c == "\\" and i + 1 < len(value):
                    i += 1
                    n = value[i]
                    chars.append("\n" if n == "n" else "\t" if n == "t" else n)
                elif c == '"':
                    closed = True
                    i += 1
                    break
                else:
                    chars.append(c)
                i += 1
            after = value[i:].strip(_BLANKS)
            if not closed:
                raise fail("unterminated quoted value")
            if after and after[0] != "#":
                raise fail("unexpected text after quoted value")
            value = "".join(chars)
        else:
            hash_at = value.find(" #")
            value = (value if hash_at < 0 else value[:hash_at]).strip(_BLANKS)
        out.append((section, key, value, number))
    return out


def _valid_name(name):
    """spaces/control_set.cpp's valid_name: ASCII letters, digits, _ - $ ."""
    return bool(name) and all(c in _NAME_CHARS for c in name)


def _acf_text(value):
    """`sha256:<64 hex digits>` (lower case) of an `acf` value, with or
    without its prefix; None when it is not one."""
    digits = value[len("sha256:"):] if value.startswith("sha256:") else value
    if len(digits) != 64 or not all(c in _HEX for c in digits):
        return None
    return "sha256:" + digits.lower()


@dataclass
class ControlSet:
    """What a control-set file says; every field empty for the default candidate."""
    space: str = ""
    options: dict = field(default_factory=dict)      # module option -> value
    directives: dict = field(default_factory=dict)   # kernel -> {directive -> value}
    acf: str = ""                                    # "sha256:<64 lower-case hex digits>" or ""
    nvcc_space: str = ""
    nvcc: dict = field(default_factory=dict)         # NVVM-stage knob -> value

    def is_default(self):
        return not (self.options or self.directives or self.acf or self.nvcc)

    def digest(self):
        """A short name for these controls: equal for equal settings, whatever
        the order or spacing of the file; DEFAULT_DIGEST when it sets nothing.
        spaces::control_set_digest's: the first 16 hex digits of the SHA-256
        of the sorted lines `o KNOB=V`, `d KERNEL:KNOB=V`, `n KNOB=V`,
        `a sha256:HEX`, joined by newlines, as the file's bytes (a value that
        is not UTF-8 is digested as the bytes it is, never refused)."""
        if self.is_default():
            return DEFAULT_DIGEST
        lines = [f"o {k}={v}" for k, v in self.options.items()]
        lines += [f"d {kern}:{k}={v}" for kern, knobs in self.directives.items() for k, v in knobs.items()]
        lines += [f"n {k}={v}" for k, v in self.nvcc.items()]
        if self.acf:
            lines.append(f"a {self.acf}")
        return hashlib.sha256(b"\n".join(sorted(_bytes(line) for line in lines))).hexdigest()[:16]


def _add_pair(cs, key, value):
    """spaces/control_set.cpp's add_pair; the error without its place."""
    if not value:
        raise ValueError(f"no value for '{key}'")
    if any(c in value for c in " \t\n\"'"):
        raise ValueError(f"value of '{key}' must be one word, got '{value}'")
    if key.startswith("nvcc."):
        knob = key[len("nvcc."):]
        if not _valid_name(knob) or "." in knob:
            raise ValueError(f"'{key}' is not nvcc.KNOB")
        cs.nvcc[knob] = value
    elif ":" not in key:
        if not _valid_name(key):
            raise ValueError(f"'{key}' is not a knob name")
        cs.options[key] = value
    else:
        kernel, knob = key.rsplit(":", 1)
        if not _valid_name(kernel) or not _valid_name(knob):
            raise ValueError(f"'{key}' is not KERNEL:KNOB")
        cs.directives.setdefault(kernel, {})[knob] = value


def parse_control_set(text, origin="<control set>"):
    """The ControlSet `text` describes, read as the C++ reader reads it
    (spaces/control_set.cpp); ControlSetError, naming `origin` and the line,
    for any text it refuses (a malformed line, a section, another format, a
    bad name, a value that is not one word, an `acf` that is not a sha256).
    Knob names are not checked against a space here: render_options does
    that, as ciq-ptxas does."""
    cs = ControlSet()
    for section, key, value, number in _key_value_lines(text, origin):
        where = f"{origin}:{number}: "
        if section:
            raise ControlSetError(f"{where}unexpected section [{section}]")
        if key == "format":
            if value != CONTROLS_FORMAT:
                raise ControlSetError(f"{where}unsupported format '{value}' (expected {CONTROLS_FORMAT})")
        elif key in ("space", "nvcc-space"):
            if not _valid_name(value):
                raise ControlSetError(f"{where}bad space name '{value}'")
            if key == "space":
                cs.space = value
            else:
                cs.nvcc_space = value
        elif key == "acf":
            cs.acf = _acf_text(value)
            if cs.acf is None:
                raise ControlSetError(f"{where}acf must be sha256:<64 hex digits>, got '{value}'")
        else:
            try:
                _add_pair(cs, key, value)
            except ValueError as e:
                raise ControlSetError(f"{where}{e}") from None
    return cs


def read_control_set(path):
    """The ControlSet in file `path`; the default one for "" or an empty file.
    OSError when the file cannot be read, ControlSetError when the C++ reader
    would refuse it. Bytes that are not UTF-8 are kept (as surrogate
    escapes: os.fsencode and subprocess give them back)."""
    if not path:
        return ControlSet()
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
        return parse_control_set(f.read(), path)


def spaces_directory():
    """Where the knob space files are: $CIQ_SPACES_DIR, else next to ciq-tuner
    (`<bin>/../share/ciq/spaces`); "" when neither exists."""
    if os.environ.get("CIQ_SPACES_DIR"):
        return os.environ["CIQ_SPACES_DIR"]
    for tool in ("ciq-tuner", "ciq-ptxas"):
        found = shutil.which(tool)
        if found:
            d = os.path.join(os.path.dirname(os.path.realpath(found)), "..", "share", "ciq", "spaces")
            if os.path.isdir(d):
                return os.path.normpath(d)
    return ""


@dataclass
class _Knob:
    """One `[option.NAME]` or `[directive.NAME]` of a space file (spaces/space.h's Knob)."""
    render: str = ""
    values: list = field(default_factory=list)
    lo: int = None
    hi: int = None
    step: int = 1
    dims: bool = False
    safety: str = "exact"


@dataclass
class _Space:
    name: str = ""
    tool: str = ""
    knobs: dict = field(default_factory=dict)       # ("option" | "directive", name) -> _Knob
    conflicts: list = field(default_factory=list)   # (knob, values, excluded, excluded values, refused)


def _integer(text):
    """utils/text.cpp's parse_integer: an optional '+', then what from_chars reads whole."""
    t = text[1:] if text.startswith("+") else text
    digits = t[1:] if t.startswith("-") else t
    return int(t) if digits and all("0" <= c <= "9" for c in digits) else None


def _canonical_integer(text):
    """parse_canonical_integer: decimal, no '+', no leading zero, no "-0", at most 18 digits."""
    digits = text[1:] if text.startswith("-") else text
    if not digits or len(digits) > 18 or (digits[0] == "0" and (len(digits) > 1 or digits != text)):
        return None
    return int(text) if all("0" <= c <= "9" for c in digits) else None


def _read_space(path):
    """The knobs and conflicts of a space file, as spaces/space.cpp reads
    what validation needs; ControlSetError when it cannot be read."""
    space, last = _Space(), None
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
        lines = _key_value_lines(f.read(), path)
    for section, key, value, number in lines:
        if section == "space":
            if key in ("name", "tool"):
                setattr(space, key, value)
        elif section.startswith("conflict."):
            if last is None or last[0] != section:
                last = (section, {"when": ("", []), "excludes": ("", []), "refused": True})
                space.conflicts.append(last)
            parts = last[1]
            if key in ("when", "excludes"):
                knob, _, listed = value.partition(":")
                parts[key] = (knob.strip(_BLANKS), [v.strip(_BLANKS) for v in listed.split(",") if v.strip(_BLANKS)])
            elif key == "effect":
                parts["refused"] = value == "refused"
        elif section.startswith(("option.", "directive.")):
            level, name = section.split(".", 1)
            knob = space.knobs.setdefault((level, name), _Knob())
            if key == "render":
                knob.render = value
            elif key == "values":
                knob.values = [v.strip(_BLANKS) for v in value.split(",") if v.strip(_BLANKS)]
            elif key in ("range", "dims"):
                lo, _, hi = value.partition("..")
                knob.lo, knob.hi, knob.dims = _integer(lo.strip(_BLANKS)), _integer(hi.strip(_BLANKS)), key == "dims"
                if knob.lo is None or knob.hi is None:
                    raise ControlSetError(f"{path}:{number}: {key} must be LO..HI with LO <= HI")
            elif key == "step":
                knob.step = _integer(value) or 1
            elif key == "safety":
                knob.safety = value
    return space


def _check_value(name, knob, value):
    """spaces/space.cpp's check_value; ControlSetError when `value` is outside the knob's domain."""
    def in_range(v):
        n = _canonical_integer(v)
        return n is not None and knob.lo <= n <= knob.hi and (n - knob.lo) % knob.step == 0
    if knob.values:
        ok = value in knob.values
    elif knob.dims:
        parts = value.split(",")
        ok = 1 <= len(parts) <= 3 and all(in_range(p) for p in parts)
    else:
        ok = knob.lo is not None and in_range(value)
    if not ok:
        raise ControlSetError(f"value '{value}' of knob '{name}' is not in its domain")


def _unsafe_allowed():
    """CIQ_ALLOW_UNSAFE as ciq-ptxas reads it (utils/config.cpp, env_flag)."""
    value = "".join(c.lower() if c.isascii() else c for c in os.environ.get("CIQ_ALLOW_UNSAFE", ""))
    return value in ("1", "true", "yes", "on")


def _check_knob(space, level, name, value, allow_unsafe):
    knob = space.knobs.get((level, name))
    if knob is None:
        if ("option", name) in space.knobs:
            raise ControlSetError(f"knob '{name}' is a module option in space {space.name}; set it as {name}=VALUE")
        if ("directive", name) in space.knobs:
            raise ControlSetError(f"knob '{name}' is a per-kernel directive in space {space.name}; set it as KERNEL:{name}=VALUE")
        raise ControlSetError(f"knob '{name}' is not in space {space.name}")
    if knob.safety == "unsafe" and not allow_unsafe:
        raise ControlSetError(f"knob '{name}' changes program semantics and is not allowed")
    _check_value(name, knob, value)


def _by_bytes(mapping):
    """`mapping`'s items in the order of a C++ std::map<std::string, ...>: by the keys' bytes."""
    return sorted(mapping.items(), key=lambda item: _bytes(item[0]))


def render_options(cs, spaces_dir=None, default_space="ptxas-13", allow_unsafe=None):
    """The ptxas arguments of `cs`'s module options, as ciq-ptxas adds them
    (`--maxrregcount=128`), in its order (by knob name). The set is checked
    first the way ciq-ptxas checks it against the space of the ptxas it
    runs (spaces/space.cpp, validate_controls): that space is
    `default_space`, read from `spaces_dir` (default: spaces_directory()),
    and a set that names another (`space = ...`) is refused; every option
    and directive must be a knob of the space at its level, with a value in
    its domain, not `unsafe` unless `allow_unsafe` (default:
    CIQ_ALLOW_UNSAFE, as ciq-ptxas reads it), and no two options a conflict
    ptxas refuses. Where ciq-ptxas would apply nothing, ControlSetError
    says why: passing the options as Triton's `ptx_options` would apply
    what ciq-ptxas refuses. NVVM-stage knobs are not ptxas': they are left
    out. Per-kernel directives are PTX edits, not arguments: checked, but
    not here (see ControlSet.directives)."""
    name = default_space
    directory = spaces_dir if spaces_dir is not None else spaces_directory()
    path = os.path.join(directory, name + ".space") if directory else ""
    if not path or not os.path.isfile(path):
        raise ControlSetError(f"no knob space file {name}.space in {directory or '(no spaces directory: set CIQ_SPACES_DIR)'}")
    if cs.space and cs.space != name:
        raise ControlSetError(f"control set is for space '{cs.space}', but the running compiler's space is {name}")
    space = _read_space(path)
    if space.name != name:
        raise ControlSetError(f"{path} is space {space.name}, not {name}")
    if cs.acf and space.tool != "ptxas":
        raise ControlSetError(f"an ACF applies at ptxas, not in space {space.name}")
    allow = _unsafe_allowed() if allow_unsafe is None else allow_unsafe
    for knob, value in _by_bytes(cs.options):
        _check_knob(space, "option", knob, value, allow)
    for _, knobs in _by_bytes(cs.directives):
        for knob, value in _by_bytes(knobs):
            _check_knob(space, "directive", knob, value, allow)
    for conflict, parts in space.conflicts:
        (knob, values), (excluded, excluded_values) = parts["when"], parts["excludes"]
        names = lambda listed, v: listed == ["*"] or v in listed  # noqa: E731
        if (parts["refused"] and knob in cs.options and excluded in cs.options
                and names(values, cs.options[knob]) and names(excluded_values, cs.options[excluded])):
            raise ControlSetError(f"knobs {knob}={cs.options[knob]} and {excluded}={cs.options[excluded]} "
                                  f"conflict in space {space.name} ({conflict[len('conflict.'):]})")
    return [space.knobs[("option", knob)].render.replace("{}", value, 1) for knob, value in _by_bytes(cs.options)]
