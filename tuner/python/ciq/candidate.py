"""One candidate as a Python benchmark or objective sees it."""
import os
from dataclasses import dataclass, field

from .controls import ControlSet, parse_control_set, render_options


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
    as ptxas arguments (for `ptx_options`). params: application parameters
    by name, as numbers where they are numbers; a knocked-out parameter is
    absent. raw_params: the same, as the tuner wrote them. digest: names
    these controls (ControlSet.digest). controls_path, workdir: the files
    the tuner made for it ("" when there are none).
    """
    controls_text: str = ""
    controls: ControlSet = field(default_factory=ControlSet)
    options: list = field(default_factory=list)
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
    """The Candidate a protocol Request names. OSError when its control-set file cannot be read."""
    text = ""
    if request.controls_path:
        with open(request.controls_path, encoding="utf-8") as f:
            text = f.read()
    cs = parse_control_set(text)
    return Candidate(controls_text=text, controls=cs, options=render_options(cs, spaces_dir),
                     params={k: typed_value(v) for k, v in request.params.items()}, raw_params=dict(request.params),
                     controls_path=request.controls_path, workdir=request.workdir)
