"""Tools of the fault-injection tests: process trees, killers, a tiny disk, hostile servers.

Everything here drives real components: processes are found in /proc and
killed by PID, the full disk is a real tmpfs (mounted in a private user and
mount namespace, so no root is needed), and the servers listen on loopback
and speak the real wire protocols while misbehaving.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

HOSTILE = Path(__file__).resolve().parent / "hostile"


@dataclass(frozen=True)
class Proc:
    """One process: its id, its parent's id and its command line as text."""

    pid: int
    ppid: int
    command: str

    @property
    def is_browser(self) -> bool:
        """Return whether this is a Chromium browser (main) process."""
        program = os.path.basename(self.command.split(" ", 1)[0])
        return program == "chromium" and "--type=" not in self.command

    @property
    def is_renderer(self) -> bool:
        """Return whether this is a Chromium page renderer (not the browser's own UI one)."""
        return "--type=renderer" in self.command and "--top-chrome-webui" not in self.command


def processes() -> list[Proc]:
    """Return every live (not zombie) process of the machine."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text(errors="replace")
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] == "Z":
            continue
        text = command.replace(b"\0", b" ").decode(errors="replace").strip()
        found.append(Proc(int(entry), int(fields[1]), text))
    return found


def descendants(root: int) -> list[Proc]:
    """Return every live process below `root` (children, grandchildren, …)."""
    everyone = processes()
    below: list[Proc] = []
    parents = {root}
    while True:
        new = [p for p in everyone if p.ppid in parents and p not in below]
        if not new:
            return below
        below += new
        parents = {p.pid for p in new}


def alive(pid: int) -> bool:
    """Return whether a process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text(errors="replace").rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def wait_until(condition: Callable[[], bool], timeout: float, interval: float = 0.05) -> bool:
    """Wait until `condition()` holds (checked every `interval` s); False after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return condition()


def kill(pid: int) -> None:
    """Send SIGKILL to a process (one that is already gone is fine)."""
    with suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


@contextmanager
def renderer_killer(root: int) -> Iterator[threading.Event]:
    """Kill every Chromium page renderer below `root` as soon as it appears, until the block ends.

    Yields an event set once a renderer has been killed.
    """
    stop = threading.Event()
    killed = threading.Event()

    def run() -> None:
        while not stop.is_set():
            for proc in descendants(root):
                if proc.is_renderer:
                    kill(proc.pid)
                    killed.set()
            stop.wait(0.01)

    thread = threading.Thread(target=run, name="renderer-killer", daemon=True)
    thread.start()
    try:
        yield killed
    finally:
        stop.set()
        thread.join()


def cli_command(*args: str | Path) -> list[str]:
    """Return the command line that runs `itemshot ARGS` with this interpreter."""
    return [sys.executable, "-m", "itemshot.cli", *(str(a) for a in args)]


def tmpfs_available() -> str | None:
    """Return None when a private tmpfs can be mounted here, else the reason it cannot."""
    if shutil.which("unshare") is None:
        return "the unshare command (util-linux) is not installed"
    probe = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
         "mount -t tmpfs -o size=1m tmpfs /mnt"],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    if probe.returncode != 0:
        return f"cannot mount a tmpfs in a user namespace: {probe.stderr.strip()[:200]}"
    return None


def run_on_small_disk(
    command: list[str], disk: Path, size: str, copy_to: Path, timeout: float
) -> subprocess.CompletedProcess[str]:
    """Run `command` with a tmpfs of `size` mounted at `disk`, then copy `disk` to `copy_to`.

    The tmpfs lives in a private mount namespace and vanishes with the
    command, so its contents are copied out first; the command's exit status
    is returned.
    """
    reason = tmpfs_available()
    if reason is not None:
        pytest.skip(f"disk-full test needs a small tmpfs: {reason}")
    disk.mkdir(parents=True, exist_ok=True)
    script = (
        f'mount -t tmpfs -o size={size} tmpfs "{disk}" || exit 90\n'
        '"$@"; status=$?\n'
        f'cp -a "{disk}/." "{copy_to}/"\n'
        "exit $status\n"
    )
    copy_to.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script, "sh", *command],
        capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


class ChatServer:
    """A loopback OpenAI chat-completions server; `behave(text)` picks each answer's behaviour.

    Behaviours: `ok` answers "Answer: B"; `drip` sends a valid answer one byte
    every 0.2 s (a client without a real deadline waits minutes); `echo`
    answers with the caller's Authorization header inside the reply text.
    """

    def __init__(self, behave: Callable[[str], str]) -> None:
        self.behave = behave
        self.requests = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                with server.lock:
                    server.requests += 1
                text = body["messages"][0]["content"][0]["text"]
                action = server.behave(text)
                content = "Answer: B"
                if action == "echo":
                    content = f"I was called with {self.headers.get('Authorization')}"
                reply = json.dumps(
                    {"choices": [{"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": content}}]}
                ).encode()  # fmt: skip
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(reply)))
                    self.end_headers()
                    if action != "drip":
                        self.wfile.write(reply)
                        return
                    for offset in range(len(reply)):
                        self.wfile.write(reply[offset : offset + 1])
                        self.wfile.flush()
                        time.sleep(0.2)  # the hostile server's pace, not synchronisation
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        """Return the base URL to pass as `--endpoint`."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def files_containing(root: Path, secret: str) -> list[Path]:
    """Return every file under `root` whose bytes contain `secret`."""
    needle = secret.encode()
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]
