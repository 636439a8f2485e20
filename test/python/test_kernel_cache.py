"""The cache-busting layer against a fake compile function that records what it compiled:
a new candidate compiles again, a repeated one does not, other kernels are untouched."""
import collections
import os
import tempfile
import unittest

from ciq.candidate import Candidate
from ciq.controls import parse_control_set
from ciq.jit import KernelCache, candidate_environment
from ciq.triton_caches import TritonCaches


def candidate(text):
    return Candidate(controls_text=text, controls=parse_control_set(text))


class KernelCacheTest(unittest.TestCase):
    def setUp(self):
        self.compiled = []

        def compile(kernel, c):
            self.compiled.append((kernel, c.controls_text))
            return f"{kernel} with {c.controls_text or 'defaults'}"

        self.cache = KernelCache(compile)

    def test_new_candidate_compiles_repeated_one_does_not(self):
        a, b = candidate("maxrregcount = 64\n"), candidate("maxrregcount = 32\n")
        self.cache.select(a)
        self.assertEqual(self.cache.get("matmul"), "matmul with maxrregcount = 64\n")
        self.cache.get("matmul")
        self.cache.select(b)
        self.assertEqual(self.cache.get("matmul"), "matmul with maxrregcount = 32\n")
        self.cache.select(candidate("maxrregcount=64"))   # a again, written differently
        self.assertEqual(self.cache.get("matmul"), "matmul with maxrregcount = 64\n")
        self.assertEqual(self.compiled, [("matmul", "maxrregcount = 64\n"), ("matmul", "maxrregcount = 32\n")])

    def test_other_kernels_are_untouched(self):
        a, b = candidate("opt-level = 1"), candidate("opt-level = 2")
        self.cache.select(a)
        self.cache.get("matmul")
        self.cache.get("softmax")
        self.cache.select(b)
        self.cache.get("matmul")   # only matmul is used under b
        self.cache.select(a)
        self.cache.get("softmax")
        self.assertEqual([k for k, _ in self.compiled], ["matmul", "softmax", "matmul"])
        self.assertEqual(self.cache.compiled(), [("matmul", a.digest), ("softmax", a.digest), ("matmul", b.digest)])

    def test_forget_makes_the_next_use_compile(self):
        a = candidate("opt-level = 1")
        self.cache.select(a)
        self.cache.get("matmul")
        self.cache.get("softmax")
        self.cache.forget(a.digest)
        self.cache.get("matmul")
        self.assertEqual(len(self.compiled), 3)

    def test_a_failed_compile_caches_nothing(self):
        calls = []

        def compile(kernel, c):
            calls.append(kernel)
            raise RuntimeError("ptxas exit 255")

        cache = KernelCache(compile)
        for _ in range(2):
            with self.assertRaises(RuntimeError):
                cache.get("k")
        self.assertEqual(calls, ["k", "k"])

    def test_environment_points_ciq_ptxas_at_the_candidate(self):
        env = {"CIQ_TRACE": "/stale"}
        c = Candidate(controls_path="/r/e/candidate.controls", workdir="/r/e")
        candidate_environment(c, env)
        self.assertEqual(env, {"CIQ_CONTROLS": "/r/e/candidate.controls", "CIQ_TRACE": "/r/e/trace"})
        candidate_environment(Candidate(), env)
        self.assertEqual(env, {})


class FakeJITFunction:
    """Triton 3.x's shape: device_caches = defaultdict(create_binder), each
    value (kernel cache, target, backend, binder); `run` compiles on a miss."""

    def __init__(self, name, log):
        self.name, self.log = name, log
        self.device_caches = collections.defaultdict(self.create_binder)

    def create_binder(self):
        return {}, "cuda:90", "backend", "binder"

    def run(self, key, env):
        kernels = self.device_caches[0][0]
        if key not in kernels:
            self.log.append((self.name, key, env["TRITON_CACHE_DIR"]))
            kernels[key] = object()
        return kernels[key]


class Autotuned:
    def __init__(self, fn):
        self.fn = fn


class OldJITFunction:
    """Triton before 3.2: cache = defaultdict(dict), device -> key -> kernel."""

    def __init__(self):
        self.cache = collections.defaultdict(dict)


class TritonCachesTest(unittest.TestCase):
    def test_swaps_in_memory_caches_and_cache_dir_per_digest(self):
        log, env = [], {}
        with tempfile.TemporaryDirectory() as root:
            matmul, other = FakeJITFunction("matmul", log), FakeJITFunction("other", log)
            caches = TritonCaches([Autotuned(matmul)], root=root, environ=env)
            a, b = candidate("maxrregcount = 64"), candidate("maxrregcount = 32")
            other.run("k", {"TRITON_CACHE_DIR": "x"})
            other_cache = other.device_caches

            caches.select(a)
            first = matmul.run("k", env)
            self.assertEqual(env["TRITON_CACHE_DIR"], os.path.join(root, a.digest))
            self.assertTrue(os.path.isdir(env["TRITON_CACHE_DIR"]))
            caches.select(b)
            self.assertIsNot(matmul.run("k", env), first)         # compiled again
            caches.select(a)
            self.assertIs(matmul.run("k", env), first)            # reused
            self.assertEqual([(n, d) for n, _, d in log if n == "matmul"],
                             [("matmul", os.path.join(root, a.digest)), ("matmul", os.path.join(root, b.digest))])
            self.assertIs(other.device_caches, other_cache)       # not watched: untouched
            self.assertEqual(len(log), 3)

            caches.forget(a.digest)
            self.assertFalse(os.path.exists(os.path.join(root, a.digest)))
            caches.select(a)
            self.assertIsNot(matmul.run("k", env), first)         # forgotten: compiles
            caches.select(b)
            caches.forget(a.digest)
            caches.select(a)
            matmul.run("k", env)
            self.assertEqual(len(log), 5)

    def test_older_triton_and_non_jit_objects(self):
        old = OldJITFunction()
        root = tempfile.TemporaryDirectory()
        self.addCleanup(root.cleanup)
        caches = TritonCaches([old], root=root.name, environ={})
        caches.select(candidate("opt-level = 1"))
        old.cache[0]["k"] = "kernel"
        caches.select(candidate("opt-level = 2"))
        self.assertEqual(dict(old.cache), {})
        caches.select(candidate("opt-level=1"))
        self.assertEqual(old.cache[0]["k"], "kernel")
        with self.assertRaises(TypeError):
            caches.watch(lambda: None)


if __name__ == "__main__":
    unittest.main()
