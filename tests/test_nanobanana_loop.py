"""The vibe loop end to end: a stand-in returns real renders, clean or defective."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from itemshot.generative.loop import adjustments_for
from itemshot.pipeline import run_jobs
from itemshot.renderer.adapters import load_dataset
from itemshot.renderer.backends.nanobanana.standin import (
    Captured,
    Reply,
    StandIn,
    blocked_reply,
    finish_reply,
    image_reply,
)
from itemshot.renderer.items import Item
from itemshot.renderer.jobs import JobRequest, plan
from itemshot.renderer.output import read_jsonl
from itemshot.renderer.presentation import PresentationSpec
from itemshot.renderer.records import Layout
from itemshot.verify import Reason, RegionScore
from itemshot.verify.verdicts import verdict
from tests import defects
from tests.conftest import SAMPLE_DATA, run_cli, sample_subset

IDS = ("en-change", "ja-sales")
FLAGS = ("--scene", "plain", "--color", "white", "--font-size", "22", "--aspect", "9:16")
SPEC = PresentationSpec(
    scene="plain", color="white", font_style="regular", font_size=22, aspect="9:16"
)


def _png(pixels: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "PNG")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return a two-item dataset (one text-only English item, one Japanese item with a figure)."""
    return sample_subset(tmp_path_factory.mktemp("data"), IDS)


@pytest.fixture(scope="module")
def renders(dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """Return real Chromium renders: each item clean, and ja-sales with three defects."""
    items = {e.id: e for e in load_dataset(dataset).entries if isinstance(e, Item)}
    out = tmp_path_factory.mktemp("renders")
    jobs = plan([JobRequest(items[i], SPEC) for i in IDS], 0)
    run_jobs(jobs, out)
    made: dict[str, bytes] = {}
    for job in jobs:
        pixels = np.asarray(Image.open(out / job.image_path).convert("RGB"))
        made[job.item.id] = _png(pixels)
        if job.item.id != "ja-sales":
            continue
        layout = Layout.from_dict(json.loads((out / job.sidecar_path).read_text())["layout"])
        rng = random.Random(3)
        # Another item's bar chart in the same style: the swap that shares most features.
        other = (SAMPLE_DATA.parent / "figures" / "rainfall.png").read_bytes()
        for name, made_image in (
            ("option_erased", defects.option_removed(pixels, job.item, layout, rng)),
            ("figure_swapped", defects.figure_replaced(pixels, job.item, layout, rng, [other])),
            ("blurred", defects.illegible(pixels, job.item, layout, rng)),
        ):
            assert made_image is not None
            made[name] = _png(made_image[0])
    return made


def _which(captured: Captured) -> str:
    return "ja-sales" if "2023年" in captured.prompt else "en-change"


def _render(dataset: Path, out: Path, server: StandIn, *extra: str) -> int:
    return run_cli(
        "render", dataset, "--out", out, *FLAGS, "--backend", "nanobanana",
        "--api-base", server.base_url, "--backoff-base", "0.01", "--workers", "1",
        "--no-progress", *extra,
    )  # fmt: skip


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Give the run a key (the stand-in ignores it)."""
    monkeypatch.setenv("GEMINI_API_KEY", "secret-test-key")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)


def _rows(out: Path) -> dict[str, dict]:
    rows = read_jsonl(out / "manifest.jsonl")
    assert sorted(r["item_id"] for r in rows) == sorted(IDS)  # every item exactly once
    return {r["item_id"]: r for r in rows}


def test_defective_images_are_regenerated_then_fall_back(
    dataset: Path, renders: dict[str, bytes], tmp_path: Path
) -> None:
    bad = ["option_erased", "figure_swapped", "blurred", "option_erased"]
    served: dict[str, int] = {"ja-sales": 0}

    def script(captured: Captured) -> Reply:
        item = _which(captured)
        if item == "en-change":
            return image_reply(renders["en-change"])
        served["ja-sales"] += 1
        return image_reply(renders[bad[served["ja-sales"] - 1]])

    out = tmp_path / "out"
    with StandIn(script) as server:
        status = _render(dataset, out, server, "--attempts", "4")
        prompts = [c.prompt for c in server.captured if _which(c) == "ja-sales"]
    assert status == 0
    rows = _rows(out)
    clean = rows["en-change"]
    assert (clean["backend"], clean["attempts"], clean["fallback"]) == ("nanobanana", 1, False)
    assert clean["verdict"] == "pass" and (out / clean["image"]).is_file()
    fell = rows["ja-sales"]
    assert (fell["backend"], fell["requested_backend"]) == ("chromium", "nanobanana")
    assert (fell["attempts"], fell["fallback"]) == (4, True)
    assert fell["verdict"] == "pass" and (out / fell["image"]).is_file()
    sidecar = json.loads((out / "images" / f"{Path(fell['image']).stem}.json").read_text())
    assert sidecar["render"]["backend"] == "chromium"  # the fallback is a real Chromium render
    record = json.loads(
        next(
            p.read_text()
            for p in (out / "images").glob("ja-sales-*.json")
            if json.loads(p.read_text())["job_key"] == fell["job_key"]
        )
    )
    attempts = record["render"]["attempts"]
    assert [a["passed"] for a in attempts] == [False] * 4
    assert all(a["verdict"] and not a["verdict"]["passed"] for a in attempts)
    codes = [{r["code"] for r in a["verdict"]["reasons"]} for a in attempts]
    # The erased option's text is also a chart label: its label is what is missing.
    assert codes[0] & {"option_missing", "letter_mismatch"} and "figure_missing" not in codes[0]
    assert codes[1] == {"figure_missing"}  # the swapped chart: text intact, figure not found
    assert "stress_text" in attempts[1]["adjustments"]  # option erased → stress the text
    assert "keep_figure" in attempts[2]["adjustments"]  # figure replaced → reuse it unchanged
    assert "plainer_background" in attempts[3]["adjustments"]  # blurred → plainer, larger
    assert "IMPORTANT: an earlier image left out" in prompts[1]
    assert "IMPORTANT: an earlier image redrew or replaced a figure" in prompts[2]
    assert "redrew or replaced" not in prompts[1]
    assert "plain and uncluttered" in prompts[3]
    cost = json.loads((out / "cost.json").read_text())
    assert cost["total"]["http_requests"] == 5 and cost["total"]["images_by_size"] == {"1K": 5}
    assert cost["total"]["cost"] == pytest.approx(5 * 0.134 + 5 * 560 / 1e6 * 2.0)
    for path in out.rglob("*"):
        if path.is_file():
            assert b"secret-test-key" not in path.read_bytes()


def test_refusals_go_to_fallback_after_the_configured_attempts(
    dataset: Path, tmp_path: Path
) -> None:
    def script(captured: Captured) -> Reply:
        if _which(captured) == "ja-sales":
            return finish_reply("IMAGE_SAFETY")
        return blocked_reply("PROHIBITED_CONTENT")

    out = tmp_path / "out"
    with StandIn(script) as server:
        status = _render(dataset, out, server, "--attempts", "2", "--no-verify")
        assert server.requests == 4
    assert status == 0
    for item_id, reason in (("ja-sales", "IMAGE_SAFETY"), ("en-change", "PROHIBITED_CONTENT")):
        row = _rows(out)[item_id]
        assert (row["backend"], row["fallback"], row["attempts"]) == ("chromium", True, 2)
        record = json.loads(
            next(
                p.read_text()
                for p in (out / "images").glob(f"{item_id}-*.json")
                if json.loads(p.read_text())["job_key"] == row["job_key"]
            )
        )
        outcomes = [a["outcome"] for a in record["render"]["attempts"]]
        assert [(o["kind"], o["reason"]) for o in outcomes] == [("refusal", reason)] * 2


def test_second_run_with_the_cache_makes_no_request(
    dataset: Path, renders: dict[str, bytes], tmp_path: Path
) -> None:
    cache = tmp_path / "cache"

    def script(captured: Captured) -> Reply:
        return image_reply(renders[_which(captured)])

    with StandIn(script) as server:
        first = _render(dataset, tmp_path / "one", server, "--cache", str(cache))
        made = server.requests
        second = _render(dataset, tmp_path / "two", server, "--cache", str(cache))
        again = _render(dataset, tmp_path / "two", server, "--cache", str(cache))
        assert (made, server.requests) == (2, 2)
    assert first == second == again == 0
    one, two = _rows(tmp_path / "one"), _rows(tmp_path / "two")
    for item_id in IDS:
        assert one[item_id]["job_key"] == two[item_id]["job_key"]
        assert two[item_id]["backend"] == "nanobanana" and not two[item_id]["fallback"]
    assert json.loads((tmp_path / "two" / "cost.json").read_text())["http_requests_this_run"] == 0


def test_a_missing_figure_asks_to_reuse_the_attached_figure() -> None:
    found = verdict(
        "x", "ja-sales", "whole_image", "jpn",
        [Reason("figure_missing", "figure:1", "no match")],
        [RegionScore("question", "question", 1.0), RegionScore("figure:1", "figure", 0.1)],
    )  # fmt: skip
    assert adjustments_for(found) == ("keep_figure",)
    blurred = verdict(
        "x", "ja-sales", "whole_image", "jpn",
        [Reason("text_mismatch", "question", "accuracy 0.1")],
        [RegionScore("question", "question", 0.1), RegionScore("option:A", "option", 0.0)],
    )  # fmt: skip
    assert adjustments_for(blurred) == ("larger_font", "plainer_background")
