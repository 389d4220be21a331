"""Bad input: one clear error per item naming the field, and the rest still render."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from itemshot.renderer.output import read_jsonl
from tests.conftest import run_cli

OPTIONS = ["alpha", "beta", "gamma", "delta"]
UNTRUSTED = {
    "script": "Is <script>document.title='pwned'</script> shown literally?",
    "remote-img": "Does <img src=http://example.com/x.png> load?",
    "close-div": "Does </div></main> break the layout?",
    "jinja": "Is {{ 7*7 }} or {% if 1 %}x{% endif %} evaluated?",
}


def png(size: tuple[int, int] = (60, 40), mode: str = "RGB") -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, size).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def bad_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, dict], Path]:
    root = tmp_path_factory.mktemp("bad")
    data = root / "dataset"
    data.mkdir()
    (data / "ok.png").write_bytes(png())
    (data / "fake.png").write_bytes(b"this is not an image at all")
    (data / "huge.png").write_bytes(png((20000, 20000), mode="1"))
    (root / "outside.png").write_bytes(png())

    def row(item_id: str, **fields: object) -> dict:
        base = {"id": item_id, "question": "Which one is <image 1>?", "options": OPTIONS}
        base |= {"answer": "B", "image_1": "ok.png"}
        return base | fields

    rows = [
        row("good-1"),
        row("missing-file", image_1="nope.png"),
        row("not-an-image", image_1="fake.png"),
        row("no-image-3", question="Compare <image 1> with <image 3>."),
        row("answer-outside", answer="F"),
        row("empty-options", options=[]),
        row("too-many-options", options=[f"option {n}" for n in range(27)]),
        row("duplicate-options", options=["same", "other", "same", "last"]),
        row("dotdot-path", image_1="../outside.png"),
        row("absolute-path", image_1=str(root / "outside.png")),
        row("remote-url", image_1="http://example.com/figure.png"),
        row("huge-image", image_1="huge.png"),
        row("long-question", question="word " * 10_240),
        *(row(f"untrusted-{k}", question=v, image_1=None) for k, v in UNTRUSTED.items()),
        row("good-2", question="Plain question with no figure?", image_1=None),
    ]
    dataset = data / "data.jsonl"
    dataset.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    out = root / "out"
    status = run_cli(
        "render", dataset, "--out", out, "--scene", "webpage", "--no-progress", "--no-verify"
    )
    manifest = {r["item_id"]: r for r in read_jsonl(out / "manifest.jsonl")}
    return status, manifest, out


EXPECTED_ERRORS = {
    "missing-file": ("image_1", "not found"),
    "not-an-image": ("image_1", "not a readable image"),
    "no-image-3": ("image_3", "references <image 3>"),
    "answer-outside": ("answer", "outside the options A–D"),
    "empty-options": ("options", "empty"),
    "too-many-options": ("options", "at most 26"),
    "duplicate-options": ("options", "options A and C are identical"),
    "dotdot-path": ("image_1", "outside the dataset folder"),
    "absolute-path": ("image_1", "outside the dataset folder"),
    "remote-url": ("image_1", "remote URL"),
    "huge-image": ("image_1", "20000×20000"),
    "long-question": ("question", "limit is 10,000"),
}


@pytest.mark.parametrize("item_id", sorted(EXPECTED_ERRORS))
def test_each_bad_item_fails_with_its_field(bad_run: tuple, item_id: str) -> None:
    _, manifest, _ = bad_run
    field, fragment = EXPECTED_ERRORS[item_id]
    row = manifest[item_id]
    assert row["status"] == "failed"
    assert row["error"]["field"] == field
    assert fragment in row["error"]["message"]
    assert row["error"]["item_id"] == item_id


def test_run_completes_the_good_items_and_reports_failure(bad_run: tuple) -> None:
    status, manifest, out = bad_run
    assert status == 3
    for item_id in ("good-1", "good-2", *(f"untrusted-{k}" for k in UNTRUSTED)):
        assert manifest[item_id]["status"] == "ok", manifest[item_id]
        assert (out / manifest[item_id]["image"]).is_file()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["failed"] == len(EXPECTED_ERRORS)
    assert {f["item_id"] for f in summary["failed_items"]} == set(EXPECTED_ERRORS)
    leftovers = [p for p in out.rglob("*") if p.name.startswith(".tmp-")]
    assert leftovers == []


@pytest.mark.parametrize("key", sorted(UNTRUSTED))
def test_untrusted_text_appears_as_literal_characters(bad_run: tuple, key: str) -> None:
    _, manifest, out = bad_run
    row = manifest[f"untrusted-{key}"]
    sidecar = json.loads((out / row["layout"]).read_text())
    question = next(r for r in sidecar["layout"]["regions"] if r["name"] == "question")
    assert question["text"] == UNTRUSTED[key]
