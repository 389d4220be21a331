"""One run per output folder: a second writer is refused at once, naming the first.

Two real `itemshot render` processes (real Chromium) meet in one folder; the
other writers (verify, export, review, sweep) and the Python API meet a folder
this test process holds through the same helper the commands use. Stale
temp files are cleaned only when their owner process is gone.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import itemshot
from itemshot.renderer.output import TEMP_PREFIX, read_jsonl, remove_stale_temps
from itemshot.renderer.output_lock import HOLDER_FILE, FolderBusy, hold_output, read_holder
from tests.conftest import SAMPLE_DATA
from tests.fault_injection import cli_command
from tests.review_sets import review_server, synthetic_set

LOOK = ("--scene", "plain", "--font-size", "22", "--no-progress", "--no-verify")


def _refusal(done: subprocess.CompletedProcess[str], holder_pid: int) -> str:
    """Assert a run was refused as a busy folder naming its holder; return the message."""
    message = " ".join(done.stderr.split())
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "is in use by another itemshot run" in message, message
    assert f"pid {holder_pid}" in message, message
    return message


def test_a_second_render_into_a_folder_in_use_exits_2_and_the_first_completes(
    tmp_path: Path,
) -> None:
    """Two real renders into one folder: the second exits 2 naming the first, which
    ends with one complete manifest (every row's image on disk) and no temp left."""
    out = tmp_path / "out"
    first = subprocess.Popen(
        cli_command("render", SAMPLE_DATA, "--out", out, *LOOK, "--workers", "1", "--events"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert first.stdout is not None
    # Its first image is written: the first run holds the folder and is mid-run.
    assert json.loads(first.stdout.readline())["event"] == "ok"
    # Keep it mid-run while the second one tries (a stopped process still holds its lock).
    os.kill(first.pid, signal.SIGSTOP)
    try:
        second = subprocess.run(
            cli_command("render", SAMPLE_DATA, "--out", out, *LOOK, "--workers", "1"),
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        os.kill(first.pid, signal.SIGCONT)
    message = _refusal(second, first.pid)
    assert "itemshot render" in message and "started" in message
    rest, errors = first.communicate(timeout=600)
    assert first.returncode == 0, errors
    assert [json.loads(line)["event"] for line in rest.splitlines()] == ["ok"] * 11
    rows = read_jsonl(out / "manifest.jsonl")
    assert len(rows) == 12 and all(row["status"] == "ok" for row in rows)
    assert all((out / row["image"]).is_file() and (out / row["layout"]).is_file() for row in rows)
    assert len(list((out / "images").glob("*.png"))) == 12
    assert not [p for p in out.rglob(f"{TEMP_PREFIX}*")]
    assert not (out / HOLDER_FILE).exists()  # released: the next run may write


def test_every_writing_command_refuses_a_folder_another_run_holds(tmp_path: Path) -> None:
    """verify, export, review and render into a held folder: exit 2, one line naming the
    holder, nothing written; the API raises FolderBusy; released, the folder is usable."""
    items = itemshot.load(SAMPLE_DATA)[:1]
    out = tmp_path / "out"
    itemshot.render(items, out, scene="plain", font_size=22, verify=False, progress=False)
    manifest = (out / "manifest.jsonl").read_bytes()
    dest = tmp_path / "export"
    with hold_output(out, "test"), hold_output(dest, "test"):
        assert read_holder(out)["pid"] == os.getpid()
        commands = {
            "render": ("render", SAMPLE_DATA, "--out", out, *LOOK),
            "verify": ("verify", out, "--no-progress", "--workers", "1"),
            "review": ("review", out, "--port", "0"),
            "export": ("export", out, "--to", "hf", "--out", dest),
        }
        for name, args in commands.items():
            done = subprocess.run(cli_command(*args), capture_output=True, text=True, timeout=300)
            assert "itemshot test" in _refusal(done, os.getpid()), name
        # Another thread of this process is refused like another process.
        with ThreadPoolExecutor(1) as thread:
            attempt = thread.submit(itemshot.render, items, out, scene="plain", progress=False)
            with pytest.raises(FolderBusy, match="is in use by another itemshot run"):
                attempt.result(timeout=300)
        assert (out / "manifest.jsonl").read_bytes() == manifest  # nothing was rewritten
        assert not [p for p in dest.iterdir() if not p.name.startswith(".itemshot.lock")]
    export = itemshot.export(out, "hf", dest)
    assert export.rows == 1


def test_reviewers_share_a_folder_that_runs_may_not_enter(tmp_path: Path) -> None:
    """Two review servers on one set run side by side; a render or verify into the set
    meanwhile exits 2 naming a reviewer; once they stop, the set is usable again."""
    out = tmp_path / "set"
    synthetic_set(out, 2)
    manifest = (out / "manifest.jsonl").read_bytes()
    with review_server(out, "--reviewer", "alice") as one, review_server(out, "--reviewer", "bob"):
        for args in (
            ("verify", out, "--no-progress"),
            ("render", SAMPLE_DATA, "--out", out, *LOOK),
        ):
            done = subprocess.run(cli_command(*args), capture_output=True, text=True, timeout=300)
            message = " ".join(done.stderr.split())
            assert done.returncode == 2, done.stderr
            assert "is in use by another itemshot run" in message, message
            assert "itemshot review" in message or "details are not written" in message, message
        assert one.process.poll() is None
        assert (out / "manifest.jsonl").read_bytes() == manifest
    with hold_output(out, "test"):  # both servers are gone: an exclusive hold is free
        assert read_holder(out)["command"] == "itemshot test"


def test_stale_temps_are_removed_only_when_their_owner_is_gone(tmp_path: Path) -> None:
    """A temp of a live process stays; one of an ended process (or one without a pid) goes."""
    live = subprocess.Popen([sys.executable, "-c", "input()"], stdin=subprocess.PIPE)
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    try:
        folder = tmp_path / "images"
        folder.mkdir()
        alive = folder / f"{TEMP_PREFIX}{live.pid}-abc"
        dead = folder / f"{TEMP_PREFIX}{int(ended.stdout)}-abc"
        mine = folder / f"{TEMP_PREFIX}{os.getpid()}-abc"
        old = folder / f"{TEMP_PREFIX}abc"  # an older version's name, without a pid
        for temp in (alive, dead, mine, old):
            temp.write_bytes(b"partial")
        assert remove_stale_temps(tmp_path) == 2
        assert alive.exists() and mine.exists()
        assert not dead.exists() and not old.exists()
    finally:
        live.communicate(b"\n", timeout=60)
