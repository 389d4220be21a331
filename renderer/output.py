"""Atomic writes and the output-set layout (images/, sidecars, manifest)."""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from itemshot.renderer.items import Item

TEMP_PREFIX = ".tmp-"


def temp_prefix() -> str:
    """Return the prefix of this process's temp files: `.tmp-<pid>-`.

    The owner's pid in the name lets a cleanup tell a temp a killed run left
    from one a live process is still writing.
    """
    return f"{TEMP_PREFIX}{os.getpid()}-"


_umask_guard = threading.Lock()


def file_mode() -> int:
    """Return the mode a new file gets under this process's umask (`0o666 & ~umask`).

    Temp files are created 0600; set this before the rename so an output file
    has the user's normal permissions. The umask is read from /proc where the
    system has it; elsewhere it is read by setting and restoring it, under a
    lock, since that briefly changes it for the whole process.
    """
    try:
        with open("/proc/self/status", encoding="utf-8", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_guard:
        mask = os.umask(0o077)
        os.umask(mask)
    return 0o666 & ~mask


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temp file and a rename, so no reader sees half a file.

    The file gets the user's normal mode (`file_mode`), not the temp file's 0600.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=temp_prefix(), dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            os.fchmod(stream.fileno(), file_mode())
            stream.write(data)
        os.replace(temp, path)
    except OSError as error:
        Path(temp).unlink(missing_ok=True)
        # Name the file being written (a failed write() names none), keeping the errno.
        raise OSError(error.errno, error.strerror, str(path)) from error
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write UTF-8 text atomically.

    A lone surrogate that slipped through (item text is checked at load) is
    written as its `\\udXXX` escape, which inside JSON is the same string, rather
    than failing the write of a whole manifest.
    """
    atomic_write(path, text.encode("utf-8", "backslashreplace"))


def atomic_write_json(path: Path, value: Any) -> None:
    """Write `value` as pretty, key-sorted JSON, atomically."""
    atomic_write_text(path, json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write rows as JSON lines (key-sorted), atomically."""
    lines = [json.dumps(r, sort_keys=True, ensure_ascii=False) for r in rows]
    atomic_write_text(path, "\n".join(lines) + "\n" if lines else "")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Return the rows of a JSON-lines file."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


class UnusableOutput(ValueError):
    """An output folder that cannot be used: it is a file, or it cannot be created or written."""


def prepare_output_dir(out: Path) -> None:
    """Create the output folder and check that files can be written in it.

    Raises UnusableOutput naming the folder and the system's reason, so a bad
    `--out` is one clear message before any work, not a traceback after it.
    """
    if out.exists() and not out.is_dir():
        raise UnusableOutput(f"--out {str(out)!r} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(prefix=temp_prefix(), dir=out)
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise UnusableOutput(f"cannot write into --out {str(out)!r}: {reason}") from None


class _PartRun:
    """What a run that ended part-way kept: the folder, images written of jobs, its manifest.

    Shared by the two ways a run ends early (a system error, an interrupt);
    each says in `report` why it ended and what to do.
    """

    def __init__(self, out: Path, written: int, total: int, manifest: Path | None) -> None:
        self.out = out
        self.written = written
        self.total = total
        self.manifest = manifest
        super().__init__(self.report())

    def report(self) -> str:
        """Return the one message a person needs (each kind of early end adds why it ended)."""
        return self.kept()

    def kept(self) -> str:
        """Return what the run kept, in words: how many images and where they are listed."""
        listed = (
            f"the manifest {self.manifest} lists them"
            if self.manifest is not None
            else "the manifest could not be written"
        )
        return (
            f"{self.written} of {self.total} images are written in {self.out} and intact ({listed})"
        )


class RunStopped(_PartRun, RuntimeError):
    """The run stopped on a system error (disk full, permission denied, …) part-way.

    Everything written before the error is whole (writes are atomic) and a
    re-run resumes from it. `written` counts the images on disk, `total` the
    jobs; `manifest` is the manifest written with them, or None when even
    that could not be written.
    """

    def __init__(
        self, error: OSError, out: Path, written: int, total: int, manifest: Path | None
    ) -> None:
        self.error = error
        super().__init__(out, written, total, manifest)

    def report(self) -> str:
        """Return the one message a person needs: what failed, what was kept, what to do."""
        return (
            f"the run stopped: {describe_os_error(self.error)}. {self.kept()}; free the space "
            "or fix the permissions, then run the same command again to finish the rest"
        )


class RunInterrupted(_PartRun, KeyboardInterrupt):
    """The run was interrupted (SIGINT, Ctrl-C, or SIGTERM) part-way; what was finished is kept.

    A `KeyboardInterrupt`, so code that stops on an interrupt still stops. The
    finished jobs are whole on disk and listed in `manifest` (None when even
    that could not be written); a re-run skips them and renders the rest.
    """

    def report(self) -> str:
        """Return the one message a person needs: what was kept and how to finish."""
        return (
            f"the run was interrupted: {self.kept()}; run the same command again to finish the rest"
        )


def describe_os_error(error: OSError) -> str:
    """Return an OS error as one line: the file and the system's reason, no traceback."""
    reason = error.strerror or str(error) or type(error).__name__
    where = f"cannot write {error.filename}" if error.filename else "a file could not be written"
    return f"{where}: {reason}"


FIGURES_DIR = "figures"
_EXTENSIONS = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
}


def write_figure_files(out: Path, item: Item) -> dict[int, str]:
    """Write an item's figures content-addressed under OUT/figures/; return number → path.

    Figures the dataset lacks (placeholders) are left out. Identical figures are
    stored once, so an output set carries its sources without duplication.
    """
    paths: dict[int, str] = {}
    for number in item.referenced_figures():
        figure = item.figures.get(number)
        if figure is None:
            continue
        relative = f"{FIGURES_DIR}/{figure.sha256}{_EXTENSIONS.get(figure.mime, '.bin')}"
        if not (out / relative).is_file():
            atomic_write(out / relative, figure.data)
        paths[number] = relative
    return paths


def remove_stale_temps(root: Path) -> int:
    """Delete temp files a killed run left behind; return how many were removed.

    Only temps whose owner is gone are deleted: one named with a pid that is
    no longer running, or one without a pid (an older version's). Callers
    hold the folder's lock (`output_lock.hold_output`), so no other run is
    writing there; the pid check also spares a live writer that shares a
    subfolder (a response cache given to several runs).
    """
    removed = 0
    if not root.exists():
        return 0
    for temp in root.rglob(TEMP_PREFIX + "*"):
        owner = temp.name[len(TEMP_PREFIX) :].split("-", 1)[0]
        if owner.isdigit() and _running(int(owner)):
            continue
        temp.unlink(missing_ok=True)
        removed += 1
    return removed


def _running(pid: int) -> bool:
    """Return whether process `pid` exists on this machine (this process included)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    except OSError:
        return False  # a pid the system cannot even look up: no such process here
    return True
