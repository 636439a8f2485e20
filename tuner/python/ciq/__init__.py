"""ciq from Python: tune objectives written as functions, and serve JIT kernels resident.

    pip install <ciq source>/tuner/python   (offline; or <prefix>/share/ciq/python once installed,
                                            or either directory on PYTHONPATH)

- ciq.tune(objective, space=..., params=..., budget=...): ciq-tuner run with
  this process as its resident benchmark server (ciq.tune module).
- python3 -m ciq.serve MODULE:FUNC: a resident benchmark for
  `ciq-tuner run --bench-server` (ciq.serve, ciq.server, ciq.protocol).
- ciq.jit.KernelCache, ciq.triton_caches.TritonCaches: kernels compiled per
  candidate's controls, reused for a candidate compiled before.

Standard library only; nothing here imports torch or Triton.
"""
from ._version import __version__
from .candidate import Candidate
from .controls import ControlSet, ControlSetError, parse_control_set, render_options
from .jit import KernelCache
from .tune import Choice, Literal, ParamSpec, Range, TuneError, TuneResult, tune

__all__ = ["Candidate", "Choice", "ControlSet", "ControlSetError", "KernelCache", "Literal", "ParamSpec", "Range",
           "TuneError", "TuneResult", "parse_control_set", "render_options", "tune"]
