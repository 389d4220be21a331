"""Real faults for the Ray tests: processes found in /proc, a backend that crashes its browser.

Importable by the test cluster's workers (the cluster runs with the checkout
on PYTHONPATH), so `crashing_backend` can travel to a render actor.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from itemshot.executors.local import BackendFactory
from itemshot.executors.loopback import process_tree
from itemshot.renderer.backends import FIRST_ATTEMPT, Attempt, Rendered
from itemshot.renderer.jobs import Job


def command_line(pid: int) -> list[str]:
    """Return a process's command line as words (empty once it has ended)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return raw.decode(errors="replace").replace("\0", " ").split()


def browser_processes(pid: int) -> list[int]:
    """Return the Chromium browser (main) processes below `pid` (not its renderers, GPU…)."""
    return [
        p
        for p in process_tree([pid])[1:]
        if (words := command_line(p))
        and Path(words[0]).name == "chromium"
        and not any(w.startswith("--type=") for w in words)
    ]


def render_actor_processes(pids: list[int]) -> list[int]:
    """Return which of these processes are itemshot render actors (Ray names them so)."""
    return [p for p in pids if (words := command_line(p)) and words[0].startswith("ray::Render")]


def wait_for_exit(pids: list[int], timeout: float) -> list[int]:
    """Wait (on pidfds: the kernel signals each exit) until these processes end; return the rest."""
    import select
    import time

    fds = {}
    for pid in pids:
        try:
            fds[os.pidfd_open(pid)] = pid
        except ProcessLookupError:
            continue  # already gone
    deadline = time.monotonic() + timeout
    try:
        while fds and (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select(list(fds), [], [], left)
            for fd in ready:
                os.close(fd)
                del fds[fd]
        return sorted(fds.values())
    finally:
        for fd in fds:
            os.close(fd)


def listening_addresses(pids: list[int]) -> set[str]:
    """Return the local addresses (`ip:port`) of every TCP socket these processes listen on."""
    inodes: set[str] = set()
    for pid in pids:
        try:
            links = [os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()]
        except OSError:
            continue
        inodes |= {link[8:-1] for link in links if link.startswith("socket:[")}
    found: set[str] = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] != "0A" or fields[9] not in inodes:  # 0A: LISTEN
                continue
            address, port = fields[1].split(":")
            found.add(f"{_ip(address, width)}:{int(port, 16)}")
    return found


def _ip(hex_address: str, width: int) -> str:
    import ipaddress

    words = [bytes.fromhex(hex_address[i : i + 8])[::-1] for i in range(0, width, 8)]
    packed = b"".join(words)
    ip = ipaddress.ip_address(packed)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


class CrashingBackend:
    """Chromium, except that while `poison` renders, every page renderer of this process dies.

    The crashes are real (SIGKILL to each Chromium renderer as it appears), so
    the page dies under the job on every try, fresh pages included, as a page
    that crashes its renderer would.
    """

    name = "chromium"

    def __init__(self, poison: str, pages: int) -> None:
        from itemshot.renderer.backends.chromium import ChromiumBackend

        self.poison = poison
        self.inner = ChromiumBackend(1, pages)
        self.slots = self.inner.slots

    async def __aenter__(self) -> CrashingBackend:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.inner.__aexit__(*exc)

    async def render(self, job: Job, attempt: Attempt = FIRST_ATTEMPT) -> Rendered:
        """Render the job; for the poisoned item, kill its page renderers while it renders."""
        if job.item.id != self.poison:
            return await self.inner.render(job, attempt)
        from tests.fault_injection import renderer_killer

        with renderer_killer(os.getpid()):
            return await self.inner.render(job, attempt)


def crashing_backend(poison: str, pages: int = 1) -> BackendFactory:
    """Return a factory of `CrashingBackend`s (picklable: it travels to the actors)."""

    def make() -> Any:
        return CrashingBackend(poison, pages)

    return make
