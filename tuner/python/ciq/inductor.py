"""Tuned results reach torch.compile's own cache (Inductor's FX graph cache).

Triton keys each compiled kernel on the whole text of `$TRITON_PTXAS_PATH
--version`, to which ciq-ptxas adds a line naming the state of ciq's cache:
a shipped or removed entry makes Triton compile again. Inductor does not
ask Triton: with its defaults (torch >= 2.8: `fx_graph_cache`,
`bundle_triton_into_fx_graph_cache` and `use_static_cuda_launcher` on) a
compiled graph is saved with its kernels' cubins, under a key holding
Triton's own source hash (`triton_key()`), the GPU's name and CUDA's version
but not the ptxas text, and loaded on the next run without compiling
(torch/_inductor/codecache.py: FxGraphHashDetails, CacheBase.get_system;
triton_bundler.py). What Inductor does hash is
`torch.compiler.config.cache_key_tag` (TORCH_COMPILE_CACHE_KEY_TAG), in the
FX graph and AOTAutograd keys alike.

So: `install()` before the first compiled call, or, with no change to the
program, `TORCH_COMPILE_CACHE_KEY_TAG=$(python3 -m ciq.inductor)` in its
environment, puts a digest of that same --version text in the tag. A change
of ciq's cache then misses Inductor's cache (every graph, the tag being one
for all) and Triton's (every kernel compiled through ciq-ptxas), and the
kernels compile with what the cache holds now. Cost: one run of
`ciq-ptxas --version` (a few milliseconds) per install.

Nothing here imports torch unless `install` is given no config; a missing
TRITON_PTXAS_PATH, or one that cannot be run, leaves the tag alone.
"""
import hashlib
import os
import subprocess
import sys

TAG_PREFIX = "ciq-"
SEPARATOR = "+"


def ptxas_state_tag(environ=None, run=subprocess.run, timeout=60):
    """'ciq-<digest of `$TRITON_PTXAS_PATH --version`'s stdout>', the text
    Triton keys its kernels on; None when the variable is unset or the
    program cannot be run or fails."""
    env = os.environ if environ is None else environ
    ptxas = env.get("TRITON_PTXAS_PATH")
    if not ptxas:
        return None
    try:
        result = run([ptxas, "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=timeout,
                     check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0 or not result.stdout:
        return None
    return TAG_PREFIX + hashlib.sha256(result.stdout).hexdigest()[:32]


def folded_tag(current, tag):
    """`current` (a cache_key_tag) with `tag` in place of one an earlier
    install put there; the user's own parts are kept, in order."""
    parts = [p for p in (current or "").split(SEPARATOR) if p and not p.startswith(TAG_PREFIX)]
    return SEPARATOR.join(parts + [tag])


def install(config=None, environ=None, run=subprocess.run):
    """Folds ptxas_state_tag() into `config.cache_key_tag` (default:
    torch.compiler.config). Returns the tag, or None when there is none to
    fold in (the tag is then left as it was). Call it before the first
    torch.compile'd call, and again after changing ciq's cache in the same
    process if that process compiles again (Triton reads the version once
    per process; Inductor's key is made per compile)."""
    tag = ptxas_state_tag(environ, run)
    if tag is None:
        return None
    if config is None:
        try:
            import torch.compiler.config as config  # noqa: PLC0415 (torch only when asked)
        except ImportError:
            return None
    config.cache_key_tag = folded_tag(getattr(config, "cache_key_tag", ""), tag)
    return tag


def main(argv=None):
    """`python3 -m ciq.inductor`: prints the tag for TORCH_COMPILE_CACHE_KEY_TAG
    (joined to the one in the environment, if any); prints nothing and exits
    1 when there is none."""
    tag = ptxas_state_tag()
    if tag is None:
        print("ciq.inductor: no tag: TRITON_PTXAS_PATH is unset or cannot be run with --version", file=sys.stderr)
        return 1
    print(folded_tag(os.environ.get("TORCH_COMPILE_CACHE_KEY_TAG", ""), tag))
    return 0


if __name__ == "__main__":
    sys.exit(main())
