"""One run per output folder: an advisory lock on the folder, its holder written beside it.

Two runs writing one folder would delete each other's temp files and
overwrite each other's manifest, so every command that writes into an output
folder (render, sweep, verify, export, the generative run, review, audit)
holds `.itemshot.lock` in it for as long as it writes. A second run is
refused at once with `FolderBusy`, naming the holder from
`.itemshot.lock.json` (pid, host, start time, command), rather than left
waiting behind a run that may take hours.

The lock is `filelock`'s: an `flock` the kernel drops when its process ends,
so a killed run never leaves the folder locked (its holder file may remain,
and is simply overwritten by the next holder). Inside one process the hold
is re-entrant for the thread that took it — `render` holds the folder and
the verification it runs takes the same hold — and refused to any other
thread, which would race the same way another process does.

Review servers are the one kind of writer that may share a folder: several
reviewers work on one set at once (their log has its own lock). They take a
shared `flock` on the same file (`shared=True`), which any number of them
can hold together and which keeps every exclusive run out, and vice versa.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from itemshot.renderer.output import UnusableOutput, atomic_write_json, prepare_output_dir

LOCK_FILE = ".itemshot.lock"
HOLDER_FILE = ".itemshot.lock.json"


class FolderBusy(UnusableOutput):
    """Another run holds the output folder; `holder` is what it wrote about itself (may be empty)."""

    def __init__(self, out: Path, holder: dict[str, Any]) -> None:
        self.out = out
        self.holder = holder
        super().__init__(
            f"{str(out)!r} is in use by another itemshot run ({describe_holder(holder)}); "
            "wait for it to finish or choose another folder"
        )


@dataclass
class _Hold:
    """This process's hold on one folder: the lock, the thread that took it, how deep."""

    lock: FileLock
    thread: int
    depth: int


_holds: dict[str, _Hold] = {}
_holds_guard = threading.Lock()


@contextmanager
def hold_output(
    out: Path, command: str, *, create: bool = True, shared: bool = False
) -> Iterator[Path]:
    """Hold the one-run lock of output folder `out` for the block; yield the folder.

    The folder is created (`create`) and checked writable first, so an
    unusable folder is `UnusableOutput` as before; a folder another run holds
    is `FolderBusy`, raised before anything is written. Without `create` a
    missing folder is `FileNotFoundError` (a command that only updates a set).
    `command` (e.g. "render") is written beside the lock for the message a
    refused run prints. `shared` holds it alongside other shared holders
    (review servers) but never alongside an exclusive one.
    """
    out = Path(out)
    if not create and not out.is_dir():
        raise FileNotFoundError(2, "no such output folder", str(out))
    prepare_output_dir(out)
    if shared:
        with _shared_hold(out, command):
            yield out
        return
    key = os.path.realpath(out)
    me = threading.get_ident()
    with _holds_guard:
        held = _holds.get(key)
        if held is not None and held.thread == me:
            held.depth += 1
            nested = True
        elif held is not None:
            raise FolderBusy(out, read_holder(out))
        else:
            nested = False
            lock = FileLock(os.path.join(key, LOCK_FILE), thread_local=False)
            try:
                lock.acquire(timeout=0)  # refuse at once: a run may hold the folder for hours
            except Timeout:
                raise FolderBusy(out, read_holder(out)) from None
            _holds[key] = held = _Hold(lock, me, 1)
    try:
        if not nested:
            _write_holder(out, command)
        yield out
    finally:
        with _holds_guard:
            held.depth -= 1
            if held.depth == 0:
                del _holds[key]
                # Holder first, lock last: whoever takes the lock next writes its own.
                with suppress(OSError):
                    (out / HOLDER_FILE).unlink()
                held.lock.release()


@contextmanager
def _shared_hold(out: Path, command: str) -> Iterator[None]:
    """Hold a shared flock on the folder's lock file: with other shared holders, no exclusive one.

    `filelock` has no shared mode; an `flock(LOCK_SH)` on the same file is
    the kernel's own counterpart of its exclusive lock, so each refuses the other.
    """
    handle = os.open(out / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FolderBusy(out, read_holder(out)) from None
        _write_holder(out, command)
        try:
            yield
        finally:
            # Another shared holder may have written its own record since: leave that one.
            if read_holder(out).get("pid") == os.getpid():
                with suppress(OSError):
                    (out / HOLDER_FILE).unlink()
    finally:
        os.close(handle)  # closing the descriptor releases the flock


def _write_holder(out: Path, command: str) -> None:
    """Write who holds the folder (pid, host, start time, command) beside the lock."""
    atomic_write_json(
        out / HOLDER_FILE,
        {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
            "command": f"itemshot {command}",
        },
    )


def read_holder(out: Path) -> dict[str, Any]:
    """Return what the folder's holder wrote about itself ({} if nothing readable yet)."""
    try:
        record = json.loads((Path(out) / HOLDER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def describe_holder(holder: dict[str, Any]) -> str:
    """Return a holder record as a few words: command, pid, host and start time."""
    if not holder.get("pid"):
        # The lock is taken a moment before its holder file is written (or a
        # holder sharing the folder removed it on leaving).
        return "its details are not written"
    process = f"pid {holder['pid']}" + (f" on {holder['host']}" if holder.get("host") else "")
    parts = [str(holder.get("command") or "itemshot"), process]
    if holder.get("started"):
        parts.append(f"started {holder['started']}")
    return ", ".join(parts)
