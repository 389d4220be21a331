"""Regenerating one image from the review app: a new attempt, written beside the old image.

- **Chromium** is deterministic, so a new attempt needs a new seed: the
  attempt seed is derived from the job's first seed and the attempt number
  (`derive_seed(base_seed, "review", n)`). It changes what the seed samples
  within the same presentation — scene decorations (exam numbers, point
  values, rulings, variants) and every capture parameter — and never the
  presentation itself, which is the experimental condition. The new job has
  its own key, so its image and sidecar get new names; the old ones stay.
  In a scene with no decorations and no capture a new seed changes nothing:
  the result says `identical` rather than pretending otherwise.
- **Nano Banana** (and hybrid) asks the model for the job's next attempt
  through the generative loop's own step (`backend.render` → `judge`), its
  prompt adjusted by the reviewer's rejection reason and the verifier's
  reasons, its seed derived from the job seed and the attempt number.

Either way the new image is verified like the rest of the set, and the
manifest fields it brings (image, layout, verdict, …) are returned for the
`regenerate` decision that records it.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from itemshot.executors.base import produce
from itemshot.factorial.review.log import REPLACED_FIELDS
from itemshot.outputs import ManifestRow, bytes_sha256
from itemshot.pipeline import write_result
from itemshot.renderer.backends import Backend, RenderFailure
from itemshot.renderer.jobs import Content, Job, job_key
from itemshot.renderer.output import atomic_write, atomic_write_json, write_figure_files
from itemshot.renderer.presentation import Presentation, PresentationError
from itemshot.renderer.seeds import derive_seed
from itemshot.review.records import reasons_of, region_scores, verdict_of, verify_record

GENERATIVE = ("nanobanana", "hybrid")
# What a reviewer's rejection reason asks of the model's next attempt.
REASON_ADJUSTMENTS: dict[str, tuple[str, ...]] = {
    "text_wrong": ("stress_text",),
    "number_wrong": ("stress_text",),
    "option_wrong": ("stress_text",),
    "layout_broken": ("stress_text", "larger_font"),
    "figure_wrong": ("keep_figure",),
    "unreadable": ("larger_font", "plainer_background"),
}


class RegenerationFailed(RuntimeError):
    """The new attempt produced no image (a refusal, a render failure, no API key)."""


def _item(row: Mapping[str, Any], out: Path) -> Any:
    from itemshot.verify.output_set import item_from_row

    return item_from_row(dict(row), out)


def _job(row: Mapping[str, Any], out: Path, seed: int, key: str | None) -> Job:
    """Return the job of a manifest row, with a given seed (and key: None derives it)."""
    try:
        presentation = Presentation(**dict(row.get("presentation") or {}))
    except (PresentationError, TypeError) as error:
        raise RegenerationFailed(f"the row's presentation cannot be rebuilt: {error}") from None
    content_record = row.get("content")
    content = Content(**content_record) if isinstance(content_record, Mapping) else Content()
    condition = dict(row.get("condition") or {})
    item = _item(row, out)
    key = key or job_key(item, presentation, condition, content, seed)
    return Job(item, presentation, condition, seed, key, content)


def _verdict_record(row: Mapping[str, Any]) -> Any:
    """Return the row's verdict as a `Verdict` (for the loop's prompt adjustments)."""
    from itemshot.verify import Reason, RegionScore, Verdict

    reasons = tuple(
        Reason(r["code"], r["region"], r["detail"], tuple(r.get("tokens", ())))
        for r in reasons_of(row)
    )
    regions = tuple(
        RegionScore(name, name.split(":", 1)[0], score)
        for name, score in region_scores(row).items()
    )
    record = verify_record(row)
    return Verdict(
        image=str(row.get("image") or ""),
        item_id=str(row.get("item_id") or ""),
        passed=verdict_of(row) == "pass",
        mode=str(record.get("mode") or ""),
        lang=str(record.get("lang") or ""),
        reasons=reasons,
        regions=regions,
    )


class Regenerator:
    """Makes new attempts for an output set's jobs, one at a time, with backends kept warm."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self._lock = asyncio.Lock()
        self._chromium: Backend | None = None

    async def close(self) -> None:
        """Stop the browser a Chromium regeneration started."""
        if self._chromium is not None:
            await self._chromium.__aexit__(None, None, None)
            self._chromium = None

    async def regenerate(self, row: Mapping[str, Any], reason: str = "") -> dict[str, Any]:
        """Return the manifest fields of a new image for the row's job (written to disk)."""
        backend = str(row.get("requested_backend") or row.get("backend") or "chromium")
        async with self._lock:
            if backend in GENERATIVE:
                return await self._generative(row, backend, reason)
            return await self._chromium_attempt(row)

    # -- Chromium ---------------------------------------------------------------

    async def _browser(self) -> Backend:
        if self._chromium is None:
            from itemshot.renderer.backends.chromium import ChromiumBackend

            backend = ChromiumBackend(1, 1)
            await backend.__aenter__()
            self._chromium = backend
        return self._chromium

    async def _chromium_attempt(self, row: Mapping[str, Any]) -> dict[str, Any]:
        previous = dict(row.get("regeneration") or {})
        attempt = int(previous.get("attempt") or 0) + 1
        base_seed = int(previous.get("base_seed", row.get("seed") or 0))
        seed = derive_seed(base_seed, "review", attempt)
        job = _job(row, self.out, seed, None)
        result = await produce(await self._browser(), job)
        if not result.ok:
            message = (result.error or {}).get("message", "the render failed")
            raise RegenerationFailed(f"attempt {attempt}: {message}")
        new_row = await asyncio.to_thread(write_result, self.out, result)
        new_row = await asyncio.to_thread(self._verify_chromium, job, new_row)
        old = self.out / str(row["image"])
        identical = old.is_file() and old.read_bytes() == result.image
        new_row = new_row.with_fields(
            regeneration={
                "attempt": attempt,
                "backend": "chromium",
                "base_seed": base_seed,
                "seed": seed,
                "key": job.key,
                "from_image": str(row["image"]),
                "identical": identical,
            }
        )
        return _replacement(new_row)

    def _verify_chromium(self, job: Job, row: ManifestRow) -> ManifestRow:
        """Verify the new render with its layout record; keep the full verdict in its sidecar."""
        from itemshot.renderer.records import Layout
        from itemshot.verify import DEFAULT_THRESHOLDS, verify_image
        from itemshot.verify.output_set import verify_field
        from itemshot.verify.page.images import load_rgb

        sidecar_path = self.out / job.sidecar_path
        sidecar = json.loads(sidecar_path.read_text(encoding="utf-8"))
        result = verify_image(
            load_rgb(self.out / str(row["image"])),
            job.item,
            Layout.from_dict(sidecar["layout"]),
            thresholds=DEFAULT_THRESHOLDS,
            render=sidecar.get("render"),
            image_name=str(row["image"]),
        )
        sidecar["verify"] = result.as_dict()  # the OCR readings, for the item view's diff
        atomic_write_json(sidecar_path, sidecar)
        assert row.image_sha256 is not None  # write_result hashed the bytes it wrote
        record = verify_field(result, DEFAULT_THRESHOLDS)
        return row.with_verdict(result.passed, record, row.image_sha256)

    # -- Nano Banana ------------------------------------------------------------

    async def _generative(
        self, row: Mapping[str, Any], backend: str, reason: str
    ) -> dict[str, Any]:
        from itemshot.generative.loop import Progress, adjustments_for, judge
        from itemshot.renderer.backends import Attempt

        job = _job(row, self.out, int(row.get("seed") or 0), str(row["job_key"]))
        number = int(row.get("attempts") or 0) + 1
        wanted = [*REASON_ADJUSTMENTS.get(reason, ()), *adjustments_for(_verdict_record(row))]
        attempt = Attempt(number, tuple(dict.fromkeys(wanted)))
        model, ledger, drawer = self._model(row, backend)
        async with drawer:
            try:
                result: Any = await drawer.render(job, attempt)
            except RenderFailure as failure:
                result = failure
            judged = await judge(job, Progress(adjustments=attempt.adjustments), result)
        if isinstance(result, RenderFailure):
            raise RegenerationFailed(f"attempt {number}: {result}")
        record = judged.attempts[-1].as_dict() | {"attempt": number}
        return await asyncio.to_thread(
            self._write_generated, row, job, result, record, backend, model, ledger
        )

    def _model(self, row: Mapping[str, Any], backend: str) -> tuple[str, Any, Any]:
        from itemshot.renderer.backends.hybrid import HybridBackend
        from itemshot.renderer.backends.nanobanana.backend import NanobananaBackend
        from itemshot.renderer.backends.nanobanana.cache import ResponseCache
        from itemshot.renderer.backends.nanobanana.client import ImageClient
        from itemshot.renderer.backends.nanobanana.cost import Ledger, PriceTable
        from itemshot.renderer.backends.nanobanana.settings import (
            DEFAULT_MODEL,
            ClientSettings,
            MissingApiKey,
            api_key_from_env,
        )

        try:
            key = api_key_from_env()
        except MissingApiKey as error:
            raise RegenerationFailed(str(error)) from None
        model = str(row.get("model") or DEFAULT_MODEL)
        client = ImageClient(
            ClientSettings(model=model), key, ResponseCache(self.out / ".cache" / "nanobanana")
        )
        ledger = Ledger(PriceTable())
        drawer: Any = NanobananaBackend(client, ledger)
        if backend == "hybrid":
            from itemshot.renderer.backends.chromium import ChromiumBackend

            drawer = HybridBackend(ChromiumBackend(1, 1), drawer)
        return model, ledger, drawer

    def _write_generated(
        self,
        row: Mapping[str, Any],
        job: Job,
        result: Any,
        record: dict[str, Any],
        backend: str,
        model: str,
        ledger: Any,
    ) -> dict[str, Any]:
        from PIL import Image

        from itemshot.renderer.backends.nanobanana.prompt import TEMPLATE_VERSION

        number = int(record["attempt"])
        stem = f"{job.stem}.r{number}"
        image_path, sidecar_path = f"images/{stem}.png", f"images/{stem}.json"
        with Image.open(io.BytesIO(result.image)) as opened:
            size = opened.size
            buffer = io.BytesIO()
            opened.convert("RGB").save(buffer, "PNG")
        old = self.out / str(row["image"])
        png = buffer.getvalue()
        # The same row a generative run writes, so the new image's sidecar has every field.
        new_row = ManifestRow.generated(
            job,
            backend=backend,
            image=image_path,
            image_sha256=bytes_sha256(png),
            size=size,
            attempts=number,
            model=model,
            template_version=TEMPLATE_VERSION,
            passed=bool(record.get("passed")),
            audit=record.get("verdict") or {},
        )
        figure_files = {str(n): p for n, p in write_figure_files(self.out, job.item).items()}
        new_row = new_row.with_fields(
            figure_files=figure_files,
            regeneration={
                "attempt": number,
                "backend": backend,
                "model": model,
                "adjustments": record.get("adjustments", []),
                "from_image": str(row["image"]),
                "identical": old.is_file() and old.read_bytes() == png,
                "cost": ledger.as_dict().get("total", {}),
            },
        )
        atomic_write(self.out / image_path, png)
        atomic_write_json(
            self.out / sidecar_path,
            {"job_key": job.key, "manifest": new_row.to_json(), "layout": None, "render": record},
        )
        return _replacement(new_row)


def _replacement(row: ManifestRow) -> dict[str, Any]:
    """Return the fields a regeneration replaces, and the hash of the new image's bytes."""
    fields = {name: row[name] for name in REPLACED_FIELDS if name in row}
    return fields | {"image_sha256": row.image_sha256}
