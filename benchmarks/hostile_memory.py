"""Peak memory over the hostile set: render it, audit it, generate against a bomb server.

Stages, each measured on its own (summed PSS of this process and every
child — Chromium, Playwright's driver, OCR workers — sampled every 0.1 s,
and the kernel's own peak RSS of this process):

1. baseline: render and verify the three good items of tests/hostile/items.jsonl;
2. hostile: render and verify all of tests/hostile/items.jsonl;
3. generate: `render --backend nanobanana` against a loopback stand-in whose
   every answer is tests/hostile/bomb.png (20000×20000 px, 1.6 GB decoded);
4. cached bomb: the bomb planted in the response cache, re-run (must be refused);
5. audit: `itemshot audit` of a folder holding the bomb among real pages;
6. second round: render and verify the second round's probe items, written
   here (options that differ only by an invisible or look-alike character, a
   NaN answer, an animated GIF, a 16-bit grey PNG and an EXIF-rotated JPEG
   figure, a right-to-left question with inline math, a 10,000-character
   formula) beside the three good items;
7. review body: a review server over the baseline's set sent a 300 MB
   chunked and a 300 MB declared body (both must be refused with 413 without
   being held).

Prints each stage's peak and its ratio to the baseline, and whether the
largest stays under the 3 GB target. Run from the checkout:

    .venv/bin/python benchmarks/hostile_memory.py
"""

from __future__ import annotations

import http.client
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from _measure import PeakRss
from PIL import Image

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


def second_round(work: Path, good: Path) -> Path:
    """Write the second round's probe items (and their figures) beside the good ones; return the JSONL."""
    figures = work / "figures"
    chart = Image.open(figures / "ok.png").convert("RGB")  # the hostile set's valid bar chart
    # Three frames of one chart in different colours (its channels rotated).
    frames = [
        chart,
        *(Image.merge("RGB", chart.split()[turn:] + chart.split()[:turn]) for turn in (1, 2)),
    ]
    frames[0].save(
        figures / "animated.gif", save_all=True, append_images=frames[1:], duration=30, loop=0
    )
    grey = np.asarray(chart.convert("L"), dtype=np.uint16) * 257
    Image.fromarray(grey).save(figures / "grey16.png")  # 16-bit grey (mode I;16)
    sideways = chart.rotate(90, expand=True)
    exif = sideways.getexif()
    exif[0x0112] = 6  # stored turned a quarter left: a viewer turns it a quarter right
    buffer = io.BytesIO()
    sideways.save(buffer, format="JPEG", exif=exif, quality=95)
    (figures / "rotated.jpg").write_bytes(buffer.getvalue())
    probes = [
        {"id": "r2-zwsp", "question": "Which is largest?", "options": ["4\u200b501", "4501", "12", "7"], "answer": "B"},
        {"id": "r2-homoglyph", "question": "Which letter?", "options": ["\u0410", "A", "B", "C"], "answer": "C"},
        {"id": "r2-nan-answer", "question": "Which?", "options": ["a", "b", "nan", "d"], "answer": None},
        {"id": "r2-animated", "question": "Which bar in <image 1> is the tallest?", "options": ["alpha", "beta", "gamma", "delta"], "answer": "B", "image_1": "figures/animated.gif"},
        {"id": "r2-grey16", "question": "Which bar in <image 1> is the tallest?", "options": ["alpha", "beta", "gamma", "delta"], "answer": "B", "image_1": "figures/grey16.png"},
        {"id": "r2-exif", "question": "Which bar in <image 1> is the tallest?", "options": ["alpha", "beta", "gamma", "delta"], "answer": "B", "image_1": "figures/rotated.jpg"},
        {"id": "r2-rtl", "question": "\u05de\u05d4\u05d5 $x = 3$ \u05d1\u05de\u05e9\u05d5\u05d5\u05d0\u05d4?", "options": ["\u05db\u05df", "\u05dc\u05d0", "\u05d0\u05d5\u05dc\u05d9", "3"], "answer": "A"},
        {"id": "r2-long-formula", "question": "Which? $" + "\\frac{1}{" * 2000 + "$", "options": ["1", "2", "3", "4"], "answer": "A"},
    ]  # fmt: skip
    dataset = work / "second-round.jsonl"
    lines = [*good.read_text().splitlines(), *(json.dumps(probe) for probe in probes)]
    dataset.write_text("\n".join(lines) + "\n")
    return dataset


def chunks(size: int, block: int = 1024 * 1024) -> Iterator[bytes]:
    """Yield `size` bytes of an unending JSON text in `block`-sized pieces."""
    piece = b"[" * block
    for start in range(0, size, block):
        yield piece[: size - start]


def post_body(url: str, token: str, size: int, *, chunked: bool) -> int:
    """POST a `size`-byte decision body to the review server; return the status it answered."""
    host, port = url.split("//", 1)[1].rstrip("/").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=120)
    headers = {"Content-Type": "application/json", "X-CSRF-Token": token}
    if not chunked:
        headers["Content-Length"] = str(size)
    try:
        connection.putrequest("POST", "/api/decisions")
        for name, value in headers.items():
            connection.putheader(name, value)
        if chunked:
            connection.putheader("Transfer-Encoding", "chunked")
        connection.endheaders()
        try:
            for piece in chunks(size):
                connection.send(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            if chunked:
                connection.send(b"0\r\n\r\n")
        except OSError:
            pass  # the server refused the body and closed: its answer is waiting
        return connection.getresponse().status
    finally:
        connection.close()


def review_bodies(out: Path, size: int) -> Callable[[], int]:
    """Return a stage that sends a review server over `out` two `size`-byte bodies (0 if both 413)."""

    def stage() -> int:
        server = subprocess.Popen(
            [sys.executable, "-m", "itemshot.cli", "review", str(out), "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        try:
            assert server.stdout is not None
            url = server.stdout.readline().split(": ", 1)[1].strip()  # printed once listening
            host, port = url.split("//", 1)[1].rstrip("/").split(":")
            connection = http.client.HTTPConnection(host, int(port), timeout=60)
            connection.request("GET", "/")
            page = connection.getresponse().read().decode()
            connection.close()
            marker = 'name="csrf-token" content="'
            token = page[page.index(marker) + len(marker) :].split('"', 1)[0]
            statuses = [post_body(url, token, size, chunked=chunked) for chunked in (True, False)]
        finally:
            server.terminate()
            server.wait(timeout=60)
        return 0 if statuses == [413, 413] else 1

    return stage


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
        probes = second_round(work, good)
        stages.append(measure("second-round probes", render(probes, work / "round2")))
        stages.append(
            measure("review: two 300 MB bodies", review_bodies(work / "base", 300 * 1024**2))
        )
        round2 = json.loads((work / "round2" / "summary.json").read_text())
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
    failed = {
        e["item_id"]: f"{e.get('field')}: {e.get('reason')}" for e in round2.get("failed_items", [])
    }
    print(f"second round: refused {failed}")
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
