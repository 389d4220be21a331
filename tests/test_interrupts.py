"""Ctrl-C and SIGTERM end a run cleanly: finished jobs in the manifest, resumable, no traceback.

A real `itemshot render` (real Chromium) is interrupted once its first image
is written: SIGINT sent to its whole process group, as a terminal's Ctrl-C
is (the browser driver and OCR workers get it too), or SIGTERM sent to the
command alone, as a scheduler does. A re-run renders only the rest.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from itemshot.renderer.output import read_jsonl
from tests.conftest import SAMPLE_DATA
from tests.fault_injection import cli_command

LOOK = ("--scene", "plain", "--font-size", "22", "--no-progress", "--events", "--no-verify")


def _events(stdout: str) -> list[str]:
    return [json.loads(line)["event"] for line in stdout.splitlines()]


@pytest.mark.parametrize(
    ("signum", "to_group", "status"),
    [(signal.SIGINT, True, 130), (signal.SIGTERM, False, 143)],
    ids=["ctrl-c", "sigterm"],
)
def test_an_interrupted_render_keeps_its_finished_images_and_resumes(
    tmp_path: Path, signum: int, to_group: bool, status: int
) -> None:
    """Interrupted after its first image: status 128 + signal, one message and no
    traceback, a manifest row for each finished image, and a re-run that skips them."""
    out = tmp_path / "out"
    command = cli_command("render", SAMPLE_DATA, "--out", out, *LOOK, "--workers", "2")
    run = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal job has
    )
    assert run.stdout is not None
    assert json.loads(run.stdout.readline())["event"] == "ok"  # the first image is written
    if to_group:
        os.killpg(run.pid, signum)
    else:
        os.kill(run.pid, signum)
    _, errors = run.communicate(timeout=300)
    assert run.returncode == status, errors
    assert "Traceback" not in errors and "exception" not in errors.lower(), errors
    message = " ".join(errors.split())
    assert "the run was interrupted:" in message, message
    assert "run the same command again to finish the rest" in message
    rows = read_jsonl(out / "manifest.jsonl")
    finished = [row for row in rows if row["status"] == "ok"]
    assert 1 <= len(finished) < 12
    assert f"{len(finished)} of 12 images are written" in message
    # Each file is replaced by a rename when written, so an unchanged inode means not re-rendered.
    inodes = {}
    for row in finished:
        assert (out / row["image"]).is_file() and (out / row["layout"]).is_file()
        inodes[row["image"]] = (out / row["image"]).stat().st_ino

    again = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    events = _events(again.stdout)
    # A job caught between its last write and its row may be complete on disk too.
    assert events.count("skipped") >= len(finished)
    assert events.count("skipped") + events.count("ok") == 12
    rows = read_jsonl(out / "manifest.jsonl")
    assert len(rows) == 12 and all(row["status"] == "ok" for row in rows)
    for image, inode in inodes.items():
        assert (out / image).stat().st_ino == inode, f"{image} was rendered again"
