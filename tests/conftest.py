"""Shared test fixtures: paths to the real-data fixtures and a CLI runner.

The MMMU-Pro data the tests read is carried in `tests/data/mmmu-pro/` (see
its README.md for where it comes from, its licence and what was cut).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from itemshot.cli import main

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "data" / "mmmu-pro"
TOOL_DATA = FIXTURES / "tool" / "data.jsonl"
TOOL_IMAGES = FIXTURES / "tool" / "images"
OFFICIAL_SCREENSHOTS = FIXTURES / "tool" / "official-screenshots"
MIX_DATA = FIXTURES / "mix" / "mix_data.jsonl"
OUTPUTS = FIXTURES / "outputs"
SAMPLE_DATA = ROOT / "renderer" / "sample" / "sample.jsonl"

os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")

# Property tests draw their examples from a seed fixed per test, so the suite gives the same
# result on every run and machine; `HYPOTHESIS_PROFILE=explore` draws new ones each run.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


def run_cli(*args: str | Path) -> int:
    """Run `itemshot ARGS` in this process and return its exit status."""
    return main([str(a) for a in args])


def sample_subset(folder: Path, ids: Iterable[str]) -> Path:
    """Write the sample items with these ids (and the sample figures) into `folder`; return the JSONL."""
    wanted = set(ids)
    shutil.copytree(SAMPLE_DATA.parent / "figures", folder / "figures")
    lines = [
        line
        for line in SAMPLE_DATA.read_text(encoding="utf-8").splitlines()
        if json.loads(line)["id"] in wanted
    ]
    (folder / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder / "items.jsonl"


def job_sidecar(out: Path, row: dict) -> dict:
    """Return the sidecar record of a manifest row (generated images have no layout file to follow)."""
    return next(
        record
        for path in (out / "images").glob(f"{row['item_id']}-*.json")
        if (record := json.loads(path.read_text(encoding="utf-8")))["job_key"] == row["job_key"]
    )


@pytest.fixture(scope="session")
def tool_data() -> Path:
    """Return the MMMU-Pro screenshot-tool fixture (21 items with figures)."""
    if not TOOL_DATA.is_file():
        pytest.fail(f"fixture missing: {TOOL_DATA}")
    return TOOL_DATA


@pytest.fixture(scope="session")
def mix_data() -> Path:
    """Return the MMMU-Pro mix fixture (1,730 items, text only)."""
    if not MIX_DATA.is_file():
        pytest.fail(f"fixture missing: {MIX_DATA}")
    return MIX_DATA


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Return the system Chromium driven by Playwright (one per test module)."""
    from tests.review_browser import chromium_browser

    yield from chromium_browser()
