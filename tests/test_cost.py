"""Image tokens per cell: each family's published formula, the bill, and the report's table."""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw
from test_predict import StandIn, main, write_manifest

from itemshot.cli.plan import register as register_plan
from itemshot.factorial.analysis.cost import (
    FAMILIES,
    Request,
    billed_images,
    billed_input,
    cell_costs,
    family_of,
    image_tokens,
)

# Worked examples each vendor publishes for its formula.
PUBLISHED = [
    # OpenAI: 1024² scales to 768², 4 tiles; 2048×4096 to 768×1536, 6 tiles; 512² is one tile.
    ("openai", 1024, 1024, 765),
    ("openai", 2048, 4096, 1105),
    ("openai", 512, 512, 255),
    # Anthropic: 1000 × 1000 / 750 ≈ 1334; 200 × 200 ≈ 54; past 1568 px the image shrinks first.
    ("anthropic", 1000, 1000, 1334),
    ("anthropic", 200, 200, 54),
    ("anthropic", 3000, 3000, 1534),
    # Qwen2-VL: sides rounded to 28 px; 1024² is 37 × 37 patches; 224² is 8 × 8; tiny images grow.
    ("qwen2-vl", 1024, 1024, 1369),
    ("qwen2-vl", 224, 224, 64),
    ("qwen2-vl", 20, 20, 4),
    # Gemini: up to 384 px on both sides one 258-token image, above it 768-px tiles.
    ("gemini", 384, 384, 258),
    ("gemini", 1024, 768, 516),
    ("gemini", 1536, 1536, 1032),
]


@pytest.mark.parametrize(("family", "width", "height", "tokens"), PUBLISHED)
def test_published_formulas(family: str, width: int, height: int, tokens: int) -> None:
    assert image_tokens(width, height, family) == tokens


def test_families_are_named_from_the_model_and_unknowns_refused() -> None:
    assert family_of("gpt-4o-2024-08-06") == "openai"
    assert family_of("claude-sonnet-4-5") == "anthropic"
    assert family_of("Qwen/Qwen2-VL-7B-Instruct") == "qwen2-vl"
    assert family_of("gemini-2.5-flash") == "gemini"
    assert family_of("stand-in-model") is None
    with pytest.raises(ValueError, match="unknown model family"):
        image_tokens(10, 10, "llava")


def test_billed_tokens_are_read_from_each_api_usage() -> None:
    openai = {"prompt_tokens": 812, "completion_tokens": 3}
    gemini = {"prompt_token_count": 1300, "prompt_tokens_details": [
        {"modality": "TEXT", "token_count": 42}, {"modality": "IMAGE", "token_count": 1258}]}  # fmt: skip
    assert (billed_input(openai), billed_images(openai)) == (812, None)
    assert (billed_input(gemini), billed_images(gemini)) == (1300, 1258)
    assert (billed_input({}), billed_images({})) == (None, None)


def test_cells_use_the_bill_when_it_breaks_out_images_else_the_estimate() -> None:
    gemini = {"prompt_token_count": 300, "prompt_tokens_details": [
        {"modality": "IMAGE", "token_count": 258}]}  # fmt: skip
    requests = [
        Request("small", ((300, 400),), gemini, "gemini-2.5-flash", True),
        Request("small", ((300, 400),), gemini, "gemini-2.5-flash", False),
        Request("large", ((1536, 2048),), {"prompt_tokens": 900}, "gpt-4o", True),
    ]
    large, small = cell_costs(requests)
    assert (small.image_tokens, small.source, small.accuracy) == (258, "billed", 0.5)
    assert large.billed_input == 900 and large.billed_image is None
    assert large.source == "estimated, openai formula"
    assert large.image_tokens == image_tokens(1536, 2048, "openai")
    assert set(large.estimated) == set(FAMILIES)


SIZES = (1024, 768, 512)  # the first level written is the reference (ties go to it)
CHANCE = {1024: 0.8, 768: 0.65, 512: 0.5}  # the stand-in's accuracy at each delivered size
N_ITEMS = 24


def _deliver_size_sweep(out: Path) -> list[dict[str, Any]]:
    """Write a one-factor deliver-size ablation: each item's page delivered at three sizes."""
    rows = []
    (out / "images").mkdir(parents=True)
    for number in range(N_ITEMS):
        for size in SIZES:
            name = f"images/item{number}_{size}.png"
            page = Image.new("RGB", (size * 3 // 4, size), "white")
            ImageDraw.Draw(page).text((10, 10), f"question {number}", fill="black")
            page.save(out / name)
            rows.append({
                "job_key": f"item{number}|{size}", "item_id": f"item{number}", "status": "ok",
                "format": "vision", "options": ["1", "2", "3", "4"], "answer": "A",
                "question": f"question {number}", "image": name, "n_options": 4,
                "condition": {"format": "vision", "n_options": 4, "deliver_size": size},
                "presentation": {"deliver_size": size},
            })  # fmt: skip
    return rows


def plan_main(argv: list[str]) -> int:
    """Run `itemshot plan` exactly as `itemshot` dispatches it."""
    parser = argparse.ArgumentParser(prog="itemshot")
    register_plan(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.handler(args) or 0)


def test_report_of_a_deliver_size_ablation_shows_tokens_per_cell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sweep"
    write_manifest(out, _deliver_size_sweep(out))

    def answer(body: dict[str, Any]) -> str:
        # Right more often on a larger image; which items, by a hash of the image's bytes.
        encoded = next(
            part["image_url"]["url"].split(",", 1)[1]
            for part in body["messages"][0]["content"]
            if part["type"] == "image_url"
        )
        data = base64.b64decode(encoded)
        with Image.open(io.BytesIO(data)) as page:
            chance = CHANCE[max(page.size)]
        draw = int.from_bytes(hashlib.sha256(data).digest()[:4], "big") / 2**32
        return "Answer: A" if draw < chance else "Answer: B"

    with StandIn([], answer) as server:
        assert main(["predict", str(out), "--endpoint", server.endpoint, "--model", "stand-in",
                     "--retry-delay", "0.01"]) == 0  # fmt: skip
    report = tmp_path / "report"
    assert main(["analyze", str(out / "predictions.jsonl"), "--sets", str(out),
                 "--report", str(report), "--bootstrap", "200"]) == 0  # fmt: skip
    assert (report / "tokens.png").stat().st_size > 0
    results = json.loads((report / "results.json").read_text(encoding="utf-8"))
    costs = {c["cell"]: c for c in results["runs"][0]["costs"]}
    assert len(costs) == len(SIZES)
    by_size = {}
    for cost in costs.values():
        reference = int(results["runs"][0]["references"]["deliver_size"])
        size = int(cost["level"]) if cost["factor"] == "deliver_size" else reference
        by_size[size] = cost
        # The stand-in bills 11 prompt tokens and no image breakdown: images are estimated
        # from the delivered sizes, here by OpenAI's formula (the model names no family).
        assert cost["billed_input"] == 11 and cost["billed_image"] is None
        assert cost["source"].startswith("estimated, openai formula")
        assert cost["n"] == N_ITEMS
        for family in FAMILIES:
            assert cost["estimated"][family] == image_tokens(size * 3 // 4, size, family)
    assert sorted(by_size) == sorted(SIZES)
    assert by_size[512]["image_tokens"] < by_size[1024]["image_tokens"]
    markdown = (report / "report.md").read_text(encoding="utf-8")
    assert "image tokens per cell" in markdown and "![tokens](tokens.png)" in markdown
    for size in SIZES:
        assert f"{by_size[size]['image_tokens']:.0f}" in markdown
    # The model of the same run states each contrast's smallest detectable effect.
    effects = results["runs"][0]["model_effects"]["effects"]
    assert {e["level"] for e in effects} == {"768", "512"}
    assert all(e["reference"] == "1024" and "detectable" in e for e in effects)
    assert "detectable at 80% power" in markdown and "p Holm" in markdown

    # The same predictions as a pilot: `plan` measures each contrast's discordant pairs.
    verdicts = {}
    for line in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        item, size = record["condition_id"].split("|")
        verdicts[(item, int(size))] = record["response"].strip() == "Answer: A"
    design = tmp_path / "design.yaml"
    design.write_text(
        "name: sizes\ndesign: one_at_a_time\ndataset: {path: 'itemshot:sample'}\n"
        "factors: {format: [vision], n_options: [4], deliver_size: [1024, 768, 512]}\n"
        "reference: {deliver_size: 1024}\n",
        encoding="utf-8",
    )
    capsys.readouterr()  # what predict and analyze printed
    assert plan_main(["plan", str(design), "--predictions", str(out / "predictions.jsonl"),
                      "--sets", str(out), "--items", "100", "--json"]) == 0  # fmt: skip
    plans = {p["level"]: p for p in json.loads(capsys.readouterr().out)}
    for size in (768, 512):
        items = [f"item{n}" for n in range(N_ITEMS)]
        by_hand = sum(verdicts[(i, size)] != verdicts[(i, 1024)] for i in items) / N_ITEMS
        assert plans[str(size)]["discordant"] == pytest.approx(by_hand)
        assert plans[str(size)]["available"] == 100
