"""The review web app: a Starlette application over one output set.

Pages (Jinja2, autoescaped): the queue (`/`), an item (`/item/{n}`), progress,
verifier precision/recall and agreement (`/stats`), reviewer conflicts
(`/conflicts`), the certified review (`/certify`). JSON endpoints take
decisions (`POST /api/decisions`), bulk accepts of a filtered selection
(`/api/bulk`), undo (`/api/undo`), regenerations (`/api/regenerate`) and
the certified review's sample and acceptance (`/api/certify/...`);
`/files/...` serves the set's images and nothing else.
Every request passes `security.Guard` first.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
import zlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jinja2
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from itemshot.factorial.review.log import (
    REJECT_REASONS,
    VERDICTS,
    Decision,
    DecisionError,
    utc_now,
)
from itemshot.review import certify, stats
from itemshot.review.actions import bulk_accepts, certified_accepts, undos
from itemshot.review.diff import text_diff
from itemshot.review.files import IMAGE_TYPES, servable
from itemshot.review.index import FACETS, Entry, Query, ReviewIndex
from itemshot.review.payloads import (
    BulkRequest,
    DecisionRequest,
    DrawRequest,
    GrowRequest,
    Refused,
    RegenerationRequest,
    UndoRequest,
    read_json_object,
)
from itemshot.review.records import (
    audit_verdicts,
    read_json,
    reasons_of,
    region_readings,
    region_scores,
    verify_record,
)
from itemshot.review.regenerate import RegenerationFailed, Regenerator
from itemshot.review.security import Access, Guard

HERE = Path(__file__).parent
FILTERS = ("status", "verdict", "reason", *FACETS, "sample", "reviewer")


@dataclass
class Review:
    """Everything the routes share: the set, its index, who reviews, the regenerator."""

    out: Path
    index: ReviewIndex
    reviewer: str
    access: Access
    regenerator: Regenerator
    root: Path = field(init=False)
    # One regeneration at a time: a second request for the same image waits, then
    # finds the image replaced (409) instead of making the same attempt again.
    regenerating: asyncio.Lock = field(default_factory=asyncio.Lock)
    _readings: dict[str, bytes] | None = None
    _readings_lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.root = self.out.resolve()

    def audit_readings(self, image: str) -> list[dict[str, Any]]:
        """Return the OCR readings of an image from audit.json (loaded once, kept compressed)."""
        with self._readings_lock:
            if self._readings is None:
                self._readings = {
                    name: zlib.compress(json.dumps(readings).encode("utf-8"))
                    for name, readings in audit_verdicts(self.out / "audit.json")
                }
            packed = self._readings.get(image)
        if packed is None:
            return []
        return list(json.loads(zlib.decompress(packed)))

    def inside(self, relative: str | None) -> Path | None:
        """Return a set-relative path as a real path inside the set (None when it is not)."""
        if not relative:
            return None
        try:
            real = (self.root / relative).resolve()
        except (OSError, RuntimeError):
            return None
        return real if real.is_relative_to(self.root) and real.is_file() else None


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # every template, whatever its name: item text is untrusted
        undefined=jinja2.StrictUndefined,
    )
    env.filters["percent"] = lambda v: "—" if v is None else f"{100 * v:.0f}%"
    env.filters["score"] = lambda v: "—" if v is None else f"{v:.2f}"
    env.filters["seconds"] = lambda v: "—" if v is None else f"{v:.1f} s"
    env.filters["kappa"] = lambda v: "—" if v is None else f"{v:.2f}"
    return env


TEMPLATES = Jinja2Templates(env=_environment())


def _review(request: Request) -> Review:
    return request.app.state.review


def _query(request: Request) -> Query:
    return Query.from_params(request.query_params)


def _link(path: str, params: Mapping[str, str]) -> str:
    return f"{path}?{urlencode(params)}" if params else path


def _page(request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
    review = _review(request)
    base = {
        "set_name": review.out.resolve().name,
        "reviewer": review.reviewer,
        "csrf": review.access.csrf,
        "reviewed": len(review.index) - int((review.index.statuses == 0).sum()),
        "total": len(review.index),
        "certification": review.index.certification(),
    }
    return TEMPLATES.TemplateResponse(request, name, base | context, status_code=status)


# -- pages ------------------------------------------------------------------------


def queue(request: Request) -> Response:
    """The queue: filters with counts, one page of images, and where to resume."""
    review = _review(request)
    review.index.refresh()
    query = _query(request)
    page = review.index.page(query)
    filters = []
    for name in FILTERS:
        counts = review.index.counts(name, query)
        filters.append(
            {
                "name": name,
                "value": getattr(query, name),
                "options": [(v, counts.get(v, 0)) for v in review.index.values(name)],
            }
        )
    params = query.params(page=1)
    entries = [review.index.entry(p) for p in page.entries]
    return _page(
        request,
        "queue.html",
        {
            "query": query,
            "filters": filters,
            "page": page,
            "entries": entries,
            "item_links": [_link(f"/item/{e.position}", params) for e in entries],
            "prev_page": _link("/", query.params(page=page.page - 1)) if page.page > 1 else "",
            "next_page": _link("/", query.params(page=page.page + 1))
            if page.page < page.pages
            else "",
            "resume": _link("/next", params),
            "clear": "/",
            "query_json": params,
        },
    )


def resume(request: Request) -> Response:
    """Go to the first image of the (filtered) queue: where the review stopped."""
    review = _review(request)
    review.index.refresh()
    query = _query(request)
    first = review.index.first(query)
    params = query.params(page=1)
    if first is None:
        return RedirectResponse(_link("/", params), status_code=303)
    return RedirectResponse(_link(f"/item/{first}", params), status_code=303)


def item(request: Request) -> Response:
    """One image beside its source item, the verifier's boxes and readings, and the review."""
    review = _review(request)
    review.index.refresh()
    position = request.path_params["position"]
    if not 0 <= position < len(review.index):
        return _page(request, "error.html", {"message": "no such image in this set"}, 404)
    query = _query(request)
    params = query.params(page=1)
    row = review.index.row(position)
    entry = review.index.entry(position)
    _, after = review.index.neighbours(query, position)
    # ← goes back through decided images too (to look again, or to change a decision).
    before, _ = review.index.neighbours(replace(query, status="all"), position)
    sidecar = read_json(p) if (p := review.inside(row.get("layout"))) else None
    scores = region_scores(row)
    reasons = reasons_of(row)
    readings = region_readings(verify_record(row))
    if not readings and isinstance(sidecar, Mapping):
        readings = region_readings(sidecar.get("verify") or {})
    if not readings:
        readings = review.audit_readings(entry.image)
    adjudicate = request.query_params.get("adjudicate") == "1"
    context = {
        "entry": entry,
        "row": row,
        "question": _segments(str(row.get("question") or "")),
        "options": _options(row),
        "figures": {str(k): v for k, v in (row.get("figure_files") or {}).items()},
        "boxes": _boxes(sidecar, scores, reasons),
        "reason_groups": _grouped(reasons),
        "scores": scores,
        "readings": [r | {"diff": text_diff(r["expected"], r["observed"])} for r in readings],
        "review": row.get("review") or {},
        "previous": list(row.get("previous_images") or []),
        "regeneration": row.get("regeneration") or {},
        "reject_reasons": REJECT_REASONS,
        "prev_link": _link(f"/item/{before}", params) if before is not None else "",
        "next_link": _link(f"/item/{after}", params) if after is not None else "",
        "queue_link": _link("/", params),
        "params": params,
        "adjudicate": adjudicate,
        "image_size": (row.get("width") or 0, row.get("height") or 0),
    }
    return _page(request, "item.html", context)


def progress_page(request: Request) -> Response:
    """Reviewed / total, pass rates by scene and backend, time per decision, agreement."""
    review = _review(request)
    review.index.refresh()
    return _page(
        request,
        "stats.html",
        {
            "progress": stats.progress(review.index),
            "times": stats.decision_times(review.index.state.decisions),
            "agreements": stats.agreements(review.index.state),
            "quality": stats.verifier_quality(review.index),
            "conflicts": len(stats.conflicts(review.index)),
            "skipped_lines": review.index.log.skipped,
        },
    )


def conflicts_page(request: Request) -> Response:
    """The images two reviewers decided differently, each with a link to settle it."""
    review = _review(request)
    review.index.refresh()
    found = stats.conflicts(review.index)
    return _page(
        request,
        "conflicts.html",
        {
            "conflicts": found,
            "links": [
                _link(f"/item/{c['entry'].position}", {"status": "conflict", "adjudicate": "1"})
                for c in found
            ],
            "agreements": stats.agreements(review.index.state),
        },
    )


def files(request: Request) -> Response:
    """Serve an image of the set (nothing outside it, nothing hidden, no symlink out)."""
    review = _review(request)
    relative = request.path_params["path"]
    real = servable(review.root, relative)
    if real is None:
        return Response("404: not an image of this set\n", status_code=404, media_type="text/plain")
    return FileResponse(
        real,
        media_type=IMAGE_TYPES[real.suffix.lower()],
        headers={"cache-control": "private, max-age=600"},
    )


# -- JSON -------------------------------------------------------------------------


def _refusal(refused: Refused) -> JSONResponse:
    """Answer a refused request; close the connection if its body may still be arriving."""
    headers = {"connection": "close"} if refused.unread else None
    return JSONResponse(
        {"ok": False, "error": str(refused)}, status_code=refused.status, headers=headers
    )


def _target(review: Review, position: int, image: str) -> int:
    """Return the entry a request is about, checking it still shows the image the client saw."""
    if not 0 <= position < len(review.index):
        raise Refused(400, "position is not an image of this set")
    if review.index.entry(position).image != image:
        raise Refused(409, "this image was replaced meanwhile (regenerated): reload the page")
    return position


def _next_link(review: Review, query: Query, position: int, adjudicate: bool = False) -> str:
    params = query.params(page=1) | ({"adjudicate": "1"} if adjudicate else {})
    _before, after = review.index.neighbours(query, position)
    after = after if after is not None else review.index.first(query)
    return _link(f"/item/{after}", params) if after is not None else _link("/", params)


async def decide(request: Request) -> Response:
    """Log one decision (accept, reject with a reason, flag) durably; answer where to go next.

    The whole request is checked before anything is logged: a field of the
    wrong type or out of range is a 400 naming it, and the log is untouched.
    """
    review = _review(request)
    try:
        asked = DecisionRequest.of(await read_json_object(request))
        position = _target(review, asked.position, asked.image)
        if asked.action not in VERDICTS:
            raise Refused(400, f"action must be one of {', '.join(VERDICTS)}")
        entry = review.index.entry(position)
        decision = _decision(
            review,
            entry,
            asked.id,
            asked.action,
            reason=asked.reason,
            note=asked.note,
            seconds=asked.seconds,
            adjudication=asked.adjudication,
        )
        query = Query.from_params(asked.query)
    except Refused as refused:
        return _refusal(refused)
    except DecisionError as error:
        return JSONResponse({"ok": False, "error": str(error)}, status_code=400)
    new = await asyncio.to_thread(review.index.record, decision)
    return JSONResponse(
        {
            "ok": True,
            "duplicate": not new,
            "id": decision.id,
            "status": review.index.entry(position).status,
            "next": _next_link(review, query, position, decision.adjudication),
        }
    )


def _decision(
    review: Review, entry: Entry, decision_id: str, action: str, **fields: Any
) -> Decision:
    """Return the reviewer's decision `action` on the entry's image, timed now."""
    return Decision(
        id=decision_id,
        image=entry.image,
        action=action,
        reviewer=review.reviewer,
        time=utc_now(),
        job_key=entry.job_key,
        item_id=entry.item_id,
        **fields,
    )


async def regenerate(request: Request) -> Response:
    """Make a new attempt for the image's job, log it, and answer with the new image."""
    review = _review(request)
    try:
        asked = RegenerationRequest.of(await read_json_object(request))
        if not asked.id:
            raise Refused(400, "a regeneration needs an id")
        if asked.reason and asked.reason not in REJECT_REASONS:
            raise Refused(400, f"unknown reason {asked.reason!r}")
        async with review.regenerating:
            await asyncio.to_thread(review.index.refresh)
            if review.index.log.knows(asked.id):
                return JSONResponse({"ok": True, "duplicate": True})  # a retry: already made
            position = _target(review, asked.position, asked.image)
            answer = await _regenerate(review, position, asked.id, asked.reason)
    except Refused as refused:
        return _refusal(refused)
    except RegenerationFailed as error:
        return JSONResponse({"ok": False, "error": str(error)}, status_code=502)
    except DecisionError as error:  # the new image's record cannot be logged
        return JSONResponse({"ok": False, "error": str(error)}, status_code=500)
    return JSONResponse(answer)


async def _regenerate(review: Review, position: int, decision_id: str, reason: str) -> dict:
    row = await asyncio.to_thread(review.index.row, position)
    # Without a reason of its own, a regeneration answers the image's rejection, if any.
    reason = reason or review.index.state.review_of(str(row["image"])).reason
    replacement = await review.regenerator.regenerate(row, reason)
    entry = review.index.entry(position)
    decision = _decision(
        review, entry, decision_id, "regenerate", reason=reason, replacement=replacement
    )
    new = await asyncio.to_thread(review.index.record, decision)
    regeneration = dict(replacement.get("regeneration") or {})
    return {
        "ok": True,
        "duplicate": not new,
        "image": replacement["image"],
        "identical": bool(regeneration.get("identical")),
        "attempt": regeneration.get("attempt"),
        "verdict": replacement.get("verdict"),
    }


def progress_json(request: Request) -> Response:
    """The progress figures as JSON (for scripts)."""
    review = _review(request)
    review.index.refresh()
    summary = stats.progress(review.index)
    summary["agreements"] = [
        {
            "reviewers": [a.first, a.second],
            "images": a.images,
            "agreed": a.agreed,
            "kappa": a.kappa,
        }
        for a in stats.agreements(review.index.state)
    ]
    summary["times"] = stats.decision_times(review.index.state.decisions)
    found = review.index.certification()
    summary["certification"] = found.as_json() if found else None
    summary["verifier_quality"] = stats.verifier_quality(review.index)
    return JSONResponse(summary)


def certify_page(request: Request) -> Response:
    """The certified review: the target, the audit sample, the live bound, what is left."""
    review = _review(request)
    review.index.refresh()
    state = review.index.set_state()
    sample = review.index.sample
    passed = certify.passed_images(state)
    return _page(
        request,
        "certify.html",
        {
            "sample": sample,
            "assessment": review.index.certification(),
            "passed": len(passed),
            "to_certify": len(certify.to_certify(sample, state)) if sample else 0,
            "zero_defect_size": certify.sample_size(0.02, 0.95, 0, len(passed) or None),
        },
    )


async def draw_sample(request: Request) -> Response:
    """Draw the seeded audit sample of the verifier-passed images for a stated target."""
    review = _review(request)
    try:
        asked = DrawRequest.of(await read_json_object(request))
        certify.check_target(asked.max_defect_rate, asked.confidence)
    except Refused as refused:
        return _refusal(refused)
    except ValueError as error:
        return JSONResponse({"ok": False, "error": str(error)}, status_code=400)
    review.index.refresh()
    if review.index.sample is not None:
        return JSONResponse(
            {"ok": False, "error": f"sample {review.index.sample.id} is already drawn"}, 409
        )
    passed = certify.passed_images(review.index.set_state())
    if not passed:
        return JSONResponse({"ok": False, "error": "no verifier-passed images to sample"}, 409)
    sample = certify.draw_sample(passed, asked.max_defect_rate, asked.confidence, asked.seed)
    await asyncio.to_thread(certify.write_sample, review.out, sample)
    review.index.set_sample(sample)
    return JSONResponse({"ok": True, "sample": sample.id, "size": sample.size})


def _drawn(review: Review) -> tuple[certify.Assessment, certify.Sample]:
    """Return the fresh assessment and the audit sample; refuse (409) when none is drawn."""
    review.index.refresh()
    found = review.index.certification()
    sample = review.index.sample
    if found is None or sample is None:
        raise Refused(409, "no audit sample drawn")
    return found, sample


async def grow_sample(request: Request) -> Response:
    """Draw more images into the sample after a defect (to the size the app named)."""
    review = _review(request)
    try:
        asked = GrowRequest.of(await read_json_object(request))
        found, sample = _drawn(review)
    except Refused as refused:
        return _refusal(refused)
    if not found.trusted or not found.more or asked.size != found.needed:
        return JSONResponse(
            {"ok": False, "error": f"nothing to draw at size {asked.size}: {found.next_step()}"},
            status_code=409,
        )
    grown = sample.grown(asked.size)
    await asyncio.to_thread(certify.write_sample, review.out, grown)
    review.index.set_sample(grown)
    return JSONResponse({"ok": True, "sample": grown.id, "size": grown.size})


async def accept_certified(request: Request) -> Response:
    """Accept the unsampled passes as "accepted by verifier, certified by sample", one line each."""
    review = _review(request)
    try:
        asked = BulkRequest.of(await read_json_object(request))
        found, sample = _drawn(review)
    except Refused as refused:
        return _refusal(refused)
    if not found.ready:
        return JSONResponse(
            {"ok": False, "error": f"not certified yet: {found.next_step()}"}, status_code=409
        )
    images = certify.to_certify(sample, review.index.set_state())
    if asked.count != len(images):
        return JSONResponse(
            {"ok": False, "error": f"the confirmation named {asked.count}, not {len(images)}"},
            status_code=409,
        )
    entries = [review.index.entry(review.index.position_of[image]) for image in images]
    decisions = certified_accepts(entries, review.reviewer, asked.id, sample.id)
    written = await asyncio.to_thread(review.index.record_many, decisions)
    after = review.index.certification()
    return JSONResponse(
        {
            "ok": True,
            "accepted": written,
            "certified": bool(after and after.certified),
            "statement": after.statement() if after else "",
        }
    )


async def bulk_accept(request: Request) -> Response:
    """Accept every image of a filtered selection, once the count the user confirmed matches."""
    review = _review(request)
    try:
        asked = BulkRequest.of(await read_json_object(request))
    except Refused as refused:
        return _refusal(refused)
    review.index.refresh()
    query = Query.from_params(asked.query)
    positions = [int(p) for p in review.index.matching(query)]
    if not positions or asked.count != len(positions):
        return JSONResponse(
            {
                "ok": False,
                "error": f"the selection holds {len(positions)} images, "
                f"not the {asked.count} confirmed: reload the queue",
            },
            status_code=409,
        )
    entries = [review.index.entry(p) for p in positions]
    decisions = bulk_accepts(entries, review.reviewer, asked.id, note="bulk accept")
    written = await asyncio.to_thread(review.index.record_many, decisions)
    return JSONResponse({"ok": True, "accepted": written, "batch": asked.id})


async def undo(request: Request) -> Response:
    """Undo the reviewer's last decision (a whole bulk action at once): new log lines, no edit."""
    review = _review(request)
    try:
        asked = UndoRequest.of(await read_json_object(request))
    except Refused as refused:
        return _refusal(refused)
    review.index.refresh()
    if review.index.log.knows(asked.id) or review.index.log.knows(f"{asked.id}-0"):
        return JSONResponse({"ok": True, "duplicate": True, "undone": 0, "next": "/"})
    lines = undos(review.index.state, review.reviewer, asked.id)
    if not lines:
        return JSONResponse({"ok": False, "error": "nothing to undo"}, status_code=409)
    await asyncio.to_thread(review.index.record_many, lines)
    position = review.index.position_of.get(lines[0].image)
    target = f"/item/{position}" if position is not None and len(lines) == 1 else "/"
    return JSONResponse({"ok": True, "undone": len(lines), "next": target})


# -- view helpers -------------------------------------------------------------------


def _segments(text: str) -> list[tuple[str, str]]:
    """Split item text into ("text", …) and ("figure", number) pieces at `<image N>` tags."""
    from itemshot.renderer.items import IMAGE_TAG

    pieces: list[tuple[str, str]] = []
    last = 0
    for match in IMAGE_TAG.finditer(text):
        if match.start() > last:
            pieces.append(("text", text[last : match.start()]))
        pieces.append(("figure", match.group(1)))
        last = match.end()
    if last < len(text):
        pieces.append(("text", text[last:]))
    return pieces


def _grouped(reasons: list[dict[str, str]]) -> list[tuple[str, list[dict[str, str]]]]:
    """Return reasons grouped by region, regions in first-seen order."""
    groups: dict[str, list[dict[str, str]]] = {}
    for reason in reasons:
        groups.setdefault(reason["region"], []).append(reason)
    return list(groups.items())


def _options(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    from itemshot.renderer.items import LETTERS

    answer = str(row.get("answer") or "")
    return [
        {"letter": LETTERS[i], "segments": _segments(str(text)), "answer": LETTERS[i] == answer}
        for i, text in enumerate((row.get("options") or [])[: len(LETTERS)])
    ]


def _boxes(
    sidecar: Any, scores: Mapping[str, float | None], reasons: list[dict[str, str]]
) -> list[dict[str, Any]]:
    """Return the layout's regions as polygons (final-image pixels) with score and reasons."""
    layout = sidecar.get("layout") if isinstance(sidecar, Mapping) else None
    if not isinstance(layout, Mapping):
        return []
    by_region: dict[str, list[str]] = {}
    for reason in reasons:
        by_region.setdefault(reason["region"], []).append(reason["code"])
    boxes = []
    for region in layout.get("regions") or ():
        try:
            name = str(region["name"])
            points = " ".join(f"{float(x):.1f},{float(y):.1f}" for x, y in region["quad"])
        except (KeyError, TypeError, ValueError):
            continue
        codes = by_region.get(name, [])
        boxes.append(
            {
                "name": name,
                "kind": str(region.get("kind") or ""),
                "points": points,
                "score": scores.get(name),
                "codes": codes,
                "failed": bool(codes),
            }
        )
    return boxes


# -- the application ----------------------------------------------------------------


def create_app(
    out: Path, *, reviewer: str, access: Access, index: ReviewIndex | None = None
) -> Starlette:
    """Return the review app over output set `out` (its index built now unless given)."""
    index = index or ReviewIndex(out)
    regenerator = Regenerator(out)
    review = Review(out, index, reviewer, access, regenerator)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # Bring the manifest up to date with the log (a crash may have left it behind).
        await asyncio.to_thread(index.write_manifest, force=True)
        writer = asyncio.create_task(_write_behind(index))
        try:
            yield
        finally:
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer
            await regenerator.close()
            await asyncio.to_thread(index.write_manifest)

    routes = [
        Route("/", queue),
        Route("/next", resume),
        Route("/item/{position:int}", item),
        Route("/stats", progress_page),
        Route("/conflicts", conflicts_page),
        Route("/certify", certify_page),
        Route("/files/{path:path}", files),
        Route("/api/decisions", decide, methods=["POST"]),
        Route("/api/regenerate", regenerate, methods=["POST"]),
        Route("/api/bulk", bulk_accept, methods=["POST"]),
        Route("/api/undo", undo, methods=["POST"]),
        Route("/api/certify/draw", draw_sample, methods=["POST"]),
        Route("/api/certify/grow", grow_sample, methods=["POST"]),
        Route("/api/certify/accept", accept_certified, methods=["POST"]),
        Route("/api/progress", progress_json),
        Route("/favicon.ico", lambda _request: Response(status_code=204)),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(Guard, access=access)], lifespan=lifespan)
    app.state.review = review
    return app


WRITE_BEHIND_SECONDS = 10.0


async def _write_behind(index: ReviewIndex) -> None:
    """Write new decisions into the manifest now and then while the server runs.

    The log is what makes a decision durable; this only keeps the manifest
    close behind it. The pause grows with the time a rewrite takes, so a
    large set spends at most a tenth of its time rewriting.
    """
    pause = WRITE_BEHIND_SECONDS
    while True:
        await asyncio.sleep(pause)  # a cadence, not a synchronisation
        if index.dirty:
            started = time.perf_counter()
            await asyncio.to_thread(index.write_manifest)
            pause = max(WRITE_BEHIND_SECONDS, 10 * (time.perf_counter() - started))
