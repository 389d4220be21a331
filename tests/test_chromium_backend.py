"""The Chromium backend's guard rails: no network, no stray files, math errors, fitting."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from itemshot.fonts.catalogue import choose_fonts
from itemshot.renderer.backends.chromium import ChromiumPool, RenderFailure
from itemshot.renderer.output import read_jsonl
from itemshot.renderer.page import PageDocument
from tests.conftest import run_cli


def document(body: str) -> PageDocument:
    html = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
        f"<main id='content'><div data-region='question'><span class='t'>x</span></div>{body}</main>"
        "<script src='/static/itemshot/page.js'></script></body></html>"
    )
    return PageDocument(
        html=html,
        assets={},
        css_width=400,
        css_height=300,
        device_scale=1.0,
        min_scale=0.5,
        fonts=choose_fonts("regular", "en"),
        decor={},
        placeholders=(),
    )


@pytest.mark.parametrize(
    "body",
    [
        "<img src='http://example.com/track.png'>",
        "<img src='file:///etc/hostname'>",
        "<link rel='stylesheet' href='/static/itemshot/../../pyproject.toml'>",
        "<img src='/job/fig-not-registered'>",
        "<iframe src='https://example.org/'></iframe>",
    ],
)
def test_any_request_outside_the_job_assets_fails_the_job(body: str) -> None:
    async def attempt() -> str:
        async with ChromiumPool(1, 1) as pool:
            with pytest.raises(RenderFailure) as failure:
                await pool.render(document(body))
            # The slot is clean again: the next job renders.
            ok = await pool.render(document(""))
            assert ok.png.startswith(b"\x89PNG")
            return failure.value.reason

    assert asyncio.run(attempt()) in {"forbidden_request", "figure_not_shown"}


def write_items(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    return path


def test_latex_errors_and_overflow_are_recorded_not_hidden(tmp_path: Path) -> None:
    options = ["one", "two", "three", "four"]
    rows = [
        {"id": "good-math", "question": r"Evaluate $\frac{1}{2} + \sqrt{x}$.", "options": options,
         "answer": "A"},
        {"id": "bad-math", "question": r"Evaluate $\frac{1}{2$ now.", "options": options,
         "answer": "A"},
        {"id": "shrinks", "question": "How long is this? " * 60, "options": options, "answer": "A"},
        {"id": "too-long", "question": "Far too long. " * 700, "options": options, "answer": "A"},
    ]  # fmt: skip
    dataset = write_items(tmp_path / "items.jsonl", rows)
    out = tmp_path / "out"
    status = run_cli("render", dataset, "--out", out, "--aspect", "16:9", "--font-size", "28",
                     "--no-progress", "--no-verify")  # fmt: skip
    assert status == 3
    manifest = {r["item_id"]: r for r in read_jsonl(out / "manifest.jsonl")}
    assert manifest["good-math"]["status"] == "ok"
    sidecar = json.loads((out / manifest["good-math"]["layout"]).read_text())
    question = next(r for r in sidecar["layout"]["regions"] if r["name"] == "question")
    assert question["math"] == [r"\frac{1}{2} + \sqrt{x}"]
    assert manifest["bad-math"]["error"]["reason"] == "latex_error"
    assert manifest["shrinks"]["status"] == "ok" and manifest["shrinks"]["font_scale"] < 1
    assert manifest["too-long"]["error"]["reason"] == "does_not_fit"


def test_japanese_text_uses_a_japanese_font(tmp_path: Path) -> None:
    rows = [{"id": "ja", "question": "日本の首都はどこですか。", "options": ["大阪", "東京"],
             "answer": "B"}]  # fmt: skip
    out = tmp_path / "out"
    assert run_cli("render", write_items(tmp_path / "ja.jsonl", rows), "--out", out,
                   "--font-style", "regular,handwritten", "--no-progress", "--no-verify") == 0  # fmt: skip
    for row in read_jsonl(out / "manifest.jsonl"):
        layout = json.loads((out / row["layout"]).read_text())["layout"]
        question = next(r for r in layout["regions"] if r["name"] == "question")
        assert set(question["fonts"]) <= {"Noto Sans CJK JP", "Klee One"}, question["fonts"]
        assert question["fonts"]


def test_shrinking_stops_at_the_verifiers_legible_x_height(tmp_path: Path) -> None:
    """Long items shrink down to, never under, the x-height the verifier reads as legible."""
    from itemshot.verify import DEFAULT_THRESHOLDS

    options = ["one", "two", "three", "four"]
    rows = [{"id": f"len-{n}", "question": "How long is this question? " * n, "options": options,
             "answer": "A"} for n in range(80, 200, 15)]  # fmt: skip
    out = tmp_path / "out"
    run_cli("render", write_items(tmp_path / "items.jsonl", rows), "--out", out,
            "--aspect", "16:9", "--font-size", "20", "--font-style", "regular,handwritten,comic",
            "--no-progress", "--no-verify")  # fmt: skip
    manifest = list(read_jsonl(out / "manifest.jsonl"))
    shown = [row for row in manifest if row["status"] == "ok"]
    x_heights = [row["measures"]["x_height_px"] for row in shown]
    assert min(x_heights) >= DEFAULT_THRESHOLDS.x_height_px
    assert min(x_heights) < DEFAULT_THRESHOLDS.x_height_px + 1  # the floor was reached
    failed = [row["error"]["reason"] for row in manifest if row["status"] != "ok"]
    assert failed and set(failed) == {"does_not_fit"}
