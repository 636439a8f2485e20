"""Cache busting for Triton JIT functions (written against Triton 3.x; not yet run with Triton).

Triton keeps compiled kernels in two places, neither keyed by ciq's controls
(DESIGN.md; Triton's python/triton/runtime/jit.py and runtime/cache.py):

- in memory, per JIT function: `fn.device_caches`, a defaultdict from device
  to (kernel cache, target, backend, binder) in Triton 3.x; `fn.cache`,
  device -> {key: kernel}, in older releases;
- on disk, under `TRITON_CACHE_DIR` (default ~/.triton/cache), which Triton
  reads from the environment when it opens its cache for a compilation.

TritonCaches keeps one of each per control-set digest: `select` swaps every
watched function's in-memory cache for the digest's own (new and empty the
first time) and points TRITON_CACHE_DIR at `<root>/<digest>`. So a new
candidate misses both and compiles (running `$TRITON_PTXAS_PATH`, i.e.
ciq-ptxas, with the candidate's CIQ_CONTROLS), a candidate compiled before
is found in memory, and functions that are not watched keep their caches.
`forget(digest)` drops both, so the next use compiles (and ciq-ptxas
traces) again. Nothing here imports triton; it only needs the watched
objects to be JIT functions (or wrappers with `.fn`, as @triton.autotune
and @triton.heuristics make).

Untested on a GPU: the unit tests use stand-ins with Triton's attributes.
An alternative where the controls are module options only: pass
`candidate.options` as Triton's `ptx_options` launch option, which is part
of Triton's key (NVIDIA's examples pass `--apply-controls` that way); that
needs no swapping but cannot carry per-kernel directives.
"""
import atexit
import collections
import os
import shutil
import tempfile

CACHE_ATTRIBUTES = ("device_caches", "cache")   # Triton 3.x, then older


def jit_function(fn):
    """The JIT function under wrappers (@triton.autotune, @triton.heuristics: `.fn`)."""
    seen = 0
    while not any(hasattr(fn, a) for a in CACHE_ATTRIBUTES) and hasattr(fn, "fn") and seen < 16:
        fn, seen = fn.fn, seen + 1
    return fn


def _empty_like(cache):
    if isinstance(cache, collections.defaultdict):
        return collections.defaultdict(cache.default_factory)
    return type(cache)()


class TritonCaches:
    """Per control-set digest: the watched JIT functions' in-memory caches
    and a TRITON_CACHE_DIR of its own, under `root` (a fresh temporary
    directory, removed at exit, when not given)."""

    def __init__(self, functions=(), root=None, environ=None):
        self._env = os.environ if environ is None else environ
        if root is None:
            root = tempfile.mkdtemp(prefix="ciq-triton-")
            atexit.register(shutil.rmtree, root, True)
        self.root = root
        self._functions = []
        self._held = {}          # (index of function, digest) -> its in-memory cache
        self._digest = None
        for fn in functions:
            self.watch(fn)

    def watch(self, fn):
        """Busts `fn`'s caches from the next `select` on. TypeError if it has no Triton cache."""
        jit = jit_function(fn)
        if not any(hasattr(jit, a) for a in CACHE_ATTRIBUTES):
            raise TypeError(f"{fn!r} is not a Triton JIT function (no {' or '.join(CACHE_ATTRIBUTES)})")
        self._functions.append(jit)
        return fn

    @staticmethod
    def _attribute(fn):
        return next(a for a in CACHE_ATTRIBUTES if hasattr(fn, a))

    def cache_dir(self, digest):
        return os.path.join(self.root, digest)

    def select(self, candidate):
        digest = candidate.digest
        os.makedirs(self.cache_dir(digest), exist_ok=True)
        self._env["TRITON_CACHE_DIR"] = self.cache_dir(digest)
        if digest == self._digest:
            return
        for i, fn in enumerate(self._functions):
            attr = self._attribute(fn)
            current = getattr(fn, attr)
            if self._digest is not None:
                self._held[(i, self._digest)] = current
            setattr(fn, attr, self._held.pop((i, digest), None) or _empty_like(current))
        self._digest = digest

    def forget(self, digest):
        shutil.rmtree(self.cache_dir(digest), ignore_errors=True)
        for i, fn in enumerate(self._functions):
            self._held.pop((i, digest), None)
            if digest == self._digest:
                attr = self._attribute(fn)
                setattr(fn, attr, _empty_like(getattr(fn, attr)))
