"""Same inputs and seed give byte-identical images, whatever the worker count or interruptions."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from itemshot.renderer.output import read_jsonl
from tests.conftest import ROOT, SAMPLE_DATA, run_cli

ARGS = ("--scene", "random", "--font-style", "random", "--color", "random", "--seed", "7")


def files(out: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted((out / "images").iterdir())
        if p.suffix in (".png", ".json")
    }


def render(out: Path, workers: int) -> int:
    return run_cli(
        "render",
        SAMPLE_DATA,
        "--out",
        out,
        *ARGS,
        "--workers",
        workers,
        "--no-progress",
        "--no-verify",
    )


def test_two_runs_and_worker_counts_give_identical_bytes(tmp_path: Path) -> None:
    assert render(tmp_path / "a", 1) == 0
    assert render(tmp_path / "b", 2) == 0
    first, second = files(tmp_path / "a"), files(tmp_path / "b")
    assert first.keys() == second.keys() and len(first) == 24
    differing = [name for name in first if first[name] != second[name]]
    assert differing == []
    assert (tmp_path / "a" / "manifest.jsonl").read_bytes() == (
        tmp_path / "b" / "manifest.jsonl"
    ).read_bytes()


def test_killed_run_resumes_to_the_same_files(tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    assert render(reference, 2) == 0

    interrupted = tmp_path / "interrupted"
    command = [sys.executable, "-m", "itemshot.cli", "render", str(SAMPLE_DATA), "--out"]
    command += [
        str(interrupted),
        *ARGS,
        "--workers",
        "2",
        "--no-progress",
        "--no-verify",
        "--events",
    ]
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        start_new_session=True,
    )  # fmt: skip
    assert process.stdout is not None
    finished = 0
    for line in process.stdout:
        finished += '"ok"' in line
        if finished == 4:
            # Kill the whole process group (Python and its browsers) mid-run.
            os.killpg(process.pid, signal.SIGKILL)
            break
    process.wait()
    assert finished == 4
    assert not (interrupted / "manifest.jsonl").exists()
    partial = len(list((interrupted / "images").glob("*.png")))
    assert 4 <= partial < 12

    assert render(interrupted, 2) == 0
    rows = read_jsonl(interrupted / "manifest.jsonl")
    assert len(rows) == 12
    assert files(interrupted) == files(reference)
    assert (interrupted / "manifest.jsonl").read_bytes() == (
        reference / "manifest.jsonl"
    ).read_bytes()
    assert not [p for p in interrupted.rglob(".tmp-*")]
