# lit configuration for ciq's end-to-end tests.
#
# Substitutions: %ciq_ptxas %ciq_nvcc %ciq_cache (the built tools),
# %fake_ptxas %fake_nvcc (scripted stand-ins that print their argv), %ptxas
# %nvcc (the real CUDA tools), %python, %inputs, %tools, %bench (the repo's bench/),
# %ciq_bin (the directory of the built tools), %slurm (a test Slurm cluster).
# Feature `cuda`: the real nvcc and ptxas exist (no GPU is needed).
import os
import shutil
import sys

config.name = "ciq"

# Each test in its own HOME, cache and temporary folders, checked after it
# runs (test/lit/isolated_format.py); a module, so lit's workers can load it.
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(__file__))
from isolated_format import IsolatedShTest  # noqa: E402

config.test_format = IsolatedShTest(execute_external=False)
config.suffixes = [".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)

# A clean, predictable environment: no cache, log or tuning variables
# leak in from the person running the tests.
for var in list(os.environ):
    if var.startswith("CIQ_"):
        del os.environ[var]
# The toolkit the tests compare against (%nvcc, %ptxas) comes first on PATH,
# so the wrappers find the very same tools: a machine may also carry other
# nvcc's (CI has /usr/local/bin/nvcc, a script that execs the versioned
# toolkit, whose --dryrun lines name a different directory).
config.environment["PATH"] = os.pathsep.join(
    [config.ciq_bin_dir, config.llvm_tools_dir, os.path.join(config.cuda_home, "bin"), os.environ.get("PATH", "")])
config.environment["CIQ_SPACES_DIR"] = os.path.join(config.ciq_share_dir, "spaces")
# Python itself, not a launcher in front of it: pyenv's shim (a bash script
# that runs `pyenv exec`) costs ~80 ms a start, and the tests start Python
# thousands of times, as %python and as `#!/usr/bin/env python3` tools
# (through python-bin/python3 first on PATH).
import subprocess


def kept_probe(name, identity, probe):
    """probe()'s answer (a one-line string), kept in
    build/test/lit/probe-NAME.txt with `identity` (what would change it: the
    user, the tools' files) and asked again only when that changed. lit
    reads this file once per test (ctest runs each test by name), and the
    probes cost 0.15 s a start: 35 s over the suite."""
    identity = repr(identity)
    kept = os.path.join(config.test_exec_root, "probe-%s.txt" % name)
    try:
        with open(kept) as f:
            line, answer = f.read().split("\n", 1)
        if line == identity:
            return answer.rstrip("\n")
    except (OSError, ValueError):
        pass
    answer = probe()
    os.makedirs(config.test_exec_root, exist_ok=True)
    with open(kept + ".%d" % os.getpid(), "w") as f:
        f.write(identity + "\n" + answer + "\n")
    os.replace(kept + ".%d" % os.getpid(), kept)
    return answer


def mtimes(*programs):
    return [os.path.getmtime(p) if p else None for p in map(shutil.which, programs)]


interpreter = kept_probe("python", [config.python, os.path.getmtime(config.python) if os.path.exists(config.python) else None],
                         lambda: subprocess.run([config.python, "-c", "import sys; print(sys.executable)"],
                                                capture_output=True, text=True).stdout.strip())
if interpreter and os.access(interpreter, os.X_OK) and os.path.realpath(interpreter) != os.path.realpath(config.python):
    config.python = interpreter
    python_bin = os.path.join(config.test_exec_root, "python-bin")
    os.makedirs(python_bin, exist_ok=True)
    link = os.path.join(python_bin, "python3")
    if not os.path.islink(link) or os.readlink(link) != interpreter:
        os.symlink(interpreter, link + ".%d" % os.getpid())
        os.replace(link + ".%d" % os.getpid(), link)
    config.environment["PATH"] = python_bin + os.pathsep + config.environment["PATH"]
# HOME, XDG_CACHE_HOME and TMPDIR: the test's own folders (IsolatedShTest).
for var in ("XDG_CACHE_HOME", "TMP", "TEMP", "TEMPDIR"):
    config.environment.pop(var, None)
# Toolchains that rustup installed under the user's HOME stay found (pip
# runs `rustc --version` for its user agent; in a fresh HOME rustup's proxy
# would write ~/.rustup/settings.toml).
for var, folder in (("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")):
    if var in os.environ:
        config.environment[var] = os.environ[var]
    elif os.path.isdir(os.path.join(os.path.expanduser("~"), folder)):
        config.environment[var] = os.path.join(os.path.expanduser("~"), folder)
# The test tools and bench scripts are run from the source tree: no bytecode there.
config.environment["PYTHONDONTWRITEBYTECODE"] = "1"

tools = os.path.join(config.ciq_source_dir, "test", "tools")
config.substitutions.append(("%ciq_ptxas", os.path.join(config.ciq_bin_dir, "ciq-ptxas")))
config.substitutions.append(("%ciq_nvcc", os.path.join(config.ciq_bin_dir, "ciq-nvcc")))
config.substitutions.append(("%ciq_cache", os.path.join(config.ciq_bin_dir, "ciq-cache")))
config.substitutions.append(("%ciq_tuner", os.path.join(config.ciq_bin_dir, "ciq-tuner")))
config.substitutions.append(("%fake_ptxas", os.path.join(tools, "fake_ptxas.py")))
config.substitutions.append(("%fake_nvcc", os.path.join(tools, "fake_nvcc.py")))
config.substitutions.append(("%ptxas", os.path.join(config.cuda_home, "bin", "ptxas")))
config.substitutions.append(("%nvcc", os.path.join(config.cuda_home, "bin", "nvcc")))
config.substitutions.append(("%cuda_home", config.cuda_home))
config.substitutions.append(("%python", config.python))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.substitutions.append(("%tools", tools))
config.substitutions.append(("%redis", config.python + " " + os.path.join(tools, "redis.py")))
config.substitutions.append(("%bench", os.path.join(os.path.dirname(os.path.dirname(config.test_source_root)), "bench")))
config.substitutions.append(("%ciq_bin", config.ciq_bin_dir))
config.substitutions.append(("%ciq_source", config.ciq_source_dir))
config.substitutions.append(("%system_path", config.environment["PATH"]))

if os.access(os.path.join(config.cuda_home, "bin", "ptxas"), os.X_OK) and \
   os.access(os.path.join(config.cuda_home, "bin", "nvcc"), os.X_OK):
    config.available_features.add("cuda")
    config.environment["CUDA_HOME"] = config.cuda_home
# Feature `cupti`: libciq-inject was built (the toolkit has CUPTI's
# headers). %inject_lib is it; %inject_driver a stand-in program that calls
# its hook as cuInit would; %profile_tool prints what the trace reader reads.
config.substitutions.append(("%inject_driver", os.path.join(config.ciq_test_bin_dir, "ciq-test-inject-driver")))
config.substitutions.append(("%profile_tool", os.path.join(config.ciq_test_bin_dir, "ciq-test-profile")))
# %controls_tool: control sets as the C++ side writes and reads them (test/spaces/control_set_tool.cpp).
config.substitutions.append(("%controls_tool", os.path.join(config.ciq_test_bin_dir, "ciq-test-controls")))
# %fake_nvml: a stand-in libnvidia-ml (test/nvml/fake_nvml.c) for CIQ_NVML_LIBRARY.
config.substitutions.append(("%fake_nvml", os.path.join(config.ciq_test_bin_dir, "libciq-test-fake-nvml.so")))
# %fake_nss: the directory of a stand-in NSS module that marks its loading (test/nss/marker_nss.c).
config.substitutions.append(("%fake_nss", os.path.join(config.ciq_test_bin_dir, "fake-nss")))
# %replay_cuda: a stand-in libcuda (test/cuda/fake_cuda.c) for ciq-replay's CIQ_CUDA_LIBRARY.
config.substitutions.append(("%replay_cuda", os.path.join(config.ciq_test_bin_dir, "libciq-test-replay-cuda.so")))
# ciq-tuner asks the CUDA driver whether a GPU is usable before a profile, a
# campaign or a kernel-time run (tuner/measure/gpu_driver.h): in the suite
# that stand-in answers yes, so that stand-in programs (fake_kernel_program.py)
# are timed as a GPU program would be; a test of a machine without a GPU
# points CIQ_CUDA_LIBRARY at a library that does not exist.
config.environment["CIQ_CUDA_LIBRARY"] = os.path.join(config.ciq_test_bin_dir, "libciq-test-replay-cuda.so")
if config.ciq_inject_library:
    config.available_features.add("cupti")
    config.substitutions.append(("%inject_lib", config.ciq_inject_library))
    # Kernel capture without a GPU (test/inject/): %capture_driver plays a
    # program's launches through %fake_cuda (a stand-in libcuda.so.1;
    # %fake_cuda_old lacks cuFuncGetParamInfo) and %fake_cupti (libcupti.so.13).
    config.substitutions.append(("%capture_driver", os.path.join(config.ciq_test_bin_dir, "ciq-test-capture-driver")))
    config.substitutions.append(("%fake_cuda_old", os.path.join(config.ciq_test_bin_dir, "fake-cuda-old", "libcuda.so.1")))
    config.substitutions.append(("%fake_cuda", os.path.join(config.ciq_test_bin_dir, "fake-cuda", "libcuda.so.1")))
    config.substitutions.append(("%fake_cupti", os.path.join(config.ciq_test_bin_dir, "fake-cupti", "libcupti.so.13")))
else:
    lit_config.note("kernel-timing tests skipped: libciq-inject was not built (no CUPTI headers in the CUDA Toolkit)")
if shutil.which("redis-server") and shutil.which("redis-cli"):
    config.available_features.add("redis")
if shutil.which("cmake"):
    config.available_features.add("cmake")
# Build tools the dependency-tracking tests drive (docs/builds.md).
for tool in ("ninja", "make", "ccache"):
    if shutil.which(tool):
        config.available_features.add(tool)
# Feature `slurm`: a one-node Slurm cluster can be started here
# (test/tools/slurm_cluster.py); without it the Slurm tests are skipped, and
# the reason is printed.
# The check starts and stops a cluster (~2 s) and lit runs this file once
# per ctest test: its answer is kept in the exec root, valid while the
# daemons, the cluster script and the user are the same.
def slurm_check():
    check = subprocess.run([config.python, os.path.join(tools, "slurm_cluster.py"), "check"], capture_output=True, text=True)
    return "ok" if check.returncode == 0 else (check.stdout.strip().replace("\n", " ") or "the check failed")


slurm = kept_probe("slurm", [os.geteuid(), os.path.getmtime(os.path.join(tools, "slurm_cluster.py"))] +
                   mtimes("munged", "slurmctld", "slurmd"), slurm_check)
if slurm == "ok":
    config.available_features.add("slurm")
else:
    lit_config.note("Slurm tests skipped: " + slurm)
# Feature `chromium`: Debian's headless Chromium, to render tuning reports.
if shutil.which("chromium"):
    config.available_features.add("chromium")
    # In a short private folder under /tmp (its socket's path must fit 107 bytes), not in HOME.
    config.substitutions.append(("%chromium_dom", "%s %s" % (config.python, os.path.join(tools, "chromium_dom.py"))))
# Feature `tmpfs-mount`: a small tmpfs can be mounted here (root in a
# container that allows it): the disk-full tests fill one.
def tmpfs_check():
    import tempfile
    point = tempfile.mkdtemp(prefix="ciq-lit-tmpfs-")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", point], capture_output=True).returncode == 0
    if mounted:
        subprocess.run(["umount", point], capture_output=True)
    os.rmdir(point)
    return "ok" if mounted else "no"


if os.geteuid() == 0 and shutil.which("mount") and kept_probe("tmpfs", [os.geteuid()] + mtimes("mount"), tmpfs_check) == "ok":
    config.available_features.add("tmpfs-mount")
# Feature `pid-namespace`: `unshare --pid --fork` runs a command as pid 1 of
# a new PID namespace (root, util-linux): two such runs are two processes
# with one pid, as in two containers that share a directory.
if os.geteuid() == 0 and shutil.which("unshare") and \
        kept_probe("pid-namespace", [os.geteuid()] + mtimes("unshare"),
                   lambda: "ok" if subprocess.run(["unshare", "--pid", "--fork", "true"], capture_output=True).returncode == 0
                   else "no") == "ok":
    config.available_features.add("pid-namespace")
else:
    lit_config.note("PID-namespace tests skipped: `unshare --pid --fork` needs root and util-linux")
config.substitutions.append(("%slurm", config.python + " " + os.path.join(tools, "slurm_cluster.py")))
# Feature `second-user`: the tests run as root and can act as another local
# user (`nobody`, through setpriv), who prepares directories, links and
# FIFOs that ciq later meets: %as_other runs a command as that user. Needs
# the test directory to be reachable by that user.
def folders_up(path):
    """`path` and every folder above it, with their modes and owners: what
    another user's reach depends on."""
    out = []
    while True:
        st = os.stat(path)
        out.append((path, st.st_mode, st.st_uid))
        parent = os.path.dirname(path)
        if parent == path:
            return out
        path = parent


second_user = "setpriv --reuid=nobody --regid=nogroup --clear-groups"
if os.geteuid() != 0:
    lit_config.note("cross-user tests skipped: they need root, to act as a second user (they run as uid %d)" % os.geteuid())
elif not shutil.which("setpriv"):
    lit_config.note("cross-user tests skipped: no setpriv (util-linux)")
elif kept_probe("second-user", [os.geteuid(), folders_up(config.test_exec_root)] + mtimes("setpriv"),
                lambda: "ok" if subprocess.run(second_user.split() + ["test", "-x", config.test_exec_root],
                                               capture_output=True).returncode == 0 else "no") != "ok":
    lit_config.note("cross-user tests skipped: user nobody cannot reach " + config.test_exec_root)
else:
    config.available_features.add("second-user")
    config.substitutions.append(("%as_other", second_user))
