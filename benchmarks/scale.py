"""Local executor vs Ray executor on the same 2×2 job set: throughput, CPU and memory.

The vision jobs of `designs/mmmu_pro_2x2.yaml` on `--dataset` (default: the
1,730-item MMMU-Pro mix file the tests carry; `--limit` items × 4/10 options)
run through the local executor with 1 and 2 browsers and through the Ray
executor on a loopback Ray cluster of 1 and 2 CPUs (one render actor, one
browser, per CPU), each into a fresh folder. Printed per run: images/s
(steady state: browsers up; and wall time), CPU ms per image (every process
of the run, Ray's own daemons included), peak memory per render worker and
of the driver. The Ray overhead ratio is Ray's steady images/s over the
local executor's with the same number of browsers, measured in the same run
(target ≥ 0.85 on 2 CPUs). Every Ray output folder is checked to hold the
local bytes. `--verify N` also checks the first N images on this machine's
process pool and as Ray tasks (images/s per core for the capacity model).

    .venv/bin/python benchmarks/scale.py [--limit 40] [--repeat 1] [--verify 20] [--dataset PATH]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._measure import PeakSamples, _pss_bytes
from itemshot.executors.base import Executor
from itemshot.executors.loopback import LoopbackCluster, process_tree
from itemshot.executors.ray import RayExecutor
from itemshot.factorial.design.controller import load_items, plan_sweep
from itemshot.factorial.design.design import load_design, with_dataset
from itemshot.pipeline import RunSettings, RunSummary, run_jobs

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "designs" / "mmmu_pro_2x2.yaml"
MIX = ROOT / "tests" / "data" / "mmmu-pro" / "mix" / "mix_data.jsonl"
_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(roots: list[int]) -> float:
    """Return the CPU seconds of a process tree, ended-and-reaped children included."""
    total = 0
    for pid in process_tree(roots):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(v) for v in fields[11:15])  # utime stime cutime cstime
    return total / _TICKS


def pss(roots: list[int]) -> int:
    """Return the summed PSS of a process tree, in bytes."""
    total = 0
    for pid in process_tree(roots):
        try:
            total += _pss_bytes(pid)
        except (OSError, ValueError, IndexError):
            continue
    return total


@dataclass
class Figures:
    """What one run measured."""

    name: str
    browsers: int
    summary: RunSummary
    cpu_ms_per_image: float
    worker_mb: float
    driver_mb: float
    out: Path

    @property
    def steady(self) -> float:
        return self.summary.steady_images_per_second

    @property
    def wall(self) -> float:
        return self.summary.images_per_second


def actor_pids(cluster: LoopbackCluster) -> list[int]:
    """Return the cluster's render actor processes."""
    found = []
    for pid in cluster.processes():
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::Render"):
                found.append(pid)
        except OSError:
            continue
    return found


def measure(
    name: str,
    browsers: int,
    planned: list,
    executor: Executor | None,
    cluster: LoopbackCluster | None,
    folder: Path,
) -> Figures:
    """Run the job set once into a fresh folder and return its figures."""
    out = Path(tempfile.mkdtemp(prefix=name.replace(" ", "-") + "-", dir=folder))
    me = os.getpid()
    # Every process of a run is below this one: the local browsers, or the Ray
    # cluster (its head is a child of this process) with its actors and browsers.
    roots = [me]

    def sample() -> dict[str, int]:
        driver = _pss_bytes(me)  # this Python process alone
        if cluster is None:  # the local executor: the browsers are this process's children
            return {"driver": driver, "worker": (pss([me]) - driver) // browsers}
        actors = [pss([pid]) for pid in actor_pids(cluster)]  # an actor and its browser
        return {"driver": driver, "worker": max(actors, default=0)}

    before = cpu_seconds(roots)
    with PeakSamples(sample, 0.2) as memory:
        summary = run_jobs(planned, out, RunSettings(workers=browsers), executor=executor)
    after = cpu_seconds(roots)
    assert summary.failed == 0 and summary.rendered == len(planned), summary.as_dict()
    workers_mb = memory.peaks.get("worker", 0) / 2**20
    driver_mb = memory.peaks.get("driver", 0) / 2**20
    return Figures(
        name,
        browsers,
        summary,
        (after - before) * 1000 / max(1, summary.rendered),
        workers_mb,
        driver_mb,
        out,
    )


@contextmanager
def ray_executor(cpus: int) -> Iterator[tuple[LoopbackCluster, RayExecutor, float]]:
    """Yield a loopback cluster of `cpus` CPUs, a connected executor and the cluster start time."""
    started = time.perf_counter()
    with LoopbackCluster(cpus=cpus) as cluster:
        startup = time.perf_counter() - started
        with RayExecutor(cluster.address, actors=cpus) as executor:
            executor.connect()
            yield cluster, executor, startup


def same_bytes(first: Path, second: Path) -> bool:
    """Return whether two output folders hold the same images and sidecars."""

    def files(out: Path) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in sorted((out / "images").iterdir())}

    return files(first) == files(second)


def verify_rates(out: Path, count: int, cpus: int) -> tuple[float, float]:
    """Return verified images/s of the first `count` images: local pool, then Ray tasks."""
    import shutil

    from itemshot.outputs import read_manifest, write_manifest
    from itemshot.verify import verify_output_set

    rates = []
    for use_ray in (False, True):
        copy = Path(tempfile.mkdtemp(prefix="verify-", dir=out.parent))
        shutil.copytree(out, copy, dirs_exist_ok=True)
        rows = read_manifest(copy)[:count]
        write_manifest(copy, rows)
        if use_ray:
            with ray_executor(cpus) as (_, executor, _):
                started = time.perf_counter()
                verify_output_set(copy, workers=cpus, map_tasks=executor.map, report=False)
        else:
            started = time.perf_counter()
            verify_output_set(copy, workers=cpus, report=False)
        rates.append(len(rows) / (time.perf_counter() - started))
    return rates[0], rates[1]


def _cpu_now() -> float:
    """Return the CPU seconds of this process and its ended children (tesseract runs)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def stage_costs(out: Path, count: int) -> dict[str, float]:
    """Return CPU seconds per image for capture (each preset, medium) and verification.

    CPU time, not wall time: it holds on a loaded machine, and 1 / cost is
    the stage's images/s per core on an idle one.
    """
    import json

    from itemshot.degradations import capture_layout
    from itemshot.outputs import read_manifest, write_manifest
    from itemshot.renderer.presentation import CAPTURES
    from itemshot.renderer.records import Layout
    from itemshot.verify import verify_output_set

    rows = [row for row in read_manifest(out) if row.get("image")][:count]
    pages = []
    for row in rows:
        record = json.loads((out / row["layout"]).read_text(encoding="utf-8"))
        pages.append(((out / row["image"]).read_bytes(), Layout.from_dict(record["layout"])))
    costs: dict[str, float] = {}
    for preset in (c for c in CAPTURES if c != "none"):
        started = _cpu_now()
        for seed, (image, layout) in enumerate(pages):
            capture_layout(image, layout, preset, "medium", seed)
        costs[f"capture {preset}"] = (_cpu_now() - started) / len(pages)
    write_manifest(out, rows)
    started = _cpu_now()
    verify_output_set(out, workers=1, report=False)  # in this process, one tesseract thread
    costs["verify"] = (_cpu_now() - started) / len(rows)
    return costs


def main() -> None:
    """Run every configuration and print the table, the overhead ratios and the byte check."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=40, help="items of the 2×2 (2 jobs each)")
    parser.add_argument("--dataset", type=Path, default=MIX, help="the 2×2's items")
    parser.add_argument("--repeat", type=int, default=1, help="runs per configuration (best kept)")
    parser.add_argument("--verify", type=int, default=0, help="also verify the first N images")
    parser.add_argument(
        "--costs", type=int, default=0, help="CPU s/image of capture and verify on N images"
    )
    args = parser.parse_args()

    loaded = with_dataset(load_design(DESIGN), args.dataset)
    plan = plan_sweep(loaded, load_items(loaded, args.limit))
    planned = list(plan.jobs)
    print(f"job set: {len(planned)} renders of {DESIGN.name} (--limit {args.limit})")
    best: dict[str, Figures] = {}
    cluster_start: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="itemshot-scale-") as temp:
        folder = Path(temp)
        for _ in range(args.repeat):
            for browsers in (1, 2):
                runs = [measure(f"local {browsers}", browsers, planned, None, None, folder)]
                with ray_executor(browsers) as (cluster, executor, startup):
                    cluster_start[browsers] = startup
                    runs.append(
                        measure(f"ray {browsers} CPU", browsers, planned, executor, cluster, folder)
                    )
                for figures in runs:
                    if figures.name not in best or figures.steady > best[figures.name].steady:
                        best[figures.name] = figures
        print(
            f"\n{'run':<12}{'images/s':>10}{'wall img/s':>12}{'start s':>9}"
            f"{'CPU ms/img':>12}{'MB/worker':>11}{'driver MB':>11}"
        )
        for figures in best.values():
            print(
                f"{figures.name:<12}{figures.steady:>10.2f}{figures.wall:>12.2f}"
                f"{figures.summary.startup_seconds:>9.1f}{figures.cpu_ms_per_image:>12.0f}"
                f"{figures.worker_mb:>11.0f}{figures.driver_mb:>11.0f}"
            )
        print(
            "\n(start s: browsers or actors up; a Ray cluster's own start, not in the figures: "
            + ", ".join(f"{c} CPU {s:.1f} s" for c, s in sorted(cluster_start.items()))
            + ")"
        )
        for browsers in (1, 2):
            local, ray = best[f"local {browsers}"], best[f"ray {browsers} CPU"]
            print(
                f"Ray overhead ratio, {browsers} browser(s): {ray.steady / local.steady:.3f} "
                f"steady, {ray.wall / local.wall:.3f} wall"
                + ("   (target >= 0.85)" if browsers == 2 else "")
                + f"   same bytes as local: {same_bytes(local.out, ray.out)}"
            )
        if args.verify:
            local_rate, ray_rate = verify_rates(best["local 2"].out, args.verify, 2)
            print(
                f"verify {args.verify} images on 2 cores: local pool {local_rate:.2f} images/s, "
                f"Ray tasks {ray_rate:.2f} images/s (ratio {ray_rate / local_rate:.3f})"
            )
        render_cpu = best["local 2"].cpu_ms_per_image / 1000
        print(f"\nCPU per image (images/s per core = 1 / cost): render {render_cpu:.3f} s")
        if args.costs:
            for stage, cost in stage_costs(best["local 1"].out, args.costs).items():
                print(f"  {stage:<28} {cost:.3f} s   ({1 / cost:5.2f} images/s per core)")


if __name__ == "__main__":
    main()
