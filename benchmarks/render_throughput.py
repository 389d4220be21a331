"""Render throughput of the Chromium backend against the floor of the same browser pool.

The floor is the same pool (browsers × pages) screenshotting a trivial page:
what the machine can do when rendering itself costs nothing. The ratio of the
fixture's images/s to that floor is the figure of merit (target ≥ 0.70 with
≥ 2 workers). Per-scene rates are printed too, and where the CPU goes: CPU
milliseconds per image by process (this Python, the Playwright driver, the
Chromium browser, renderer and GPU processes) for the floor, for the fixture,
and for capturing the already-rendered fixture pages again (the cost of the
screenshot alone, which no rendering optimisation can remove).

    .venv/bin/python benchmarks/render_throughput.py [--workers 2] [--repeat 2]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._measure import PeakRss, cpu_by_process, cpu_per_item
from itemshot.fonts.catalogue import choose_fonts
from itemshot.pipeline import RunSettings, run_jobs
from itemshot.renderer.adapters import load_dataset
from itemshot.renderer.backends.chromium import _SHOW_AND_LAYOUT, ChromiumPool
from itemshot.renderer.jobs import Job, JobRequest, plan
from itemshot.renderer.page import PageDocument, build_page
from itemshot.renderer.presentation import SCENES, PresentationSpec

FIXTURE = (
    Path(__file__).resolve().parents[1] / "tests" / "data" / "mmmu-pro" / "tool" / "data.jsonl"
)
TRIVIAL = (
    "<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
    "<main id='content'><div data-region='question'><span class='t'>floor</span></div></main>"
    "<script src='/static/itemshot/page.js'></script></body></html>"
)


def trivial_document() -> PageDocument:
    """Return the floor's page: one word on a blank 768×1024 page."""
    return PageDocument(
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


def floor_rate(workers: int, pages: int, count: int) -> float:
    """Return images/s of the pool screenshotting a trivial 768×1024 page `count` times."""
    document = trivial_document()

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


KINDS = (  # the processes the CPU split reports, in print order
    "python",
    "driver",
    "browser",
    "renderer",
    "gpu-process",
)


async def _capture_alone(
    pool: ChromiumPool, documents: list[PageDocument], repeats: int
) -> dict[str, float]:
    """Return CPU ms per screenshot of pages already rendered: capture cost alone.

    Each page slot shows a fixture page (not measured), then every slot
    screenshots its unchanged page `repeats` times at once (measured). Reaches
    into the pool's slots: a measurement, not an API.
    """
    slots = [await pool._slots.get() for _ in range(pool.browser_count * pool.pages_per_browser)]
    spent: dict[str, float] = {}
    captures = 0

    async def show(slot: Any, document: PageDocument) -> None:
        slot.assets = dict(document.assets)
        faces = [dict(face) for face in document.fit_faces]
        await slot.page.evaluate(
            _SHOW_AND_LAYOUT, [document.html, document.min_scale, document.device_scale, faces]
        )

    async def capture(slot: Any) -> None:
        for _ in range(repeats):
            await slot.cdp.send(
                "Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True}
            )

    try:
        for start in range(0, len(documents), len(slots)):
            group = list(zip(slots, documents[start : start + len(slots)], strict=False))
            await asyncio.gather(*(show(slot, d) for slot, d in group))
            before = cpu_by_process()
            await asyncio.gather(*(capture(slot) for slot, _ in group))
            after = cpu_by_process()
            captures += repeats * len(group)
            for kind in after:
                spent[kind] = spent.get(kind, 0.0) + after[kind] - before.get(kind, 0.0)
    finally:
        for slot in slots:
            pool._slots.put_nowait(slot)
    return {kind: seconds * 1000 / captures for kind, seconds in spent.items() if seconds > 0}


def cpu_split(workers: int, pages: int) -> dict[str, dict[str, float]]:
    """Return CPU ms per image by process for the floor, the fixture and capture alone."""
    items = load_dataset(FIXTURE).items
    requests = [JobRequest(item, PresentationSpec(scene=s), {}) for s in SCENES for item in items]
    jobs = [j for j in plan(requests, run_seed=0) if isinstance(j, Job)]
    documents = [build_page(j.item, j.presentation, j.seed, j.content) for j in jobs]
    trivial = trivial_document()
    split: dict[str, dict[str, float]] = {}

    async def run() -> None:
        async with ChromiumPool(workers, pages) as pool:
            await asyncio.gather(*(pool.render(trivial) for _ in range(workers * pages)))
            for name, batch in (("floor", [trivial] * len(documents)), ("fixture", documents)):
                before = cpu_by_process()
                await asyncio.gather(*(pool.render(d) for d in batch))
                split[name] = cpu_per_item(before, cpu_by_process(), len(batch))
            split["capture alone"] = await _capture_alone(pool, documents, repeats=3)

    asyncio.run(run())
    return split


def print_cpu_split(split: dict[str, dict[str, float]], target: float = 0.70) -> None:
    """Print the CPU split table and what it leaves for rendering at the target ratio."""
    print("CPU ms per image, by process (steady state, same pool):")
    print(f"  {'':16s}" + "".join(f"{k:>12s}" for k in KINDS) + f"{'total':>9s}")
    for name, row in split.items():
        cells = "".join(f"{row.get(k, 0.0):12.1f}" for k in KINDS)
        print(f"  {name:16s}{cells}{sum(row.values()):9.1f}")
    floor, capture, fixture = (
        sum(split[k].values()) for k in ("floor", "capture alone", "fixture")
    )
    budget = floor / target
    print(
        f"  at {target:.2f} of the floor an image may cost {budget:.1f} ms; capturing a real page "
        f"alone costs {capture:.1f} ms, leaving {budget - capture:.1f} ms for everything else, "
        f"which takes {fixture - capture:.1f} ms now"
    )


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
    print_cpu_split(cpu_split(args.workers, args.pages))


if __name__ == "__main__":
    main()
