"""Render throughput of the Chromium backend against the floor of the same browser pool.

The floor is the same pool (browsers × pages) screenshotting a trivial page:
what the machine can do when rendering itself costs nothing. The ratio of the
fixture's images/s to that floor is the figure of merit (target ≥ 0.70 with
≥ 2 workers). Per-scene rates are printed too.

    .venv/bin/python benchmarks/render_throughput.py [--workers 2] [--repeat 2]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._measure import PeakRss
from fonts.catalogue import choose_fonts
from renderer.adapters import load_dataset
from renderer.chromium import ChromiumPool
from renderer.jobs import JobRequest, plan
from renderer.page import PageDocument
from renderer.pipeline import RunSettings, run_jobs
from renderer.presentation import SCENES, PresentationSpec

FIXTURE = (
    Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "mmmu-pro-tool" / "data.jsonl"
)
TRIVIAL = (
    "<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
    "<main id='content'><div data-region='question'><span class='t'>floor</span></div></main>"
    "<script src='/static/itemshot/page.js'></script></body></html>"
)


def floor_rate(workers: int, pages: int, count: int) -> float:
    """Return images/s of the pool screenshotting a trivial 768×1024 page `count` times."""
    document = PageDocument(
        html=TRIVIAL,
        assets={},
        css_width=768,
        css_height=1024,
        device_scale=1.0,
        min_scale=1.0,
        fonts=choose_fonts("regular", "en"),
        decor={},
        placeholders=(),
    )

    async def run() -> float:
        async with ChromiumPool(workers, pages) as pool:
            await asyncio.gather(*(pool.render(document) for _ in range(workers * pages)))
            started = time.perf_counter()
            await asyncio.gather(*(pool.render(document) for _ in range(count)))
            return count / (time.perf_counter() - started)

    return asyncio.run(run())


def fixture_rate(scenes: tuple[str, ...], workers: int, repeat: int) -> tuple[float, int, int]:
    """Return (images/s, images, peak RSS bytes) for the fixture rendered in `scenes`."""
    items = load_dataset(FIXTURE).items
    requests = [
        JobRequest(item, PresentationSpec(scene=scene), {"repeat": r})
        for r in range(repeat)
        for scene in scenes
        for item in items
    ]
    planned = plan(requests, run_seed=0)
    with tempfile.TemporaryDirectory() as out, PeakRss() as memory:
        summary = run_jobs(planned, Path(out), RunSettings(workers=workers))
    assert summary.failed == 0, summary.failures
    # Steady state: browser launch is a one-off cost of a run, not of an image.
    return summary.steady_images_per_second, summary.rendered, memory.peak


def main() -> None:
    """Measure and print the floor, the fixture rate, their ratio and per-scene rates."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pages", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2, help="passes over the fixture per scene")
    args = parser.parse_args()

    rate, images, peak = fixture_rate(tuple(SCENES), args.workers, args.repeat)
    floor = floor_rate(args.workers, args.pages, count=images)
    print(f"workers: {args.workers} browsers × {args.pages} pages, resolution 1024 px")
    print(f"floor (trivial page, same pool): {floor:6.2f} images/s")
    print(
        f"fixture, all scenes ({images} images): {rate:6.2f} images/s  peak memory (PSS, whole process tree) {peak / 2**20:.0f} MiB"
    )
    print(f"ratio to floor: {rate / floor:.2f}  (target ≥ 0.70)")
    print("per scene:")
    rates = {}
    for scene in SCENES:
        rates[scene], count, _ = fixture_rate((scene,), args.workers, args.repeat)
        print(f"  {scene:16s} {rates[scene]:6.2f} images/s ({count} images)")
    slowest, fastest = min(rates.values()), max(rates.values())
    print(f"slowest / fastest scene: {slowest / fastest:.2f}  (target ≥ 0.50)")


if __name__ == "__main__":
    main()
