"""A real single-node SLURM cluster on this machine, for tests of the SLURM profile (tests/test_slurm.py).

Debian's ``slurm-wlm`` and ``munge`` packages provide the daemons (``.ci/run`` installs them when it runs as root).
:class:`LocalSlurm` writes everything it needs into one folder: a munge key, a ``slurm.conf`` describing this machine
(hostname, cores and memory as ``slurmd -C`` reports them) with one partition, the daemons' state, spool and logs. It
starts ``munged``, ``slurmctld`` and ``slurmd`` in the foreground as child processes, on free ports, waits until
``sinfo`` shows the node idle, and stops exactly those processes again. Client commands (``sbatch``, ``squeue``,
``sacct``, the executor plugin's calls) find the cluster through ``SLURM_CONF`` in :attr:`LocalSlurm.env`. Inside a
job, the executor plugin's job step removes every ``SLURM_*`` variable (``SLURM_CONF`` too) before it calls ``srun``,
which then reads the default ``/etc/slurm/slurm.conf``: so the cluster links its ``slurm.conf`` there while it runs,
and refuses to start where that file exists already (a real installation, or another test cluster).

Accounting: no ``slurmdbd`` (it needs a MySQL server). ``AccountingStorageType=accounting_storage/none``, so ``sacct``
has no database to read and the executor plugin is told to poll with ``squeue`` instead (``MinJobAge`` keeps finished
jobs visible to it for 10 minutes); every finished job is also written, one line each, to the job-completion log
(``jobcomp/filetxt``), which :meth:`LocalSlurm.finished_jobs` reads.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

__all__ = ["PARTITION", "REQUIRED_BINARIES", "SlurmUnavailable", "LocalSlurm", "missing_requirements"]

#: the partition of the test cluster; the name the SLURM profile (workflow/profiles/slurm) uses, so it needs no override
PARTITION = "cpu"
#: a second partition on the same node, named as in workflow/profiles/slurm-gpu, with one GPU that exists by count
#: only: sbatch --test-only checks a GPU job's arguments against it; a job would get no device
GPU_PARTITION = "gpu"

#: daemons and client commands the test cluster and the executor plugin need
REQUIRED_BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "srun", "squeue", "sinfo", "scontrol", "scancel")


#: where srun inside a job looks for the configuration (the job step drops SLURM_CONF)
SYSTEM_CONF = Path("/etc/slurm/slurm.conf")


class SlurmUnavailable(RuntimeError):
    """The test cluster cannot be started here (the message says why)."""


def missing_requirements() -> str | None:
    """Why a local SLURM cluster cannot be started on this machine, or ``None`` if it can be tried."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "starting slurmctld/slurmd/munged needs root (CI runs as root)"
    missing = [name for name in REQUIRED_BINARIES if shutil.which(name) is None]
    if missing:
        return f"SLURM binaries missing: {', '.join(missing)} (apt-get install slurm-wlm munge)"
    if SYSTEM_CONF.exists():
        return f"{SYSTEM_CONF} exists (a SLURM installation or another test cluster); the test cluster needs it free"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _node_hardware() -> dict[str, str]:
    """This machine as ``slurmd -C`` describes it (NodeName, CPUs, sockets, cores, threads, RealMemory)."""
    out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, timeout=30, check=True).stdout
    first = out.splitlines()[0]
    return dict(item.split("=", 1) for item in first.split() if "=" in item)


class LocalSlurm:
    """One SLURM node (this machine) with controller, node daemon and munge, all under ``root``.

    :param root: a fresh folder for configuration, state and logs
    :param startup_timeout: seconds to wait for the node to become idle
    """

    def __init__(self, root: Path, startup_timeout: float = 90):
        self.root = Path(root)
        self.startup_timeout = startup_timeout
        self.procs: dict[str, subprocess.Popen] = {}
        self.conf = self.root / "slurm.conf"
        self.jobcomp = self.root / "log" / "jobcomp.txt"
        self.munge_socket = self.root / "munge" / "munge.socket"
        self.hardware: dict[str, str] = {}

    @property
    def env(self) -> dict[str, str]:
        """The environment in which client commands (sbatch, squeue, snakemake's plugin) talk to this cluster."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    @property
    def cpus(self) -> int:
        """Cores of the node (this machine's)."""
        return int(self.hardware["CPUs"])

    def _write_config(self) -> None:
        hw = self.hardware = _node_hardware()
        for folder in ("munge", "state", "spool", "log", "run"):
            (self.root / folder).mkdir(parents=True, exist_ok=True)
        (self.root / "munge").chmod(0o700)
        key = self.root / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        node = hw["NodeName"]
        lines = [
            "# generated by tests/slurm.py: a one-node test cluster on this machine",
            "ClusterName=kgevaltest",
            f"SlurmctldHost={node}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={self.root / 'state'}",
            f"SlurmdSpoolDir={self.root / 'spool'}",
            f"SlurmctldPidFile={self.root / 'run' / 'slurmctld.pid'}",
            f"SlurmdPidFile={self.root / 'run' / 'slurmd.pid'}",
            f"SlurmctldLogFile={self.root / 'log' / 'slurmctld.log'}",
            f"SlurmdLogFile={self.root / 'log' / 'slurmd.log'}",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            # no cgroups in containers: plain process tracking, no task affinity
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "MpiDefault=none",
            "SwitchType=switch/none",
            "LaunchParameters=use_interactive_step",
            "ReturnToService=2",
            "SchedulerType=sched/backfill",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core_Memory",
            # accounting without slurmdbd: finished jobs stay visible to squeue for MinJobAge seconds, and each one
            # gets a line in the job-completion log
            "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none",
            "JobCompType=jobcomp/filetxt",
            f"JobCompLoc={self.jobcomp}",
            "MinJobAge=600",
            "MailProg=/bin/true",
            "GresTypes=gpu",
            "InactiveLimit=0",
            "KillWait=5",
            "Waittime=0",
            (
                f"NodeName={node} NodeAddr=127.0.0.1 CPUs={hw['CPUs']} Boards={hw.get('Boards', 1)} "
                f"SocketsPerBoard={hw.get('SocketsPerBoard', 1)} CoresPerSocket={hw.get('CoresPerSocket', hw['CPUs'])} "
                f"ThreadsPerCore={hw.get('ThreadsPerCore', 1)} RealMemory={hw['RealMemory']} Gres=gpu:1 State=UNKNOWN"
            ),
            f"PartitionName={PARTITION} Nodes={node} Default=YES MaxTime=INFINITE State=UP",
            f"PartitionName={GPU_PARTITION} Nodes={node} Default=NO MaxTime=INFINITE State=UP",
        ]
        self.conf.write_text("\n".join(lines) + "\n")
        # one GPU by count only (no device file): SLURM schedules --gpus requests; jobs get no device
        (self.root / "gres.conf").write_text(f"AutoDetect=off\nNodeName={node} Name=gpu File=/dev/null Count=1\n")

    def _claim_system_conf(self) -> None:
        if SYSTEM_CONF.is_symlink() and not SYSTEM_CONF.exists():
            SYSTEM_CONF.unlink()  # left behind by an interrupted test cluster
        SYSTEM_CONF.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.symlink(self.conf, SYSTEM_CONF)
        except FileExistsError:
            raise SlurmUnavailable(f"{SYSTEM_CONF} exists; the test cluster does not replace it") from None
        self._linked = True

    def _release_system_conf(self) -> None:
        if getattr(self, "_linked", False) and SYSTEM_CONF.is_symlink() and os.readlink(SYSTEM_CONF) == str(self.conf):
            SYSTEM_CONF.unlink()
        self._linked = False

    def _spawn(self, name: str, *cmd: str) -> None:
        out = open(self.root / "log" / f"{name}.out", "w")
        self.procs[name] = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=self.env)
        out.close()

    def _log_tail(self, lines: int = 15) -> str:
        parts = []
        for path in sorted((self.root / "log").glob("*")):
            if path.is_file() and path != self.jobcomp:
                text = path.read_text(errors="replace").splitlines()[-lines:]
                parts.append(f"--- {path.name}\n" + "\n".join(text))
        return "\n".join(parts)

    def _check_alive(self) -> None:
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                raise SlurmUnavailable(f"{name} exited with {proc.returncode}:\n{self._log_tail()}")

    def start(self) -> "LocalSlurm":
        """Start munged, slurmctld and slurmd; return once the node is idle.

        :raises SlurmUnavailable: if a daemon exits or the node is not idle within ``startup_timeout``
        """
        self._write_config()
        self._claim_system_conf()
        munge = self.root / "munge"
        self._spawn(
            "munged", "munged", "--foreground", "--force", f"--socket={self.munge_socket}",
            f"--key-file={munge / 'munge.key'}", f"--pid-file={munge / 'munged.pid'}",
            f"--seed-file={munge / 'munged.seed'}", f"--log-file={self.root / 'log' / 'munged.log'}",
        )
        deadline = time.monotonic() + 20
        while not self.munge_socket.exists():
            self._check_alive()
            if time.monotonic() > deadline:
                raise SlurmUnavailable(f"munged did not create its socket:\n{self._log_tail()}")
            time.sleep(0.2)
        # -c: a fresh controller state; -D: stay in the foreground (a child of this process)
        self._spawn("slurmctld", "slurmctld", "-D", "-c", "-i", "-f", str(self.conf))
        self._spawn("slurmd", "slurmd", "-D", "-f", str(self.conf))
        deadline = time.monotonic() + self.startup_timeout
        state = ""
        while time.monotonic() < deadline:
            self._check_alive()
            proc = subprocess.run(["sinfo", "-h", "-N", "-o", "%t"], capture_output=True, text=True, env=self.env)
            state = proc.stdout.strip() or proc.stderr.strip()
            # one line per (node, partition)
            if proc.returncode == 0 and set(state.split()) == {"idle"}:
                return self
            time.sleep(1)
        raise SlurmUnavailable(f"node not idle after {self.startup_timeout:.0f} s (sinfo: {state!r}):\n{self._log_tail()}")

    def squeue(self) -> str:
        """Every job the controller still knows (finished ones for MinJobAge seconds), one line each."""
        fmt = "%i|%j|%P|%T|%M|%C|%m|%b|%k"
        return subprocess.run(
            ["squeue", "--states=all", "-h", "-o", fmt], capture_output=True, text=True, env=self.env
        ).stdout

    def finished_jobs(self) -> list[dict[str, str]]:
        """One dict per finished job from the job-completion log (JobId, Name, JobState, Partition, ...)."""
        if not self.jobcomp.exists():
            return []
        jobs = []
        for line in self.jobcomp.read_text().splitlines():
            # "JobId=2 UserId=root(0) ... Name=<uuid> JobState=COMPLETED Partition=cpu ... " (values hold no spaces
            # except the quoted comment, which we do not need)
            jobs.append(dict(re.findall(r"(\w+)=(\S*)", line)))
        return jobs

    def stop(self) -> None:
        """Cancel what is left and stop the three daemons (only the processes this object started)."""
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            for partition in (PARTITION, GPU_PARTITION):
                subprocess.run(["scancel", "--full", "--partition", partition], capture_output=True, env=self.env,
                               timeout=30)
            # let slurmd end the job steps (slurmstepd) before it stops itself
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                active = subprocess.run(["squeue", "-h", "--states=RUNNING,COMPLETING,PENDING", "-o", "%i"],
                                        capture_output=True, text=True, env=self.env, timeout=30)
                if active.returncode != 0 or not active.stdout.strip():
                    break
                time.sleep(1)
        for name in ("slurmd", "slurmctld", "munged"):
            proc = self.procs.get(name)
            if proc is None or proc.poll() is not None:
                continue
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        self._release_system_conf()
