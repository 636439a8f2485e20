"""ciq.inductor against a stand-in ptxas and a stand-in torch.compiler.config:
the tag follows the --version text (so a change of ciq's cache misses
Inductor's cache), keeps the user's own tag, and leaves it alone when there
is no ptxas to ask."""
import os
import stat
import subprocess
import sys
import tempfile
import types
import unittest

from ciq import inductor


class InductorTagTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.state = os.path.join(self.dir.name, "state")
        self.ptxas = os.path.join(self.dir.name, "ptxas")
        with open(self.ptxas, "w") as f:
            f.write("#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\ncat \"$(dirname \"$0\")/state\"\n")
        os.chmod(self.ptxas, os.stat(self.ptxas).st_mode | stat.S_IXUSR)
        self.set_state("ciq controls state aaaa\n")
        self.env = {"TRITON_PTXAS_PATH": self.ptxas}

    def tearDown(self):
        self.dir.cleanup()

    def set_state(self, text):
        with open(self.state, "w") as f:
            f.write(text)

    def test_tag_follows_the_version_text(self):
        first = inductor.ptxas_state_tag(self.env)
        self.assertTrue(first.startswith("ciq-"))
        self.assertEqual(first, inductor.ptxas_state_tag(self.env))
        self.set_state("ciq controls state bbbb\n")
        self.assertNotEqual(first, inductor.ptxas_state_tag(self.env))

    def test_install_keeps_the_users_tag_and_replaces_its_own(self):
        config = types.SimpleNamespace(cache_key_tag="mine")
        first = inductor.install(config, self.env)
        self.assertEqual(config.cache_key_tag, "mine+" + first)
        self.set_state("ciq controls state bbbb\n")
        second = inductor.install(config, self.env)
        self.assertEqual(config.cache_key_tag, "mine+" + second)
        self.assertNotEqual(first, second)

    def test_no_ptxas_leaves_the_tag_alone(self):
        config = types.SimpleNamespace(cache_key_tag="mine")
        self.assertIsNone(inductor.install(config, {}))
        self.assertIsNone(inductor.install(config, {"TRITON_PTXAS_PATH": os.path.join(self.dir.name, "absent")}))
        self.set_state("")
        with open(self.ptxas, "a") as f:
            f.write("exit 3\n")
        self.assertIsNone(inductor.install(config, self.env))
        self.assertEqual(config.cache_key_tag, "mine")

    def test_install_defaults_to_torch_compiler_config(self):
        config = types.SimpleNamespace(cache_key_tag="")
        torch = types.ModuleType("torch")
        compiler = types.ModuleType("torch.compiler")
        torch.compiler, compiler.config = compiler, config
        saved = {k: sys.modules.get(k) for k in ("torch", "torch.compiler", "torch.compiler.config")}
        sys.modules.update({"torch": torch, "torch.compiler": compiler, "torch.compiler.config": config})
        try:
            tag = inductor.install(environ=self.env)
        finally:
            for k, v in saved.items():
                if v is None:
                    sys.modules.pop(k, None)
                else:
                    sys.modules[k] = v
        self.assertEqual(config.cache_key_tag, tag)

    def test_module_prints_the_tag_for_the_environment(self):
        env = dict(os.environ, TRITON_PTXAS_PATH=self.ptxas, TORCH_COMPILE_CACHE_KEY_TAG="mine",
                   PYTHONPATH=os.pathsep.join(sys.path))
        out = subprocess.run([sys.executable, "-m", "ciq.inductor"], env=env, stdout=subprocess.PIPE, check=True,
                             text=True).stdout.strip()
        self.assertEqual(out, "mine+" + inductor.ptxas_state_tag(self.env))
        env.pop("TRITON_PTXAS_PATH")
        self.assertEqual(subprocess.run([sys.executable, "-m", "ciq.inductor"], env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL).returncode, 1)


if __name__ == "__main__":
    unittest.main()
