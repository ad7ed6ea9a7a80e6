"""A single-node Slurm cluster on localhost for tests: munged, slurmctld and
slurmd with their own config, key, socket, ports, state and PID files in one
temporary directory, so it touches nothing of a system cluster. Needs root.

    with LocalCluster() as c:
        c.run(["sbatch", ...])      # SLURM_CONF points at this cluster
"""
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

SLURM_CONF = """ClusterName=kevolvetest
SlurmctldHost=localhost
SlurmUser=root
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
AuthInfo=socket={munge_socket}
CredType=cred/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc={d}/log/jobcomp.log
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=600
KillWait=30
Waittime=0
NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} Boards=1 SocketsPerBoard=1 CoresPerSocket={cpus} ThreadsPerCore=1 RealMemory=4000 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def missing_tools():
    return [t for t in ("munged", "slurmctld", "slurmd", "sbatch", "srun", "scontrol") if not shutil.which(t)]


class LocalCluster:
    def __init__(self, cpus=4):
        self.cpus = cpus
        self.dir = Path(tempfile.mkdtemp(prefix="kevolve-slurm-"))
        os.chmod(self.dir, 0o755)
        self.conf = self.dir / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        for k in list(self.env):  # a test run inside a Slurm job must not inherit its allocation
            if k.startswith("SLURM_") and k != "SLURM_CONF":
                del self.env[k]

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def run(self, args, **kw):
        return subprocess.run(args, env=kw.pop("env", self.env), capture_output=True, text=True, timeout=kw.pop("timeout", 60), **kw)

    def start(self):
        d = self.dir
        for sub in ("state", "spool", "log"):
            (d / sub).mkdir()
        m = d / "munge"
        m.mkdir()
        os.chmod(m, 0o755)  # munged: the socket's directory must be searchable by all
        (m / "key").mkdir(mode=0o700)
        key = m / "key" / "munge.key"
        key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o600)
        subprocess.run(["chown", "-R", "munge:munge", str(m)], check=True)
        self.munge_socket = m / "munge.socket"
        subprocess.run(["runuser", "-u", "munge", "--", "munged", f"--socket={self.munge_socket}", f"--key-file={key}",
                        f"--pid-file={m / 'munged.pid'}", f"--log-file={m / 'munged.log'}", f"--seed-file={m / 'munged.seed'}"],
                       check=True, capture_output=True, text=True, timeout=30)
        self.conf.write_text(SLURM_CONF.format(d=d, ctld_port=free_port(), slurmd_port=free_port(),
                                               munge_socket=self.munge_socket, cpus=self.cpus))
        for cmd in (["slurmctld", "-i", "-f", str(self.conf)], ["slurmd", "-N", "localhost", "-f", str(self.conf)]):
            r = self.run(cmd, timeout=60)
            if r.returncode != 0:
                raise RuntimeError(f"{cmd[0]} did not start ({r.returncode}): {r.stderr}{self.logs()}")
        end = time.time() + 60
        while time.time() < end:
            r = self.run(["sinfo", "-h", "-o", "%T"])
            if r.returncode == 0 and r.stdout.strip().startswith("idle"):
                return
            time.sleep(0.2)
        raise RuntimeError(f"the node did not become idle: {r.stdout}{r.stderr}{self.logs()}")

    def logs(self):
        out = ""
        for f in sorted((self.dir / "log").glob("*.log")):
            out += f"\n--- {f.name}\n" + f.read_text(errors="replace")[-3000:]
        return out

    def pids(self):
        return {f.name: int(f.read_text().strip() or 0) for f in
                (self.dir / "slurmd.pid", self.dir / "slurmctld.pid", self.dir / "munge" / "munged.pid") if f.exists()}

    def stop(self):
        """Cancels every job, waits for them to end, then stops the daemons by PID file."""
        if self.conf.exists():
            self.run(["scancel", "--full", "--signal=KILL", "--user=root"])
            self.run(["scancel", "--user=root"])
            end = time.time() + 60
            while time.time() < end:
                r = self.run(["squeue", "-h", "-o", "%i"])
                if r.returncode != 0 or not r.stdout.strip():
                    break
                time.sleep(0.5)
        for name in ("slurmd.pid", "slurmctld.pid", "munged.pid"):
            f = self.dir / name if name != "munged.pid" else self.dir / "munge" / name
            if not f.exists():
                continue
            try:
                pid = int(f.read_text().strip())
                os.kill(pid, 15)
            except (ValueError, ProcessLookupError):
                continue
            end = time.time() + 30
            while time.time() < end:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.1)
            else:
                os.kill(pid, 9)

    def job(self, job_id):
        """scontrol show job as a dict (first record: the job, or an array's first task)."""
        r = self.run(["scontrol", "show", "job", "-o", str(job_id)])
        if r.returncode != 0 or not r.stdout.strip():
            return {}
        out = {}
        for tok in r.stdout.splitlines()[0].split():
            k, _, v = tok.partition("=")
            out[k] = v
        return out

    def states(self, job_id):
        """{job id: state} of a job or every task of an array."""
        r = self.run(["scontrol", "show", "job", "-o", str(job_id)])
        out = {}
        for line in r.stdout.splitlines():
            f = dict(t.partition("=")[::2] for t in line.split())
            out[f.get("JobId")] = f.get("JobState")
        return out

    def wait_state(self, job_id, states, timeout=300):
        end = time.time() + timeout
        while time.time() < end:
            st = self.states(job_id)
            if st and all(s in states for s in st.values()):
                return st
            time.sleep(0.3)
        raise AssertionError(f"job {job_id} not {states} after {timeout} s: {self.states(job_id)}\n{self.logs()}")
