"""The cache-busting layer: compiled JIT kernels keyed by (kernel, controls).

A JIT compiler (Triton) caches compiled kernels by source, specialisation
and compile options, never by `CIQ_CONTROLS`: left alone, it would reuse
the first candidate's code for every later one. A resident server must make
a new candidate compile again, reuse what an earlier request compiled for
the same controls, and leave other kernels alone.

The interface every cache layer of a server implements (duck-typed):

    select(candidate)  the next compilations and lookups are for this
                       candidate's controls (candidate.digest)
    forget(digest)     drop what was compiled for these controls: their next
                       use compiles again (a `build` request does this, so
                       that ciq-ptxas runs, applies and traces them)

KernelCache is that layer for kernels compiled through a function of
yours; ciq.triton_caches.TritonCaches is it for Triton JIT functions.
`candidate_environment` sets what ciq-ptxas reads (CIQ_CONTROLS, CIQ_TRACE)
for compilations that run ptxas as a child process.
"""
import os

from .candidate import Candidate

_HOOKS = ("CIQ_CONTROLS", "CIQ_TRACE")


def candidate_environment(candidate, environ=None):
    """Points ciq-ptxas, for compilations started from now on in this
    process, at `candidate`: CIQ_CONTROLS (its control-set file; unset when it
    has none) and CIQ_TRACE (`<workdir>/trace`; unset without a workdir)."""
    env = os.environ if environ is None else environ
    for name, value in zip(_HOOKS, (candidate.controls_path, candidate.trace_dir)):
        if value:
            env[name] = value
        else:
            env.pop(name, None)


class KernelCache:
    """Compiled kernels by (kernel, control-set digest).

    `compile(kernel, candidate)` compiles `kernel` for the selected candidate
    and returns what `get` hands back (a callable, a module, ...). It is
    called once per kernel and digest: again after `forget(digest)`, never
    for another kernel's sake. A kernel is any hashable object (a name, a
    function); compile errors propagate to the caller and cache nothing.
    """

    def __init__(self, compile):
        self._compile = compile
        self._compiled = {}
        self._candidate = Candidate()

    def select(self, candidate):
        self._candidate = candidate

    def forget(self, digest):
        for key in [k for k in self._compiled if k[1] == digest]:
            del self._compiled[key]

    @property
    def digest(self):
        """The digest of the selected candidate's controls."""
        return self._candidate.digest

    def get(self, kernel):
        """`kernel` compiled for the selected candidate, compiled now if it was not."""
        key = (kernel, self._candidate.digest)
        if key not in self._compiled:
            self._compiled[key] = self._compile(kernel, self._candidate)
        return self._compiled[key]

    __getitem__ = get

    def compiled(self):
        """The (kernel, digest) pairs held, in the order they were compiled."""
        return list(self._compiled)
