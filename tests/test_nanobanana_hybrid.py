"""Hybrid mode end to end: Chromium renders the exact item, the model re-photographs it.

The loopback stand-in plays the model: it answers with a real capture
simulation of the render it was sent (a phone photo), or with that render
made defective (its figure swapped for another chart, an option erased).
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import threading
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from itemshot.degradations import capture
from itemshot.renderer.adapters import load_dataset
from itemshot.renderer.backends.nanobanana.standin import Captured, Reply, StandIn, image_reply
from itemshot.renderer.items import Item
from itemshot.renderer.output import read_jsonl
from itemshot.renderer.records import Layout
from tests import defects
from tests.conftest import SAMPLE_DATA, job_sidecar, run_cli, sample_subset

pytestmark = pytest.mark.slow
IDS = ("en-change", "ja-sales")
FLAGS = (
    "--scene", "plain", "--color", "white", "--font-size", "22", "--aspect", "9:16",
    "--capture", "phone_photo_paper", "--severity", "light",
)  # fmt: skip


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return a two-item dataset (one text-only English item, one Japanese item with a figure)."""
    return sample_subset(tmp_path_factory.mktemp("data"), IDS)


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Give the run a key (the stand-in ignores it)."""
    monkeypatch.setenv("GEMINI_API_KEY", "secret-test-key")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)


def _png(pixels: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "PNG")
    return buffer.getvalue()


class Model:
    """The stand-in's model: knows the exact renders by their bytes, answers per item."""

    def __init__(self, out: Path, items: dict[str, Item]) -> None:
        self.out = out
        self.items = items
        self.served: dict[str, int] = {}
        self.bases: dict[str, tuple[str, bytes, Layout]] = {}
        # The client sends several requests at once: the stand-in answers each on
        # its own thread, so the bases are loaded once, under a lock, all together.
        self._lock = threading.Lock()

    def base(self, data: bytes) -> tuple[str, bytes, Layout]:
        """Return (item id, exact render, layout) of a render the client sent."""
        with self._lock:
            if not self.bases:
                folder, loaded = self.out / "hybrid_base", {}
                for row in read_jsonl(folder / "manifest.jsonl"):
                    png = (folder / row["image"]).read_bytes()
                    sidecar = json.loads((folder / row["layout"]).read_text(encoding="utf-8"))
                    layout = Layout.from_dict(sidecar["layout"])
                    loaded[hashlib.sha256(png).hexdigest()] = (row["item_id"], png, layout)
                self.bases = loaded
        return self.bases[hashlib.sha256(data).hexdigest()]

    def __call__(self, captured: Captured) -> Reply:
        item_id, png, layout = self.base(captured.images[0])
        with self._lock:
            self.served[item_id] = self.served.get(item_id, 0) + 1
            served = self.served[item_id]
        if item_id == "en-change":  # a faithful re-photograph: the render, captured by a phone
            return image_reply(capture(png, (), "phone_photo_paper", "light", 3).image)
        pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
        item, rng = self.items[item_id], random.Random(1)
        if served == 1:  # another chart of the same style in the figure's place
            other = (SAMPLE_DATA.parent / "figures" / "rainfall.png").read_bytes()
            made = defects.figure_replaced(pixels, item, layout, rng, [other])
        else:
            made = defects.option_removed(pixels, item, layout, rng)
        assert made is not None
        return image_reply(_png(made[0]))


def test_hybrid_restyles_the_exact_render_and_falls_back_on_defects(
    dataset: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    items = {e.id: e for e in load_dataset(dataset).entries if isinstance(e, Item)}
    model = Model(out, items)
    with StandIn(model) as server:
        status = run_cli(
            "render", dataset, "--out", out, *FLAGS, "--backend", "hybrid",
            "--api-base", server.base_url, "--attempts", "2", "--rpm", "0",
            "--backoff-base", "0.01", "--workers", "1", "--no-progress",
        )  # fmt: skip
        sent = list(server.captured)
    assert status == 0
    assert model.served == {"en-change": 1, "ja-sales": 2}
    assert len(sent) == 3  # every request answered the first time: no retries

    # The request: the restyle prompt with the six parameters, the exact render, the image config.
    bases = {item_id: png for item_id, png, _layout in model.bases.values()}
    for request in sent:
        item_id, png, _layout = model.base(request.images[0])
        assert request.path.endswith(":generateContent")
        parts = request.body["contents"][0]["parts"]
        assert [next(iter(p)) for p in parts] == ["text", "inlineData"]
        inline = parts[1]["inlineData"]  # the SDK spells its mime type field in snake case
        assert inline.get("mime_type", inline.get("mimeType")) == "image/png"
        assert request.images == [bases[item_id]] == [png]
        prompt = request.prompt
        assert prompt.startswith("The attached first image is an exact rendering")
        for words in (
            "plain text straight on a flat background",
            "Background colour: white",
            "a clean regular sans-serif typeface",
            "small margins",
            "photo of the paper taken with a smartphone",
            "Aspect ratio: 9:16 (portrait)",
        ):
            assert words in prompt
        config = request.body["generationConfig"]
        assert config["imageConfig"] == {"aspectRatio": "9:16", "imageSize": "1K"}
        assert "IMAGE" in config["responseModalities"]
    # The base is the clean page; the requested capture is the model's job.
    for row in read_jsonl(out / "hybrid_base" / "manifest.jsonl"):
        assert row["presentation"]["capture"] == "none"

    rows = read_jsonl(out / "manifest.jsonl")
    assert sorted(r["item_id"] for r in rows) == sorted(IDS)  # every item exactly once
    by_id = {r["item_id"]: r for r in rows}
    kept = by_id["en-change"]
    assert (kept["backend"], kept["requested_backend"]) == ("hybrid", "hybrid")
    assert (kept["attempts"], kept["fallback"], kept["verdict"]) == (1, False, "pass")
    assert (out / kept["image"]).is_file() and (out / kept["base_image"]).is_file()
    record = job_sidecar(out, kept)
    assert record["render"]["backend"] == "hybrid" and record["render"]["mode"] == "online"
    [attempt] = record["render"]["attempts"]
    [part] = attempt["request"]["images"]
    assert part["label"] == "exact render"
    assert part["sha256"] == hashlib.sha256((out / kept["base_image"]).read_bytes()).hexdigest()

    fell = by_id["ja-sales"]
    assert (fell["backend"], fell["requested_backend"]) == ("chromium", "hybrid")
    assert (fell["attempts"], fell["fallback"], fell["verdict"]) == (2, True, "pass")
    attempts = job_sidecar(out, fell)["render"]["attempts"]
    codes = [{r["code"] for r in a["verdict"]["reasons"]} for a in attempts]
    assert codes[0] == {"figure_missing"}  # the swapped chart, text intact
    # The erased option's text is still in the chart's labels: its label is what is missing.
    assert codes[1] & {"option_missing", "letter_mismatch"} and "figure_missing" not in codes[1]
    assert "keep_figure" in attempts[1]["adjustments"]
    asked = [r.prompt for r in sent if model.base(r.images[0])[0] == "ja-sales"]
    assert "redrew or replaced a figure" in asked[1] and "redrew" not in asked[0]
    cost = json.loads((out / "cost.json").read_text(encoding="utf-8"))
    assert cost["total"]["http_requests"] == 3 and cost["total"]["images_by_size"] == {"1K": 3}
