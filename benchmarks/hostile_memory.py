"""Peak memory over the hostile set: render it, audit it, generate against a bomb server.

Stages, each measured on its own (summed PSS of this process and every
child — Chromium, Playwright's driver, OCR workers — sampled every 0.1 s,
and the kernel's own peak RSS of this process):

1. baseline: render and verify the three good items of tests/hostile/items.jsonl;
2. hostile: render and verify all of tests/hostile/items.jsonl;
3. generate: `render --backend nanobanana` against a loopback stand-in whose
   every answer is tests/hostile/bomb.png (20000×20000 px, 1.6 GB decoded);
4. cached bomb: the bomb planted in the response cache, re-run (must be refused);
5. audit: `itemshot audit` of a folder holding the bomb among real pages.

Prints each stage's peak and its ratio to the baseline, and whether the
largest stays under the 3 GB target. Run from the checkout:

    .venv/bin/python benchmarks/hostile_memory.py
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _measure import PeakRss

from itemshot.cli import main as itemshot
from itemshot.renderer.backends.nanobanana.standin import StandIn, image_reply

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "hostile"
BOMB = (HOSTILE / "bomb.png").read_bytes()
TARGET_BYTES = 3 * 1024**3
LOOK = ("--scene", "plain", "--font-size", "22", "--no-progress")
KEY = "benchmark-stand-in-key"


def measure(name: str, run: Callable[[], int]) -> dict[str, Any]:
    """Run one stage and return its exit status, seconds and peak memory."""
    started = time.perf_counter()
    with PeakRss() as sampled:
        status = run()
    return {
        "stage": name,
        "status": status,
        "seconds": round(time.perf_counter() - started, 1),
        "peak_mb": round(sampled.peak / 1024**2, 1),
    }


def generative(dataset: Path, out: Path, cache: Path, server: StandIn) -> int:
    return itemshot(
        ["render", str(dataset), "--out", str(out), *LOOK, "--backend", "nanobanana",
         "--api-base", server.base_url, "--cache", str(cache), "--attempts", "2",
         "--rpm", "0", "--max-retries", "0", "--no-verify"]
    )  # fmt: skip


def plant_bombs(out: Path, cache: Path) -> int:
    """Overwrite every cached answer of the run in `out` with the bomb; return how many."""
    planted = 0
    for sidecar in (out / "images").glob("*.json"):
        for attempt in json.loads(sidecar.read_text())["render"].get("attempts", []):
            key = attempt["request_key"]
            (cache / key[:2]).mkdir(parents=True, exist_ok=True)
            (cache / key[:2] / f"{key}.png").write_bytes(BOMB)
            record = {"kind": "image", "mime": "image/png", "image_file": f"{key}.png"}
            (cache / key[:2] / f"{key}.json").write_text(json.dumps(record))
            planted += 1
    return planted


def render(dataset: Path, out: Path) -> Callable[[], int]:
    """Return a stage that renders and verifies a dataset with the command line."""
    return lambda: itemshot(["render", str(dataset), "--out", str(out), *LOOK])


def audit_pages(work: Path, items: Path) -> Callable[[], int]:
    """Return a stage that audits the baseline's pages with the bomb as page 1."""
    pages = work / "pages"
    pages.mkdir()
    rows = (work / "base" / "manifest.jsonl").read_text().splitlines()  # in dataset order
    for number, row in enumerate(rows, 1):
        shutil.copy(work / "base" / json.loads(row)["image"], pages / f"page_{number}.png")
    (pages / "page_1.png").write_bytes(BOMB)
    return lambda: itemshot(
        ["audit", str(pages), "--items", str(items), "--out", str(work / "audit"), "--no-progress"]
    )


def main() -> None:
    """Run the stages and print their figures."""
    os.environ["GEMINI_API_KEY"] = KEY
    work = Path(tempfile.mkdtemp(prefix="itemshot-hostile-"))
    try:
        good = work / "good.jsonl"
        lines = (HOSTILE / "items.jsonl").read_text().splitlines()
        good.write_text("\n".join(line for line in lines if '"good-' in line) + "\n")
        shutil.copytree(HOSTILE / "figures", work / "figures")
        stages = [measure("baseline (3 good items)", render(good, work / "base"))]
        stages.append(measure("hostile set", render(HOSTILE / "items.jsonl", work / "hostile")))
        cache = work / "cache"
        with StandIn(lambda _captured: image_reply(BOMB)) as server:
            first_run = measure(
                "generate: every answer a bomb",
                lambda: generative(good, work / "gen", cache, server),
            )
            planted, asked = plant_bombs(work / "gen", cache), server.requests
            rerun = measure(
                f"re-run: {planted} bombs in the cache",
                lambda: generative(good, work / "gen-again", cache, server),
            )
            assert server.requests == asked, "the re-run should ask nothing"
        stages += [first_run, rerun]
        stages.append(measure("audit: a bomb among the pages", audit_pages(work, good)))
        row = json.loads((work / "gen-again" / "manifest.jsonl").read_text().splitlines()[0])
        # The generated job's own sidecar (the fallback's Chromium sidecar lies beside it).
        sidecar = next(
            record
            for path in (work / "gen-again" / "images").glob(f"{row['item_id']}-*.json")
            if (record := json.loads(path.read_text()))["job_key"] == row["job_key"]
        )
        first = sidecar["render"]["attempts"][0]["outcome"]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(stages)
    print(
        f"re-run with the cached bomb: {row['item_id']} fallback={row['fallback']}, "
        f"first attempt {first['kind']}: {first['error']}"
    )


def report(stages: list[dict[str, Any]]) -> None:
    """Print each stage's peak, its ratio to the baseline, and the target check."""
    baseline = stages[0]["peak_mb"]
    print(f"{'stage':36} {'exit':>4} {'seconds':>8} {'peak MB':>9} {'x baseline':>10}")
    for stage in stages:
        ratio = stage["peak_mb"] / baseline if baseline else 0.0
        print(
            f"{stage['stage']:36} {stage['status']:>4} {stage['seconds']:>8} "
            f"{stage['peak_mb']:>9} {ratio:>10.2f}"
        )
    worst = max(stages, key=lambda s: s["peak_mb"])
    verdict = "met" if worst["peak_mb"] * 1024**2 <= TARGET_BYTES else "MISSED"
    print(
        f"worst stage: {worst['stage']} at {worst['peak_mb']} MB "
        f"(target <= {TARGET_BYTES / 1024**2:.0f} MB: {verdict})"
    )
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"kernel peak RSS: this process {own:.0f} MB, largest finished child {children:.0f} MB")
    print(f"the bomb declares 20000x20000 px = {20000 * 20000 * 4 / 1e9:.1f} GB as RGBA")


if __name__ == "__main__":
    main()
