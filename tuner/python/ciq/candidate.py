"""One candidate as a Python benchmark or objective sees it."""
import os
from dataclasses import dataclass, field

from .controls import ControlSet, ControlSetError, parse_control_set, render_options


def typed_value(text):
    """A parameter's text as the number it spells (int, then float), else the text."""
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


@dataclass
class Candidate:
    """What the tuner asks to be measured.

    controls_text / controls: the control set (text, and read); "" and an
    empty ControlSet for the default. options: its module options rendered
    as ptxas arguments (for `ptx_options`); [] when ciq-ptxas would apply
    none of the set, and options_refused then says why (render_options).
    params: application parameters
    by name, as numbers where they are numbers; a knocked-out parameter is
    absent. raw_params: the same, as the tuner wrote them. digest: names
    these controls (ControlSet.digest). controls_path, workdir: the files
    the tuner made for it ("" when there are none).
    """
    controls_text: str = ""
    controls: ControlSet = field(default_factory=ControlSet)
    options: list = field(default_factory=list)
    options_refused: str = ""
    params: dict = field(default_factory=dict)
    raw_params: dict = field(default_factory=dict)
    controls_path: str = ""
    workdir: str = ""

    @property
    def digest(self):
        return self.controls.digest()

    @property
    def trace_dir(self):
        """Where ciq-ptxas records what it compiled for this candidate ("" without a workdir)."""
        return os.path.join(self.workdir, "trace") if self.workdir else ""


def candidate_from_request(request, spaces_dir=None):
    """The Candidate a protocol Request names. OSError when its control-set
    file cannot be read, ControlSetError when ciq's C++ reader refuses it.
    Bytes that are not UTF-8 are kept as surrogate escapes."""
    text = ""
    if request.controls_path:
        with open(request.controls_path, encoding="utf-8", errors="surrogateescape", newline="") as f:
            text = f.read()
    cs = parse_control_set(text, request.controls_path or "<no controls>")
    options, refused = [], ""
    if cs.options or cs.directives or cs.acf:  # the ptxas stage: ciq-ptxas checks it against its space
        try:
            options = render_options(cs, spaces_dir)
        except ControlSetError as e:
            refused = str(e)
    return Candidate(controls_text=text, controls=cs, options=options, options_refused=refused,
                     params={k: typed_value(v) for k, v in request.params.items()}, raw_params=dict(request.params),
                     controls_path=request.controls_path, workdir=request.workdir)
