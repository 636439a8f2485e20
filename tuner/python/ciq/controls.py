"""Control sets as the tuner writes them (`{controls}`, `CIQ_CONTROLS`), read in Python.

A control set is text, one `KEY = VALUE` per line (README, "Files"):
module options (`maxrregcount = 128`), per-kernel directives
(`KERNEL:maxnreg = 96`), `space`, `acf`, `nvcc-space` and `nvcc.KNOB`.
This module reads one, gives it a digest that names "the same controls"
(what the cache-busting layers key compiled kernels by), and renders its
module options into ptxas arguments from the knob space file, the way
ciq-ptxas does, for JIT compilers that take ptxas options directly
(Triton's `ptx_options`). It never validates: ciq-ptxas does that, against
the space of the ptxas that actually runs.
"""
import hashlib
import os
import shutil
from dataclasses import dataclass, field

DEFAULT_DIGEST = "default"   # the digest of a control set that sets nothing


# What C++'s trim() strips (utils/text.cpp): not str.strip()'s Unicode
# whitespace, which would also take U+0085, U+00A0, U+2028 from a value.
_BLANKS = " \t\r\n\f\v"


def _unquote(value):
    """A space file's `render = ...` value, without its double quotes."""
    value = value.strip(_BLANKS)
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    return value


def _quoted(value):
    """The text of a double-quoted value (`value` starts with the quote) as
    utils/text.cpp's parse_key_values reads it: \\n, \\t, else \\X is X,
    a backslash ending the line is itself; None when the quote is not
    closed or text other than a `#` comment follows it."""
    out, i = [], 1
    while i < len(value):
        c = value[i]
        if c == "\\" and i + 1 < len(value):
            i += 1
            n = value[i]
            out.append("\n" if n == "n" else "\t" if n == "t" else n)
        elif c == '"':
            after = value[i + 1:].strip(_BLANKS)
            return "".join(out) if not after or after[0] == "#" else None
        else:
            out.append(c)
        i += 1
    return None


def _key_values(text):
    """(key, value) pairs of `KEY = VALUE` lines, read exactly as the C++ side
    reads them (utils/text.cpp, parse_key_values), so that every value
    format_control_set writes comes back the same: lines end at "\\n" only;
    `#` starts a comment at the start of a line, or after a space behind an
    unquoted value (a value holding `#` is written quoted); a quoted value
    takes \\" \\\\ \\n \\t. Lines the C++ reader refuses (no `=`, a bad key, an
    unclosed quote, a `[section]`) are skipped: ciq-ptxas refuses the set."""
    for raw in text.split("\n"):
        line = raw.strip(_BLANKS)
        if not line or line[0] in "#[" or "=" not in line:
            continue
        key, value = line.split("=", 1)
        key, value = key.strip(_BLANKS), value.strip(_BLANKS)
        if not key or any(c in key for c in ' \t"'):
            continue
        if value.startswith('"'):
            value = _quoted(value)
            if value is None:
                continue
        else:
            hash_at = value.find(" #")
            value = value if hash_at < 0 else value[:hash_at].strip(_BLANKS)
        yield key, value


@dataclass
class ControlSet:
    """What a control-set file says; every field empty for the default candidate."""
    space: str = ""
    options: dict = field(default_factory=dict)      # module option -> value
    directives: dict = field(default_factory=dict)   # kernel -> {directive -> value}
    acf: str = ""                                    # "sha256:..." or ""
    nvcc_space: str = ""
    nvcc: dict = field(default_factory=dict)         # NVVM-stage knob -> value

    def is_default(self):
        return not (self.options or self.directives or self.acf or self.nvcc)

    def digest(self):
        """A short name for these controls: equal for equal settings, whatever
        the order or spacing of the file; DEFAULT_DIGEST when it sets nothing."""
        if self.is_default():
            return DEFAULT_DIGEST
        lines = [f"o {k}={v}" for k, v in self.options.items()]
        lines += [f"d {kern}:{k}={v}" for kern, knobs in self.directives.items() for k, v in knobs.items()]
        lines += [f"n {k}={v}" for k, v in self.nvcc.items()]
        if self.acf:
            lines.append(f"a {self.acf}")
        return hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()[:16]


def parse_control_set(text):
    """The ControlSet `text` describes; unknown keys are kept as module options
    (ciq-ptxas decides whether they are knobs of its space)."""
    cs = ControlSet()
    for key, value in _key_values(text):
        if key == "format":
            continue
        if key == "space":
            cs.space = value
        elif key == "acf":
            cs.acf = value
        elif key == "nvcc-space":
            cs.nvcc_space = value
        elif key.startswith("nvcc."):
            cs.nvcc[key[len("nvcc."):]] = value
        elif ":" in key:
            kernel, knob = key.rsplit(":", 1)
            cs.directives.setdefault(kernel, {})[knob] = value
        else:
            cs.options[key] = value
    return cs


def read_control_set(path):
    """The ControlSet in file `path`; the default one for "" or an empty file.
    OSError when the file cannot be read. Bytes that are not UTF-8 are kept
    (as surrogate escapes: os.fsencode and subprocess give them back)."""
    if not path:
        return ControlSet()
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return parse_control_set(f.read())


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


def option_templates(space_name, spaces_dir=None):
    """{option name: render template} of `[option.NAME]` sections in
    `<spaces dir>/<space_name>.space`; {} when the file is missing."""
    directory = spaces_dir if spaces_dir is not None else spaces_directory()
    path = os.path.join(directory, space_name + ".space") if directory else ""
    if not path or not os.path.isfile(path):
        return {}
    templates, section = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            s = line.strip()
            if s.startswith("[") and s.endswith("]"):
                name = s[1:-1]
                section = name[len("option."):] if name.startswith("option.") else None
            elif section and s.startswith("render") and "=" in s:
                templates[section] = _unquote(s.split("=", 1)[1])
    return templates


def render_options(cs, spaces_dir=None, default_space="ptxas-13"):
    """The ptxas arguments of `cs`'s module options, as ciq-ptxas would add
    them (`--maxrregcount=128`). An option the space file does not list is
    rendered `--NAME=VALUE`. Per-kernel directives are PTX edits, not
    arguments: they are not here (see ControlSet.directives)."""
    templates = option_templates(cs.space or default_space, spaces_dir)
    out = []
    for knob, value in cs.options.items():
        template = templates.get(knob, f"--{knob}={{}}")
        out.append(template.replace("{}", value) if "{}" in template else template)
    return out
