"""Calls to the Gemini image model through google-genai: limits, retries, refusals, cache.

- bounded concurrency (a semaphore) and a requests-per-minute limit (spaced starts);
- retries with exponential backoff and full jitter on 408/429/5xx, timeouts and
  dropped connections, waiting at least any retry hint of the server
  (`RetryInfo.retryDelay` in the error body, or a `Retry-After` header);
- refusals (finish reasons such as IMAGE_SAFETY, prompt block reasons, answers
  with text only or only draft `thought` images) come back as outcomes, not errors,
  and are never retried here (the vibe loop decides what to do);
- answers are cached on disk by the full request key, so a re-run makes no request;
- `call` runs any API call within those limits and retries (batch mode uses it
  for batch creation and polling);
- every request has a real deadline (`timeout`, from connect to the last byte)
  and a size limit, and every answer is checked before it is used: a reply
  the SDK cannot parse, one of the wrong shape, or an image the bounded
  decoder refuses (a pixel bomb) becomes an `invalid` outcome of that one
  attempt — the item is asked again or falls back, the run goes on.

The API key is read from the environment only, handed to the SDK, and never
recorded: whatever a server sends back is scrubbed of it before it is kept
(outcomes, cache records, sidecars).
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

import httpx
from google import genai
from google.genai import errors, types

from itemshot.renderer.backends.nanobanana.cache import ResponseCache
from itemshot.renderer.backends.nanobanana.prompt import GenRequest
from itemshot.renderer.backends.nanobanana.settings import ClientSettings
from itemshot.renderer.http_limits import limited_client
from itemshot.renderer.imaging import IMAGE_LIMITS, ImageRejected, check_image
from itemshot.renderer.redact import Redactor

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
# The largest answer read: a batch's inlined answers carry many base64 images.
MAX_REPLY_BYTES = 256 * 1024 * 1024
# What the SDK raises for a body that is not JSON or not of the documented shape.
MALFORMED_REPLY = (ValueError, TypeError)


def _transport_errors() -> tuple[type[BaseException], ...]:
    """Return the exception types of a timeout or dropped connection (httpx or its fork httpx2)."""
    found: list[type[BaseException]] = [httpx.TransportError, TimeoutError, ConnectionError]
    try:
        import httpx2  # the SDK uses this drop-in fork of httpx when it is installed

        found.append(httpx2.TransportError)
    except ImportError:
        pass
    return tuple(found)


TRANSPORT_ERRORS = _transport_errors()
IMAGE_KINDS = ("image", "refusal", "no_image", "invalid", "error")
T = TypeVar("T")


@dataclass(frozen=True)
class Outcome:
    """What one generation attempt returned (never holds the API key)."""

    kind: str  # one of IMAGE_KINDS
    image: bytes | None = field(default=None, repr=False)
    mime: str = ""
    finish_reason: str | None = None
    block_reason: str | None = None
    text: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    model_version: str | None = None
    response_id: str | None = None
    http_statuses: tuple[int, ...] = ()  # one per HTTP request made (0 = no answer)
    error: str | None = None
    cached: bool = False
    draft_images: int = 0
    error_code: int | None = None  # the HTTP or per-request status of an error (None: none given)
    batch: str | None = None  # the batch that answered it (batch mode)
    refused_images: int = 0  # images the answer held that the bounded decoder refused

    @property
    def reason(self) -> str | None:
        """Return why there is no image: block reason, finish reason, TEXT_ONLY or DRAFT_ONLY."""
        if self.kind == "image":
            return None
        if self.kind == "error":
            return "ERROR"
        if self.kind == "invalid":
            return "INVALID_REPLY"
        if self.block_reason:
            return self.block_reason
        if self.finish_reason and self.finish_reason not in ("STOP", "MAX_TOKENS"):
            return self.finish_reason
        if self.text.strip():
            return "TEXT_ONLY"
        return "DRAFT_ONLY" if self.draft_images else "NO_IMAGE"

    @property
    def requests(self) -> int:
        """Return the number of HTTP requests this outcome cost (0 when cached or batched)."""
        return len(self.http_statuses)

    @property
    def transient(self) -> bool:
        """Return whether an error may go away when asked again (429, 5xx, no answer, a batch)."""
        return self.kind == "error" and (
            self.error_code is None or self.error_code == 0 or self.error_code in RETRY_STATUSES
        )

    def record(self) -> dict[str, Any]:
        """Return the outcome's metadata as a JSON-ready dict (no image bytes)."""
        data = asdict(self)
        data.pop("image")
        data["http_statuses"] = list(self.http_statuses)
        data["image_bytes"] = len(self.image) if self.image else 0
        data["reason"] = self.reason
        return data


def parse_response(response: types.GenerateContentResponse) -> Outcome:
    """Return the outcome of an answer: an image, a refusal, or no image."""
    usage = {}
    if response.usage_metadata is not None:
        meta = response.usage_metadata
        for name in ("prompt_token_count", "candidates_token_count", "total_token_count"):
            value = getattr(meta, name, None)
            if value is not None:
                usage[name] = int(value)
        thoughts = getattr(meta, "thoughts_token_count", None)
        if thoughts is not None:
            usage["thoughts_token_count"] = int(thoughts)
    common: dict[str, Any] = {
        "usage": usage,
        "model_version": response.model_version,
        "response_id": response.response_id,
    }
    feedback = response.prompt_feedback
    block = feedback.block_reason if feedback is not None else None
    if not response.candidates:
        reason = _name(block) if block else None
        return Outcome("refusal" if block else "no_image", block_reason=reason, **common)
    candidate = response.candidates[0]
    finish = _name(candidate.finish_reason) if candidate.finish_reason else None
    texts: list[str] = []
    drafts = 0
    parts = candidate.content.parts if candidate.content and candidate.content.parts else []
    for part in parts:
        if part.inline_data is not None and part.inline_data.data:
            if part.thought:
                drafts += 1
                continue
            return Outcome(
                "image",
                image=part.inline_data.data,
                mime=part.inline_data.mime_type or "image/png",
                finish_reason=finish,
                text="".join(texts),
                draft_images=drafts,
                **common,
            )
        if part.text and not part.thought:
            texts.append(part.text)
    refused = finish is not None and finish not in ("STOP", "MAX_TOKENS")
    text_only = bool("".join(texts).strip())
    return Outcome(
        "refusal" if refused or block or text_only else "no_image",
        finish_reason=finish,
        block_reason=_name(block) if block else None,
        text="".join(texts)[:2000],
        draft_images=drafts,
        **common,
    )


def read_reply(response: types.GenerateContentResponse, redact: Redactor) -> Outcome:
    """Return the checked outcome of an answer: every field it holds, scrubbed of secrets.

    An answer whose fields are of the wrong type, whose first candidate is
    empty (a `candidates` that was not a list of objects reads as such), or
    whose image the bounded decoder refuses is an `invalid` outcome.
    """
    try:
        outcome = parse_response(response)
        candidates = response.candidates or []
        if candidates and not _has_substance(candidates[0]):
            outcome = Outcome(
                "invalid",
                error="malformed reply: the first candidate has neither content nor finishReason",
                usage=outcome.usage,
            )
    except (*MALFORMED_REPLY, AttributeError) as error:
        outcome = Outcome("invalid", error=f"malformed reply ({type(error).__name__}: {error})")
    return scrubbed(checked_image(outcome, "the model's image"), redact)


def checked_image(outcome: Outcome, label: str) -> Outcome:
    """Return the outcome, made `invalid` when the bounded decoder refuses its image."""
    if outcome.kind != "image" or outcome.image is None:
        return outcome
    try:
        check_image(outcome.image, IMAGE_LIMITS, label)
    except ImageRejected as rejected:
        refused = {"kind": "invalid", "image": None, "refused_images": 1}
        return Outcome(**{**vars(outcome), **refused, "error": f"image refused: {rejected}"})
    return outcome


def scrubbed(outcome: Outcome, redact: Redactor) -> Outcome:
    """Return the outcome with every text it holds scrubbed of secrets."""
    texts = ("text", "error", "finish_reason", "block_reason", "model_version", "response_id")
    return Outcome(**{**vars(outcome), **{k: redact.value(getattr(outcome, k)) for k in texts}})


def _has_substance(candidate: types.Candidate) -> bool:
    return candidate.content is not None or candidate.finish_reason is not None


def _name(value: object) -> str:
    return str(getattr(value, "value", value))


def retry_hint(error: errors.APIError) -> float | None:
    """Return the server's retry hint in seconds (RetryInfo.retryDelay or Retry-After), if any."""
    details = error.details if isinstance(error.details, dict) else {}
    body = details.get("error", details) if isinstance(details, dict) else {}
    for entry in body.get("details", []) if isinstance(body, dict) else []:
        if isinstance(entry, dict) and "retryDelay" in entry:
            found = re.fullmatch(r"\s*([0-9.]+)s\s*", str(entry["retryDelay"]))
            if found:
                return float(found.group(1))
    headers = getattr(error.response, "headers", None)
    if headers is not None:
        value = headers.get("retry-after") if hasattr(headers, "get") else None
        if value is not None:
            try:
                return float(value)
            except ValueError:
                return None
    return None


class RateLimiter:
    """Space request starts so that at most `per_minute` begin in any minute on average."""

    def __init__(self, per_minute: float) -> None:
        self.interval = 60.0 / per_minute if per_minute > 0 else 0.0
        self.next_start = 0.0
        self.lock = asyncio.Lock()

    async def wait(self) -> None:
        """Wait for the next free start slot."""
        if self.interval <= 0:
            return
        async with self.lock:
            now = time.monotonic()
            start = max(now, self.next_start)
            self.next_start = start + self.interval
        if start > now:
            await asyncio.sleep(start - now)


class ImageClient:
    """The async Gemini image client with limits, retries, refusal handling and a cache."""

    def __init__(
        self, settings: ClientSettings, api_key: str, cache: ResponseCache | None = None
    ) -> None:
        base, version = settings.endpoint()
        # A deadline for the whole request (httpx's own timeouts are per read).
        self._http = limited_client(settings.timeout, MAX_REPLY_BYTES)
        options = types.HttpOptions(
            base_url=base,
            api_version=version,
            timeout=int(settings.timeout * 1000),
            httpx_async_client=self._http,
        )
        self._client = genai.Client(api_key=api_key, http_options=options)
        self.redact = Redactor.of(api_key)
        self.settings = settings
        self.cache = cache
        self.endpoint = self.redact.value(
            {"base_url": base or "(SDK default)", "api_version": version}
        )
        self._slots = asyncio.Semaphore(max(1, settings.concurrency))
        self._rate = RateLimiter(settings.requests_per_minute)
        self._random = random.Random(settings.jitter_seed)
        self.http_requests = 0
        self.statuses: Counter[int] = Counter()

    @property
    def sdk(self) -> genai.Client:
        """Return the SDK client (batch mode calls its `aio.batches`)."""
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._http.aclose()

    def cached(self, request: GenRequest) -> Outcome | None:
        """Return the cached outcome of a request, or None when it was not answered before.

        A cached image goes through the bounded decoder again: a cache written
        by an older version may hold an image that is no longer accepted.
        """
        if self.cache is None:
            return None
        try:
            hit = self.cache.get(request.key())
        except ImageRejected as rejected:  # a file too large to read at all
            message = f"image refused: {rejected}"
            return Outcome("invalid", error=message, cached=True, refused_images=1)
        if hit is None:
            return None
        record, image = hit
        return checked_image(_from_record(self.redact.value(record), image), "the cached image")

    def remember(self, request: GenRequest, outcome: Outcome) -> None:
        """Cache an answer (errors are never cached: asking again may succeed)."""
        if self.cache is not None and outcome.kind != "error":
            self.cache.put(request.key(), outcome.record(), outcome.image, outcome.mime)

    async def generate(self, request: GenRequest) -> Outcome:
        """Return the outcome of a request, from the cache when it was answered before."""
        hit = self.cached(request)
        if hit is not None:
            return hit
        response, statuses, message = await self.call(
            lambda: self._client.aio.models.generate_content(
                model=request.model, contents=[content(request)], config=config(request)
            )
        )
        if response is None:
            code = statuses[-1] if statuses else None
            outcome = Outcome(
                "error", error=message, http_statuses=tuple(statuses), error_code=code
            )
        else:
            outcome = _with_statuses(read_reply(response, self.redact), statuses)
        self.remember(request, outcome)
        return outcome

    async def call(
        self, make: Callable[[], Awaitable[T]]
    ) -> tuple[T | None, list[int], str | None]:
        """Return (result, HTTP statuses, error) of one API call made within the limits.

        Retries 408/429/5xx, timeouts and dropped connections with backoff; the
        result is None when the call failed for good (the error says why).
        """
        statuses: list[int] = []
        attempt = 0
        while True:
            async with self._slots:
                await self._rate.wait()
                self.http_requests += 1
                try:
                    result = await make()
                except errors.APIError as error:
                    code = int(error.code or 0)
                    statuses.append(code)
                    self.statuses[code] += 1
                    hint, message = retry_hint(error), f"{code} {error.status}: {error.message}"
                    retry = code in RETRY_STATUSES
                except TRANSPORT_ERRORS as error:
                    statuses.append(0)
                    self.statuses[0] += 1
                    hint, message = None, f"{type(error).__name__}: {error}"[:300]
                    retry = True
                except MALFORMED_REPLY as error:  # a body that is not JSON of the API's shape
                    statuses.append(200)
                    self.statuses[200] += 1
                    hint, retry = None, True
                    message = f"malformed reply ({type(error).__name__}: {error})"[:300]
                else:
                    statuses.append(200)
                    self.statuses[200] += 1
                    return result, statuses, None
            if not retry or attempt >= self.settings.max_retries:
                return None, statuses, self.redact.text(message)
            await asyncio.sleep(self._backoff(attempt, hint))
            attempt += 1

    def _backoff(self, attempt: int, hint: float | None) -> float:
        """Return the wait before retry `attempt`: full-jitter exponential, at least the hint."""
        ceiling = min(self.settings.backoff_max, self.settings.backoff_base * (2**attempt))
        wait = self._random.uniform(ceiling / 2, ceiling)
        return max(wait, hint) if hint is not None else wait


def content(request: GenRequest) -> types.Content:
    """Return the request's content: the prompt, then its image parts as inline data."""
    parts = [types.Part.from_text(text=request.prompt)]
    parts += [types.Part.from_bytes(data=p.data, mime_type=p.mime) for p in request.images]
    return types.Content(role="user", parts=parts)


def config(request: GenRequest) -> types.GenerateContentConfig:
    """Return the request's generation config: image output, seed, aspect ratio and size."""
    return types.GenerateContentConfig(
        response_modalities=["TEXT", "IMAGE"],
        seed=request.seed % (2**31),
        image_config=types.ImageConfig(
            aspect_ratio=request.aspect_ratio, image_size=request.image_size
        ),
    )


def _with_statuses(outcome: Outcome, statuses: list[int]) -> Outcome:
    return Outcome(**{**vars(outcome), "http_statuses": tuple(statuses)})


def _from_record(record: dict[str, Any], image: bytes | None) -> Outcome:
    return Outcome(
        kind=str(record["kind"]),
        image=image,
        mime=record.get("mime", ""),
        finish_reason=record.get("finish_reason"),
        block_reason=record.get("block_reason"),
        text=record.get("text", ""),
        usage=dict(record.get("usage") or {}),
        model_version=record.get("model_version"),
        response_id=record.get("response_id"),
        http_statuses=(),
        error=record.get("error"),
        cached=True,
        draft_images=int(record.get("draft_images", 0)),
        batch=record.get("batch"),
        refused_images=int(record.get("refused_images", 0)),
    )
