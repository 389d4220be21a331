"""Capture throughput per preset at 1024 px on one core, against Augraphy in the same run.

Run from the project root:

    python benchmarks/capture_throughput.py [--images N] [--repeat R] [--fixture FOLDER] \
        [--augraphy-python "$(bash benchmarks/augraphy_venv.sh)"]

`--fixture` is an MMMU-Pro screenshot-tool folder (`data.jsonl`, `images/`,
`official-screenshots/`); the default is the copy the tests carry, which holds
two of the official screenshots (the fallback when Chromium is unavailable).

Augraphy is not a project dependency: `benchmarks/augraphy_venv.sh` makes (once)
a venv with Augraphy 8.2.6 in the user's cache, outside the checkout, and
prints its interpreter; without one the Augraphy rows are skipped with a
message. The Augraphy pipelines are the closest equivalents of
`phone_photo_paper` (Geometric rotation, LightingGradient, ShadowCast, Jpeg)
and `phone_photo_screen` (Moire, Geometric, LightingGradient, Jpeg), run on
the same images in the same run, so the ratios survive a loaded machine.

Backdrop textures are cut from a few cached bases per kind and variant; the
warm-up draws enough seeds to fill that cache, so the rates are those of a
long run (the first photos of a run also synthesise their bases).
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from statistics import median  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from itemshot.cli import main as itemshot  # noqa: E402
from itemshot.degradations import PRESETS, SEVERITIES, capture  # noqa: E402
from itemshot.renderer.records import Layout, Region  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "data" / "mmmu-pro" / "tool"

AUGRAPHY_SCRIPT = r"""
import json, os, sys, time
for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[name] = "1"
import cv2
cv2.setNumThreads(1)
from augraphy import AugraphyPipeline, Geometric, Jpeg, LightingGradient, Moire, ShadowCast
paths, repeat = json.loads(sys.argv[1]), int(sys.argv[2])
images = [cv2.imread(p) for p in paths]
pipelines = {
    "paper": lambda: AugraphyPipeline(ink_phase=[], paper_phase=[], post_phase=[
        Geometric(rotate_range=(-5, 5), p=1), LightingGradient(p=1), ShadowCast(p=1),
        Jpeg(quality_range=(78, 88), p=1)], random_seed=1),
    "screen": lambda: AugraphyPipeline(ink_phase=[], paper_phase=[], post_phase=[
        Moire(p=1), Geometric(rotate_range=(-5, 5), p=1), LightingGradient(p=1),
        Jpeg(quality_range=(78, 88), p=1)], random_seed=1),
}
result = {}
for name, make in pipelines.items():
    pipeline = make()
    pipeline(images[0])  # warm-up (numba compilation)
    start = time.perf_counter()
    for _ in range(repeat):
        for image in images:
            pipeline(image)
    result[name] = repeat * len(images) / (time.perf_counter() - start)
print(json.dumps(result))
"""


def load_inputs(
    count: int, work: Path, fixture: Path = FIXTURE
) -> list[tuple[bytes, list[Region], Path]]:
    """Render fixture items at 1024 px (or, without Chromium, use the official screenshots).

    Each input is the PNG file's bytes, as `itemshot render --capture` hands them
    over, so decoding is part of every timed capture.
    """
    out = work / "renders"
    status = itemshot(["render", str(fixture / "data.jsonl"), "--out", str(out),
                       "--limit", str(count), "--no-progress"])  # fmt: skip
    inputs = []
    if status == 0:
        for png in sorted((out / "images").glob("*.png"))[:count]:
            layout = Layout.from_dict(json.loads(png.with_suffix(".json").read_text())["layout"])
            inputs.append((png.read_bytes(), list(layout.regions), png))
        return inputs
    print("renderer unavailable: using the official screenshots scaled to 1024 px")
    for path in sorted((fixture / "official-screenshots").glob("*.png"))[:count]:
        image = cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2RGB)
        scale = 1024 / max(image.shape[:2])
        image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        scaled = work / path.name
        cv2.imwrite(str(scaled), cv2.cvtColor(image, cv2.COLOR_RGB2BGR))
        inputs.append((scaled.read_bytes(), [], scaled))
    return inputs


def time_preset(inputs: list, preset: str, severity: str, repeat: int) -> tuple[float, float]:
    """Return images per second of `capture` (PNG bytes in, encoded image out).

    The first figure is per wall-clock second, the second per CPU second of this
    process (the same on an idle core; lower wall figures mean others share it).
    """
    rounds, cpu_rounds = [], []
    for round_index in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        for index, (data, regions, _) in enumerate(inputs):
            capture(data, regions, preset, severity, seed=round_index * 1000 + index)
        rounds.append((time.perf_counter() - start) / len(inputs))
        cpu_rounds.append((time.process_time() - cpu) / len(inputs))
    return 1.0 / median(rounds), 1.0 / median(cpu_rounds)


def augraphy_rates(paths: list[Path], repeat: int, python: str | None) -> dict[str, float] | None:
    """Return Augraphy images/s per pipeline, or None (with a message) when it is absent."""
    interpreter = python or sys.executable
    check = subprocess.run([interpreter, "-c", "import augraphy"], capture_output=True, check=False)
    if check.returncode != 0:
        print("Augraphy not installed: skipped (pip install augraphy, or --augraphy-python PATH)")
        return None
    args = [interpreter, "-c", AUGRAPHY_SCRIPT, json.dumps([str(p) for p in paths]), str(repeat)]
    # Augraphy writes a cache folder into its working directory: keep it out of the tree.
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(args, capture_output=True, text=True, check=False, cwd=scratch)
    if done.returncode != 0:
        print("Augraphy run failed:", done.stderr.strip().splitlines()[-1:])
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=8, help="fixture items to use")
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds (median reported)")
    parser.add_argument("--warm", type=int, default=6, help="untimed seeds per image first")
    parser.add_argument("--augraphy-python", default=None, help="interpreter that has augraphy")
    parser.add_argument(
        "--fixture", type=Path, default=FIXTURE, help="MMMU-Pro screenshot-tool folder"
    )
    args = parser.parse_args()
    cv2.setNumThreads(1)
    work = Path(tempfile.mkdtemp(prefix="capture-bench-"))
    inputs = load_inputs(args.images, work, args.fixture)
    size = cv2.imdecode(np.frombuffer(inputs[0][0], np.uint8), cv2.IMREAD_COLOR).shape
    print(
        f"{len(inputs)} images of {size[1]}x{size[0]} px (PNG bytes in, decoding timed), "
        f"one core, median of {args.repeat} rounds"
    )
    # warm caches (fonts, albumentations, backdrop base textures): untimed rounds
    for preset in PRESETS:
        for severity in SEVERITIES:
            for round_index in range(args.warm):
                for index, (data, regions, _) in enumerate(inputs):
                    capture(data, regions, preset, severity, seed=10**6 + 100 * round_index + index)
    header = f"{'preset':22s}" + "".join(f"{s + ' img/s':>16s}" for s in SEVERITIES)
    rates: dict[tuple[str, str], float] = {}
    cpu_rates: dict[tuple[str, str], float] = {}
    print(header)
    for preset in PRESETS:
        for severity in SEVERITIES:
            key = (preset, severity)
            rates[key], cpu_rates[key] = time_preset(inputs, preset, severity, args.repeat)
        print(f"{preset:22s}" + "".join(f"{rates[(preset, s)]:16.1f}" for s in SEVERITIES))
    print("per CPU second of this process (equal to the above on an idle core):")
    for preset in PRESETS:
        print(f"{preset:22s}" + "".join(f"{cpu_rates[(preset, s)]:16.1f}" for s in SEVERITIES))
    targets = {"phone_photo_paper": (20.0, "paper"), "phone_photo_screen": (10.0, "screen")}
    aug = augraphy_rates([p for _, _, p in inputs], args.repeat, args.augraphy_python)
    for preset, (target, theirs) in targets.items():
        wall, cpu = rates[(preset, "medium")], cpu_rates[(preset, "medium")]
        line = (
            f"{preset} medium: {wall:.1f} images/s ({cpu:.1f} per CPU second; target >= {target:g})"
        )
        if aug:
            line += f"; Augraphy's {theirs}-photo pipeline {aug[theirs]:.2f}/s -> ours {wall / aug[theirs]:.1f}x"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
