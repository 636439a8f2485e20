#!/usr/bin/env python3
"""A throwaway one-node Slurm cluster for tests: munged, slurmctld and slurmd
from Debian's packages, on loopback ports, all state in a temporary
directory, one node `ciqnode` with 4 CPUs and two fake GPUs (GRES gpu:2 on
/dev/null and /dev/zero: jobs can ask for --gres=gpu:1; nothing is a real
GPU). The node is declared larger than a 2-core CI machine
(SlurmdParameters=config_overrides) so that a tuning run's two evaluations
(--jobs 2: two builds, two benchmarks) run at once: with 2 CPUs and one GPU
each queued job waited about 2 s for Slurm to start it, and slurm-executor
took 30 s instead of 12 (slurm-campaign 32 s instead of 18).

  slurm_cluster.py check           exit 0 when a cluster starts here (one is
                                   started and stopped), else print why not
                                   (for lit's `slurm` feature)
  slurm_cluster.py start DIR       start it; DIR becomes a link to its state
                                   (short paths: munge's socket must fit), with
                                   DIR/slurm.conf for SLURM_CONF, DIR/jobcomp.txt
                                   (a line per finished job: Slurm's own record)
                                   and the daemons' logs
  slurm_cluster.py run DIR -- CMD  run CMD with SLURM_CONF set
  slurm_cluster.py jobs DIR        print finished jobs: "NAME STATE" per line
  slurm_cluster.py stop DIR        stop the daemons, remove the state

The daemons are killed after 900 s whatever happens (a loaded 2-core
machine runs the campaign test for over 300 s): a failed test leaks
nothing for long.
"""
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

LIFETIME = float(os.environ.get("CIQ_TEST_SLURM_LIFETIME", "900"))  # seconds before the reaper stops it
DAEMONS = ("munged", "slurmctld", "slurmd")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def why_not():
    missing = [p for p in ("munged", "slurmctld", "slurmd", "srun", "scancel", "squeue") if not shutil.which(p)
               and not os.path.exists("/usr/sbin/" + p)]
    if missing:
        return "Slurm is not installed (missing " + ", ".join(missing) + "; install/deps.sh installs it)"
    if os.geteuid() != 0:
        return "slurmd must run as root to start jobs; the tests run as uid %d" % os.geteuid()
    return ""


def probe():
    """Starts a cluster and stops it again: "" when that works, else why not
    (so that lit skips the Slurm tests with the reason instead of failing)."""
    link = tempfile.mktemp(prefix="ciq-slurm-probe-")
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "start", link], capture_output=True, text=True, timeout=120)
    if os.path.lexists(link):
        stop(link)
        os.remove(link)
    if r.returncode != 0:
        return "a test cluster does not start here: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    return ""


def program(name):
    return shutil.which(name) or "/usr/sbin/" + name


def config(state, host):
    ports = free_port(), free_port()
    return f"""ClusterName=ciqtest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ports[0]}
SlurmdPort={ports[1]}
SlurmUser=root
SlurmdUser=root
StateSaveLocation={state}/state
SlurmdSpoolDir={state}/spool
SlurmctldPidFile={state}/slurmctld.pid
SlurmdPidFile={state}/slurmd.pid
SlurmctldLogFile={state}/slurmctld.log
SlurmdLogFile={state}/slurmd.log
AuthType=auth/munge
AuthInfo=socket={state}/munge.sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc={state}/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
KillWait=2
GresTypes=gpu
SlurmdParameters=config_overrides
NodeName=ciqnode NodeAddr=127.0.0.1 CPUs=4 RealMemory=1000 Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


def env(state):
    return dict(os.environ, SLURM_CONF=os.path.join(state, "slurm.conf"))


def start(link):
    reason = why_not()
    if reason:
        sys.exit("slurm_cluster: cannot start: " + reason)
    # Unix sockets live in it (munge's, slurmd's and each step's in the
    # spool), 107 bytes of path at most: $TMPDIR when short (lit gives each
    # test one inside the checkout, which may be deep), else /tmp.
    base = tempfile.gettempdir()
    state = tempfile.mkdtemp(prefix="ciq-slurm-", dir=base if len(os.fsencode(base)) <= 40 else "/tmp")
    for d in ("state", "spool"):
        os.mkdir(os.path.join(state, d))
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(state, link)
    with open(os.path.join(state, "munge.key"), "wb") as f:
        f.write(os.urandom(1024))
    os.chmod(os.path.join(state, "munge.key"), 0o600)
    with open(os.path.join(state, "slurm.conf"), "w") as f:
        f.write(config(state, socket.gethostname().split(".")[0]))
    with open(os.path.join(state, "gres.conf"), "w") as f:
        f.write("NodeName=ciqnode Name=gpu File=/dev/null\nNodeName=ciqnode Name=gpu File=/dev/zero\n")
    e = env(state)
    subprocess.run([program("munged"), "--force", f"--key-file={state}/munge.key", f"--socket={state}/munge.sock",
                    f"--pid-file={state}/munged.pid", f"--log-file={state}/munged.log", f"--seed-file={state}/munge.seed"],
                   check=True, env=e)
    subprocess.run([program("slurmctld"), "-i"], check=True, env=e)
    subprocess.run([program("slurmd"), "-N", "ciqnode"], check=True, env=e)
    # The reaper: stops everything after LIFETIME seconds.
    reaper = subprocess.Popen([sys.executable, os.path.abspath(__file__), "reap", state], start_new_session=True,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(state, "reaper.pid"), "w") as f:
        f.write(str(reaper.pid))
    deadline = time.time() + 60
    while time.time() < deadline:
        r = subprocess.run(["sinfo", "--noheader", "--format=%t"], capture_output=True, text=True, env=e)
        if r.stdout.strip() == "idle":
            return
        time.sleep(0.3)
    stop(state)
    sys.exit("slurm_cluster: the node did not become idle within 60 s")


def signal_pidfiles(state, names, sig):
    for name in names:
        try:
            with open(os.path.join(state, name + ".pid")) as f:
                os.kill(int(f.read().strip()), sig)
        except (OSError, ValueError):
            pass


def kill_daemons(state):
    signal_pidfiles(state, DAEMONS, signal.SIGTERM)
    time.sleep(0.5)
    signal_pidfiles(state, DAEMONS, signal.SIGKILL)
    # What the pid files do not name (steps' slurmstepd outlive slurmd; a
    # daemon whose pid file is gone): every Slurm or munge process whose
    # command line or environment (SLURM_CONF) points into this state.
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = open(f"/proc/{pid}/cmdline", "rb").read()
            environ = open(f"/proc/{pid}/environ", "rb").read()
        except OSError:
            continue
        name = os.path.basename(cmdline.split(b"\0")[0])
        if name.startswith((b"slurm", b"munged")) and (state.encode() in cmdline or state.encode() in environ):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass


def stop(state):
    state = os.path.realpath(state)
    kill_daemons(state)
    # Last, and not when the reaper itself is stopping the cluster: it used
    # to kill itself here first, and leave the daemons running.
    try:
        with open(os.path.join(state, "reaper.pid")) as f:
            reaper = int(f.read().strip())
        if reaper != os.getpid():
            os.kill(reaper, signal.SIGKILL)
    except (OSError, ValueError):
        pass
    shutil.rmtree(state, ignore_errors=True)


def main():
    command = sys.argv[1]
    if command == "check":
        reason = why_not() or probe()
        print(reason or "ok")
        sys.exit(1 if reason else 0)
    if command == "start":
        start(sys.argv[2])
    elif command == "run":
        state = os.path.realpath(sys.argv[2])
        sys.exit(subprocess.call(sys.argv[sys.argv.index("--") + 1:], env=env(state)))
    elif command == "jobs":
        for path in glob.glob(os.path.join(os.path.realpath(sys.argv[2]), "jobcomp.txt")):
            for line in open(path):
                fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
                print(fields.get("Name", "?"), fields.get("JobState", "?"))
    elif command == "stop":
        stop(sys.argv[2])
    elif command == "reap":
        time.sleep(LIFETIME)
        stop(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
