"""How the review app's queue scales: index build, queue pages, decisions, at 1k and 50k images.

    .venv/bin/python benchmarks/review_index.py [--sizes 1000,50000] [--repeats 30] [--http]

For each synthetic output set (manifest rows shaped like the pipeline's, a
third failing the verifier) it prints:

- the index build time, beside the time to merely parse the manifest's JSON
  lines (the floor any reader pays), as a ratio;
- the median time of a queue page for several filters, with the index's
  per-query cache cleared before each, beside the baseline a server without
  an index would pay per request (parse the manifest and filter it), as a
  speed-up;
- the median time to log one decision (fsync'd) and update the index, and
  to read one item's row back by its offset;
- the time to write the review into the manifest;
- with `--http`, the median wall time of queue and item pages from the real
  server (uvicorn on 127.0.0.1), and the server's memory.

Ratios against the smallest set show whether a page stays flat as the set
grows; figures measured on a loaded machine are provisional.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _measure import tree_rss_bytes  # noqa: E402

from itemshot.factorial.review.log import Decision, utc_now  # noqa: E402
from itemshot.review.index import Query, ReviewIndex  # noqa: E402
from tests.review_sets import review_server, synthetic_set  # noqa: E402

QUERIES = {
    "queue (unreviewed)": Query(),
    "scene=whiteboard": Query(scene="whiteboard"),
    "reason=number_missing": Query(reason="number_missing"),
    "fail+scan+Physics": Query(verdict="fail", capture="scan", subject="Physics"),
    "all, last page": Query(status="all", page=10**6),
}


def median_seconds(action, repeats: int) -> float:  # type: ignore[no-untyped-def]
    """Return the median wall time of `action()` over `repeats` runs."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def naive_page(out: Path, query: Query) -> list[dict]:
    """Return a page the way a server without an index would: parse and filter every row."""
    matches = []
    with (out / "manifest.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            scene = (row.get("presentation") or {}).get("scene")
            if query.scene and scene != query.scene:
                continue
            if query.reason and query.reason not in (row.get("verify") or {}).get("codes", []):
                continue
            matches.append(row)
    matches.sort(key=lambda r: r.get("verdict") != "fail")
    return matches[:48]


def measure(size: int, repeats: int, folder: Path) -> dict[str, float]:
    """Return the figures of one set size."""
    out = folder / f"set-{size}"
    synthetic_set(out, size, images=False)
    figures: dict[str, float] = {}

    def parse() -> None:
        with (out / "manifest.jsonl").open(encoding="utf-8") as handle:
            for line in handle:
                json.loads(line)

    figures["parse"] = median_seconds(parse, 3)
    started = time.perf_counter()
    index = ReviewIndex(out)
    figures["build"] = time.perf_counter() - started
    for name, query in QUERIES.items():

        def page(query: Query = query) -> None:
            index._changed()  # drop the per-query cache: measure the real filtering
            index.page(query)

        figures[f"page {name}"] = median_seconds(page, repeats)
    figures["naive page"] = median_seconds(lambda: naive_page(out, Query(scene="whiteboard")), 3)
    counter = iter(range(10**9))

    def decide() -> None:
        n = next(counter)
        position = n % len(index)
        image = index.entry(position).image
        index.record(Decision(f"bench-{n}", image, "accept", "bench", utc_now(), seconds=2.0))

    figures["decision"] = median_seconds(decide, repeats)
    figures["row read"] = median_seconds(lambda: index.row(len(index) // 2), repeats)
    started = time.perf_counter()
    index.write_manifest()
    figures["manifest write"] = time.perf_counter() - started
    return figures


def http_figures(size: int, repeats: int, folder: Path) -> dict[str, float]:
    """Return median page times from the real server over a set, and its memory."""
    import httpx

    out = folder / f"set-{size}"
    figures: dict[str, float] = {}
    started = time.perf_counter()
    with review_server(out, "--reviewer", "bench") as server:
        figures["server start"] = time.perf_counter() - started
        with httpx.Client(base_url=server.url, timeout=120) as client:
            for name, path in (
                ("GET /", "/"),
                ("GET /?scene=whiteboard&page=20", "/?scene=whiteboard&page=20"),
                ("GET /item/N", f"/item/{size // 2}"),
                ("GET /stats", "/stats"),
            ):
                client.get(path).raise_for_status()
                figures[name] = median_seconds(lambda p=path: client.get(p), repeats)
        figures["server MiB"] = tree_rss_bytes(server.process.pid) / 2**20
    return figures


def main() -> None:
    """Print the figures of every size, with ratios against the smallest."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,50000")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--http", action="store_true", help="also time the real server")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        results = {size: measure(size, args.repeats, folder) for size in sizes}
        if args.http:
            for size in sizes:
                results[size] |= http_figures(size, max(5, args.repeats // 3), folder)
    base = sizes[0]
    names = list(results[base])
    print(f"{'figure':34}" + "".join(f"{size:>14,}" for size in sizes) + f"{'ratio':>10}")
    for name in names:
        values = [results[size][name] for size in sizes]
        unit = "MiB" if name.endswith("MiB") else "ms"
        shown = [v if unit == "MiB" else v * 1000 for v in values]
        ratio = values[-1] / values[0] if values[0] else float("nan")
        cells = "".join(f"{v:>11.3f} {unit:<2}" for v in shown)
        print(f"{name:34}{cells}{ratio:>9.1f}x")
    for size in sizes:
        figures = results[size]
        worst = max(v for k, v in figures.items() if k.startswith("page "))
        print(
            f"{size:,} images: index build {figures['build'] / figures['parse']:.2f}x the bare "
            f"JSON parse; worst indexed page {worst * 1000:.2f} ms, "
            f"{figures['naive page'] / worst:,.0f}x faster than parsing per request"
        )


if __name__ == "__main__":
    main()
