"""Crashes and a hostile machine: killed browsers, a full disk, a CLI killed with SIGKILL.

Real Chromium processes are found in /proc and killed by PID; the full disk
is a 3 MB tmpfs; the killed CLI is a real `itemshot` process.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

import itemshot
from itemshot.renderer.backends.chromium import ChromiumPool, RenderFailure
from itemshot.renderer.output import read_jsonl
from tests.conftest import SAMPLE_DATA
from tests.fault_injection import (
    alive,
    cli_command,
    descendants,
    kill,
    renderer_killer,
    run_on_small_disk,
    wait_until,
)
from tests.test_chromium_backend import document

LOOK = {"scene": "plain", "font_size": 22, "resolution": 640}


def test_a_page_whose_renderer_keeps_dying_fails_fast_and_the_pool_recovers() -> None:
    """A job is tried once more on a fresh page, then fails as `renderer_crashed` —
    at once, not after the 60 s render timeout — and the next job renders."""

    async def scenario() -> tuple[RenderFailure, bytes, bytes]:
        async with ChromiumPool(1, 1) as pool:
            before = (await pool.render(document(""))).png
            with renderer_killer(os.getpid()) as killed:
                # The page's live renderer is gone before the job is sent: on a busy machine
                # the job could otherwise finish before the killer first looks.
                assert await asyncio.to_thread(killed.wait, 60), "no renderer was killed"
                with pytest.raises(RenderFailure) as failure:
                    await pool.render(document(""))
            after = (await pool.render(document(""))).png
            return failure.value, before, after

    failure, before, after = asyncio.run(scenario())
    assert failure.reason == "renderer_crashed", failure
    assert "died 2 times" in str(failure)
    assert after == before  # a relaunched page draws the same bytes


def test_a_command_katex_refuses_to_trust_fails_the_job_naming_it() -> None:
    """The page's own guard, behind the deny list: KaTeX's trust hook reports the command."""
    math = "<div data-region='option:B'><span class='math' data-latex='\\href{x}{y}'></span></div>"

    async def scenario() -> RenderFailure:
        async with ChromiumPool(1, 1) as pool:
            with pytest.raises(RenderFailure) as failure:
                await pool.render(document(math))
            return failure.value

    failure = asyncio.run(scenario())
    assert (failure.reason, failure.field) == ("math_blocked", "option:B")
    assert "\\href is not allowed" in str(failure)


def test_killed_browsers_and_renderers_mid_run_cost_nothing(tmp_path: Path) -> None:
    """Case 7: one browser killed and one page renderer killed during a run; every job
    completes (retried once on a relaunched page) with the bytes of an undisturbed run."""
    items = itemshot.load(SAMPLE_DATA)[:8]
    calm = itemshot.render(items, tmp_path / "calm", **LOOK, workers=1, verify=False,
                           progress=False)  # fmt: skip
    kills: list[str] = []

    def on_event(event: dict[str, Any]) -> None:
        tree = descendants(os.getpid())
        if event["event"] == "ok" and not kills:
            browser = next(p for p in tree if p.is_browser)
            kill(browser.pid)
            kills.append(f"browser {browser.pid}")
        elif event["event"] == "ok" and len(kills) == 1:
            renderer = next(p for p in tree if p.is_renderer)
            kill(renderer.pid)
            kills.append(f"renderer {renderer.pid}")

    run = itemshot.render(items, tmp_path / "hurt", **LOOK, workers=2, verify=False,
                          progress=False, on_event=on_event)  # fmt: skip
    assert len(kills) == 2
    assert run.status == 0, run.failed
    assert [r["status"] for r in run.rows] == ["ok"] * 8
    assert json.loads((tmp_path / "hurt" / "summary.json").read_text())["rendered"] == 8
    for hurt, quiet in zip(run.images, calm.images, strict=True):
        assert hurt.read_bytes() == quiet.read_bytes(), hurt.name


def test_a_full_disk_stops_the_run_with_one_message_and_keeps_what_was_written(
    tmp_path: Path,
) -> None:
    """Case 10: a 3 MB disk fills up part-way; one message says what happened and what
    was kept, the exit status is 5, every file left is whole, and a re-run resumes."""
    disk, copy = tmp_path / "disk", tmp_path / "copy"
    flags = ("--scene", "whiteboard", "--resolution", "2048", "--no-progress", "--no-verify",
             "--workers", "1")  # fmt: skip
    command = cli_command("render", SAMPLE_DATA, "--out", disk / "out", *flags)
    done = run_on_small_disk(command, disk, "3m", copy, timeout=600)
    assert done.returncode == 5, done.stderr
    message = " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr
    assert "the run stopped: cannot write" in message and "No space left on device" in message
    written = int(message.split("the run stopped")[1].split(" of 12 images")[0].rsplit(" ", 1)[1])
    assert 0 < written < 12
    out = copy / "out"
    assert not [p for p in out.rglob("*") if p.name.startswith(".tmp-")]
    images = sorted((out / "images").glob("*.png"))
    assert len(images) == written
    for image in images:  # whole files, never half-written
        with Image.open(image) as opened:
            opened.load()
    if "the manifest could not be written" not in message:
        rows = read_jsonl(out / "manifest.jsonl")
        assert sum(r["status"] == "ok" for r in rows) == written
    again = cli_command("render", SAMPLE_DATA, "--out", out, *flags, "--events")
    rerun = subprocess.run(again, capture_output=True, text=True, timeout=600)
    events = [json.loads(line)["event"] for line in rerun.stdout.splitlines()]
    assert rerun.returncode == 0, rerun.stderr
    assert (events.count("skipped"), events.count("ok")) == (written, 12 - written)


def _start(out: Path, *extra: str) -> subprocess.Popen[str]:
    command = cli_command(
        "render", SAMPLE_DATA, "--out", out, "--scene", "plain", "--font-size", "22",
        "--events", "--no-progress", "--workers", "2", *extra,
    )  # fmt: skip
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def _kill_and_wait(cli: subprocess.Popen[str]) -> tuple[list[str], list[int]]:
    """SIGKILL the CLI; return its children's commands and those alive 5 s later."""
    children = descendants(cli.pid)
    kill(cli.pid)
    cli.wait()
    wait_until(lambda: not any(alive(p.pid) for p in children), timeout=5.0)
    return [p.command[:60] for p in children], [p.pid for p in children if alive(p.pid)]


def test_kill_9_while_rendering_leaves_no_browser_behind(tmp_path: Path) -> None:
    """Case 11, render stage: Playwright's driver and every Chromium process end with it."""
    cli = _start(tmp_path / "out", "--no-verify")
    assert cli.stdout is not None and json.loads(cli.stdout.readline())["event"] == "ok"
    children, survivors = _kill_and_wait(cli)
    assert any("chromium" in c for c in children), children
    assert survivors == []


def test_kill_9_while_verifying_leaves_no_worker_behind(tmp_path: Path) -> None:
    """Case 11, verify stage: OCR workers (and their tesseract) die with the CLI."""
    cli = _start(tmp_path / "out")
    # Verification starts once rendering is over: the CLI then forks its two OCR
    # workers, one after the other, so wait for both before the kill.
    assert wait_until(
        lambda: (
            sum(p.ppid == cli.pid and "itemshot.cli" in p.command for p in descendants(cli.pid))
            >= 2
        ),
        timeout=300,
    ), "verification never started"
    children, survivors = _kill_and_wait(cli)
    assert sum("itemshot.cli" in c for c in children) >= 2, children
    assert survivors == []
