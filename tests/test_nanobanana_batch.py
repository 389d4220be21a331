"""Batch API mode against the loopback stand-in: rounds of batch jobs, polls, cache, prices.

Polling runs with a zero interval: when a batch ends is decided by the
stand-in's plan (how many polls it stays running), never by sleeping.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from itemshot.generative.run import GenerativeOptions, render_generative
from itemshot.pipeline import run_jobs
from itemshot.renderer.adapters import load_dataset
from itemshot.renderer.backends.nanobanana.batch import BatchClient, BatchSettings
from itemshot.renderer.backends.nanobanana.client import ClientSettings, ImageClient
from itemshot.renderer.backends.nanobanana.prompt import build_request
from itemshot.renderer.backends.nanobanana.standin import (
    BatchPlan,
    Captured,
    Reply,
    StandIn,
    error_reply,
    finish_reply,
    image_reply,
)
from itemshot.renderer.items import Item
from itemshot.renderer.jobs import JobRequest, plan
from itemshot.renderer.output import read_jsonl
from itemshot.renderer.presentation import Presentation, PresentationSpec
from tests.conftest import SAMPLE_DATA, job_sidecar, run_cli, sample_subset

pytestmark = pytest.mark.slow
IDS = ("en-change", "ja-sales")
MODEL = "gemini-3-pro-image-preview"
FLAGS = ("--scene", "plain", "--color", "white", "--font-size", "22", "--aspect", "9:16")
SPEC = PresentationSpec(
    scene="plain", color="white", font_style="regular", font_size=22, aspect="9:16"
)
BATCH_PRICE = 0.134 * 0.5
BATCH_TOKENS = 560 / 1e6 * 2.0 * 0.5


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return a two-item dataset (one text-only English item, one Japanese item with a figure)."""
    return sample_subset(tmp_path_factory.mktemp("data"), IDS)


@pytest.fixture(scope="module")
def items(dataset: Path) -> dict[str, Item]:
    """Return the dataset's items by id."""
    return {e.id: e for e in load_dataset(dataset).entries if isinstance(e, Item)}


@pytest.fixture(scope="module")
def renders(items: dict[str, Item], tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """Return a real Chromium render of each item: what a faithful model would draw."""
    out = tmp_path_factory.mktemp("renders")
    jobs = plan([JobRequest(items[i], SPEC) for i in IDS], 0)
    run_jobs(jobs, out)
    made = {}
    for job in jobs:
        pixels = np.asarray(Image.open(out / job.image_path).convert("RGB"))
        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, "PNG")
        made[job.item.id] = buffer.getvalue()
    return made


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Give the run a key (the stand-in ignores it)."""
    monkeypatch.setenv("GEMINI_API_KEY", "secret-test-key")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)


def _which(captured: Captured) -> str:
    return "ja-sales" if "2023年" in captured.prompt else "en-change"


def _render(dataset: Path, out: Path, server: StandIn, *extra: str) -> int:
    return run_cli(
        "render", dataset, "--out", out, *FLAGS, "--backend", "nanobanana", "--batch",
        "--poll-interval", "0", "--rpm", "0", "--api-base", server.base_url,
        "--backoff-base", "0.01", "--workers", "1", "--no-progress", *extra,
    )  # fmt: skip


def test_batch_run_completes_every_item_at_batch_prices_and_reruns_free(
    dataset: Path, renders: dict[str, bytes], items: dict[str, Item], tmp_path: Path
) -> None:
    def script(captured: Captured) -> Reply:
        return image_reply(renders[_which(captured)])

    cache = str(tmp_path / "cache")
    with StandIn(script, BatchPlan(polls=2)) as server:
        status = _render(dataset, tmp_path / "one", server, "--cache", cache)
        log = list(server.http_log)
        sent = list(server.captured)
        again = _render(dataset, tmp_path / "two", server, "--cache", cache)
        assert server.http_requests == len(log)  # the second run sent nothing at all
    assert status == again == 0
    # One batch: its creation, two polls while it runs, one that finds it done.
    path = f"/v1beta/models/{MODEL}:batchGenerateContent"
    assert log == [("POST", path)] + [("GET", "/v1beta/batches/standin-1")] * 3
    assert sorted(_which(c) for c in sent) == sorted(IDS) and {c.batch for c in sent} == {
        "batches/standin-1"
    }
    japanese = next(c for c in sent if _which(c) == "ja-sales")
    assert japanese.images == [items["ja-sales"].figures[1].data]
    config = japanese.body["generationConfig"]
    assert config["imageConfig"] == {"aspectRatio": "9:16", "imageSize": "1K"}

    out = tmp_path / "one"
    rows = read_jsonl(out / "manifest.jsonl")
    assert sorted(r["item_id"] for r in rows) == sorted(IDS)  # every item exactly once
    for row in rows:
        assert (row["backend"], row["attempts"], row["fallback"]) == ("nanobanana", 1, False)
        render = job_sidecar(out, row)["render"]
        [attempt] = render["attempts"]
        assert render["mode"] == "batch" and attempt["outcome"]["batch"] == "batches/standin-1"
        request = next(c for c in sent if _which(c) == row["item_id"])
        assert request.metadata == {"key": attempt["request_key"]}  # how answers map back
    cost = json.loads((out / "cost.json").read_text(encoding="utf-8"))
    assert cost["batch"] is True and cost["prices"]["batch_factor"] == 0.5
    assert (cost["total"]["http_requests"], cost["total"]["batches"]) == (4, 1)
    assert cost["batches"][0]["polls"] == 3 and cost["batches"][0]["state"] == "JOB_STATE_SUCCEEDED"
    assert cost["total"]["cost"] == pytest.approx(2 * BATCH_PRICE + 2 * BATCH_TOKENS)
    rerun = json.loads((tmp_path / "two" / "cost.json").read_text(encoding="utf-8"))
    assert rerun["http_requests_this_run"] == 0 and rerun["total"]["batches"] == 0
    assert [r["backend"] for r in read_jsonl(tmp_path / "two" / "manifest.jsonl")] == [
        "nanobanana"
    ] * 2


def test_failed_batch_and_refusals_go_to_the_next_round_then_fall_back(
    renders: dict[str, bytes], items: dict[str, Item], tmp_path: Path
) -> None:
    """Round 1's batch fails as a whole; round 2 refuses ja-sales; round 3 answers it 400."""

    def batches(number: int) -> BatchPlan:
        return BatchPlan(polls=1, final="BATCH_STATE_FAILED") if number == 0 else BatchPlan()

    def script(captured: Captured) -> Reply:
        item = _which(captured)
        if item == "en-change":
            return image_reply(renders[item])
        return (
            finish_reply("IMAGE_SAFETY")
            if captured.batch == "batches/standin-2"
            else (error_reply(400, "image too large"))
        )

    with StandIn(script, batches) as server:
        options = GenerativeOptions(
            backend="nanobanana",
            client=ClientSettings(api_base=server.base_url, requests_per_minute=0),
            attempts=4,
            batch=BatchSettings(poll_interval=0),
            workers=1,
            verify_fallback=False,
        )
        requests = [JobRequest(items[i], SPEC) for i in IDS]
        result = render_generative(requests, tmp_path / "out", options, api_key="test-key")
        # Three rounds (the 400 ends ja-sales' loop before a fourth): create + polls each.
        assert list(server.batches) == [f"batches/standin-{n}" for n in (1, 2, 3)]
        assert server.http_requests == (1 + 2) + (1 + 1) + (1 + 1)
        assert [len([c for c in server.captured if c.batch == b]) for b in server.batches] == [
            2,
            2,
            1,
        ]
    assert result.status == 0
    rows = {r["item_id"]: r for r in result.manifest}
    assert sorted(rows) == sorted(IDS)
    kept, fell = rows["en-change"], rows["ja-sales"]
    assert (kept["backend"], kept["attempts"], kept["fallback"]) == ("nanobanana", 2, False)
    assert (fell["backend"], fell["requested_backend"]) == ("chromium", "nanobanana")
    assert (fell["attempts"], fell["fallback"]) == (3, True)
    outcomes = [a["outcome"] for a in job_sidecar(tmp_path / "out", fell)["render"]["attempts"]]
    assert [(o["kind"], o["reason"], o["error_code"]) for o in outcomes] == [
        ("error", "ERROR", None),  # the whole batch failed: asked again next round
        ("refusal", "IMAGE_SAFETY", None),
        ("error", "ERROR", 400),  # a request the service rejects: not asked again
    ]
    assert "BATCH_STATE_FAILED" in outcomes[0]["error"] or "FAILED" in outcomes[0]["error"]
    cost = json.loads((tmp_path / "out" / "cost.json").read_text(encoding="utf-8"))
    assert cost["total"]["images_by_size"] == {"1K": 1}
    assert cost["total"]["http_requests"] == 7 and cost["total"]["batches"] == 3


def test_large_rounds_are_split_into_several_batches(items: dict[str, Item]) -> None:
    requests = [
        build_request(items[i], Presentation(), model=MODEL, seed=n) for n, i in enumerate(IDS * 2)
    ]
    png = io.BytesIO()
    Image.new("RGB", (8, 8), "white").save(png, "PNG")

    def script(captured: Captured) -> Reply:
        return image_reply(png.getvalue())

    with StandIn(script) as server:
        settings = ClientSettings(api_base=server.base_url, requests_per_minute=0)

        async def go() -> list:
            client = BatchClient(
                ImageClient(settings, "test-key"), BatchSettings(poll_interval=0, max_bytes=1)
            )
            return await client.generate_all(requests)

        outcomes = asyncio.run(go())
        assert len(server.batches) == 4  # one request per batch at this size limit
        by_batch = {c.batch: c.metadata["key"] for c in server.captured}
    assert [o.kind for o in outcomes] == ["image"] * 4
    assert sorted(by_batch.values()) == sorted(r.key() for r in requests)
    assert {o.batch for o in outcomes} == set(by_batch)


def test_dry_run_prints_the_batch_price_estimate(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    with StandIn(lambda _c: error_reply(500)) as server:
        status = run_cli(
            "render", SAMPLE_DATA, "--out", tmp_path / "out", "--backend", "nanobanana",
            "--batch", "--api-base", server.base_url, "--limit", "4",
            "--resolution", "1024,4096", "--attempts", "3", "--dry-run",
        )  # fmt: skip
        assert server.http_requests == 0
    printed = capsys.readouterr().out
    assert status == 0
    # Half of list price: 4 × $0.134 / 2 + 4 × $0.24 / 2 = $0.748; at most ×3.
    assert "8 model calls" in printed and "$0.75 at batch prices (0.5 × list price)" in printed
    assert "24 calls / $2.24" in printed and "published list prices and batch discount" in printed
