"""A throw-away Ray cluster on this machine's loopback, for trials, tests and benchmarks.

`ray start --head --block` in a process group of its own, every socket on
127.0.0.1 (`--node-ip-address=127.0.0.1` with Ray's loopback switch; no
dashboard, no usage stats), a private temp folder, and a small object store.
It stops by signalling that process group only, never other Ray processes
on the machine (`ray stop` would end every cluster here).

    with LoopbackCluster(cpus=2) as cluster:
        itemshot.sweep("design.yaml", executor="ray", address=cluster.address)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO

from itemshot.executors.ray import LOOPBACK_SWITCH

STARTED_LINE = "Ray runtime started"
STOP_TIMEOUT_S = 10.0


class ClusterFailed(RuntimeError):
    """`ray start` exited before the cluster was up; the message holds its output."""


def children(pid: int) -> list[int]:
    """Return the ids of a process's children (none once it has ended)."""
    kids: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return kids
    for task in tasks:
        with contextlib.suppress(OSError):
            kids += [int(k) for k in (task / "children").read_text().split()]
    return kids


def process_tree(roots: Iterable[int]) -> list[int]:
    """Return the roots and every process below them."""
    found: list[int] = []
    pending = list(roots)
    while pending:
        pid = pending.pop()
        if pid not in found:
            found.append(pid)
            pending += children(pid)
    return found


def session_processes(session: int) -> list[int]:
    """Return the ids of a session's live processes and of every process below them.

    A daemon that `ray start` leaves behind keeps its session when its parent
    exits, so a head started in a session of its own is found whole.
    """
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[3]) == session:  # state ppid pgrp session
            members.append(int(entry.name))
    return sorted(process_tree(members))


def free_port() -> int:
    """Return a TCP port free on 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LoopbackCluster:
    """A single-node Ray cluster on 127.0.0.1 with `cpus` CPUs, started and stopped by its owner."""

    def __init__(
        self,
        cpus: int = 2,
        *,
        object_store_mb: int = 256,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.cpus = cpus
        self.object_store_mb = object_store_mb
        self.env = dict(env or {})
        self.port = 0
        self.temp_dir: Path | None = None
        self.process: subprocess.Popen[str] | None = None
        self._output: list[str] = []
        self._drain: threading.Thread | None = None

    @property
    def address(self) -> str:
        """Return the head's address, `127.0.0.1:PORT`."""
        return f"127.0.0.1:{self.port}"

    @property
    def pgid(self) -> int:
        """Return the id of `ray start`: its process group and session."""
        assert self.process is not None
        return self.process.pid

    def __enter__(self) -> LoopbackCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start the head and return once `ray start` reports it up (it reads its output)."""
        # Short: Ray puts unix sockets under it (108-byte limit).
        self.temp_dir = Path(tempfile.mkdtemp(prefix="itemshot-ray-", dir="/tmp"))
        self.port = free_port()
        ray = Path(sys.executable).with_name("ray")
        command = [
            str(ray) if ray.exists() else "ray",
            "start",
            "--head",
            "--block",
            "--node-ip-address=127.0.0.1",
            f"--port={self.port}",
            "--include-dashboard=false",
            "--disable-usage-stats",
            f"--num-cpus={self.cpus}",
            f"--object-store-memory={self.object_store_mb * 1024 * 1024}",
            f"--temp-dir={self.temp_dir}",
        ]
        env = {**os.environ, LOOPBACK_SWITCH: "0", "RAY_USAGE_STATS_ENABLED": "0", **self.env}
        env.pop("RAY_ADDRESS", None)
        self.process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
            start_new_session=True,  # its own process group: stopped as one, by id
        )
        assert self.process.stdout is not None
        for line in self.process.stdout:  # blocks until `ray start` says something
            self._output.append(line)
            if STARTED_LINE in line:
                break
        else:
            self.process.wait()
            self._cleanup()
            raise ClusterFailed("ray start failed:\n" + "".join(self._output[-30:]))
        # Keep reading, so a full pipe never blocks the head.
        self._drain = threading.Thread(
            target=self._read_rest, args=(self.process.stdout,), daemon=True
        )
        self._drain.start()

    def _read_rest(self, stream: IO[str]) -> None:
        for line in stream:
            self._output.append(line)

    def processes(self) -> list[int]:
        """Return the ids of the cluster's live processes: its session and what they started.

        `ray start` leads a session of its own; Ray puts each worker in a process
        group of its own inside that session, and a worker's browsers may start
        sessions of their own, so those are found as descendants.
        """
        return session_processes(self.pgid)

    def stop(self) -> None:
        """Stop every process of the cluster, each by its id, and remove its temp folder.

        SIGKILL: the cluster is thrown away with its state (`ray start --block`
        ignores SIGTERM, and its children would wait for it).
        """
        if self.process is None:
            return
        for _ in range(2):  # again for any worker the raylet started meanwhile
            for pid in self.processes():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            self.process.wait()
        if self._drain is not None:
            self._drain.join(timeout=STOP_TIMEOUT_S)
        self._cleanup()
        self.process = None

    def _cleanup(self) -> None:
        if self.temp_dir is not None:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = None
