"""Send every condition of an output set to a model and write `predictions.jsonl`.

Two tasks share the machinery: `answer` (the question, answered with a
prompt) and `transcribe` (each image-format condition's image with the
transcription prompt; the replies go to `transcripts.jsonl` beside the
predictions).

Requests run concurrently up to a bound; failures that may pass (429, 5xx,
timeouts, refused connections, garbled replies, replies with no text) are
retried with jittered exponential backoff. Each reply with text is stored in
an on-disk cache keyed by (model, prompt, request text, image hashes,
parameters) the moment it arrives, so a killed or repeated run only sends
what is missing. An empty, null or blank reply is never an answer: it is
retried, never cached, and a row still empty after its attempts fails with
kind `empty_reply`. (A transcript may be empty: it is the model's reading of
an image it found no text in, which the reading analysis scores.) Errors are
recorded with their kind, not cached.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from itemshot.factorial.answers.parsers import row_rng
from itemshot.factorial.answers.prompts import TRANSCRIBE, PromptSet, is_builtin, resolve_prompts
from itemshot.factorial.design.sweep import IMAGE_FORMATS, SweepRow, read_manifest
from itemshot.factorial.predict.cache import ResponseCache, request_key
from itemshot.factorial.predict.clients import ChatClient, Completion, GenerationParams
from itemshot.factorial.predict.messages import (
    ModelRequest,
    build_request,
    build_transcription_request,
)
from itemshot.factorial.predict.retry import PermanentError, RetryableError, RetryPolicy
from itemshot.renderer.output import atomic_write_text

PREDICTIONS_FILE = "predictions.jsonl"
TRANSCRIPTS_FILE = "transcripts.jsonl"
TASKS = ("answer", TRANSCRIBE)


@dataclass(frozen=True)
class PredictConfig:
    """Everything that decides what is sent and how: model, prompt, parameters, limits."""

    model: str
    api: str = "openai"
    prompt: str | None = None
    params: GenerationParams = field(default_factory=GenerationParams)
    concurrency: int = 8
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    seed: int = 0
    task: str = "answer"

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {', '.join(TASKS)}, got {self.task!r}")
        transcribing = self.task == TRANSCRIBE
        if self.prompt is not None and is_builtin(self.prompt):
            if transcribing and self.prompt != TRANSCRIBE:
                raise ValueError(
                    f"--task transcribe takes the transcribe prompt or a file, not {self.prompt!r}"
                )
            if not transcribing and self.prompt == TRANSCRIBE:
                raise ValueError("the transcribe prompt belongs to --task transcribe")

    @property
    def prompt_spec(self) -> str:
        """Return the prompt to use: the one given, else the task's default."""
        if self.prompt is not None:
            return self.prompt
        return TRANSCRIBE if self.task == TRANSCRIBE else "direct"

    @property
    def output_name(self) -> str:
        """Return the file name the task writes into the output set."""
        return TRANSCRIPTS_FILE if self.task == TRANSCRIBE else PREDICTIONS_FILE


@dataclass(frozen=True)
class PredictSummary:
    """What a run did: rows, replies sent and reused, failures, attempts, output file."""

    total: int
    sent: int
    cached: int
    failed: int
    attempts: int
    skipped_rows: tuple[str, ...]
    output: Path
    not_applicable: int = 0  # rows the task does not apply to (text formats when transcribing)
    failures: dict[str, int] = field(default_factory=dict)  # failure kind -> rows, most first
    examples: dict[str, str] = field(default_factory=dict)  # failure kind -> a row's message


@dataclass(frozen=True)
class _Outcome:
    completion: Completion | None
    latency: float | None
    attempts: int
    error: dict[str, Any] | None


def prompts_for(spec: str) -> Callable[[SweepRow], PromptSet]:
    """Return a per-row prompt chooser: built-in prompts follow each row's language."""
    if is_builtin(spec):
        return lambda row: resolve_prompts(spec, row.language)
    fixed = resolve_prompts(spec)
    return lambda row: fixed


async def _call_with_retries(
    client: ChatClient,
    request: ModelRequest,
    config: PredictConfig,
    slots: asyncio.Semaphore,
    key: str,
) -> _Outcome:
    rng = row_rng(config.seed, key)
    last = RetryableError("no attempt made")
    for attempt in range(1, config.retry.max_attempts + 1):
        try:
            async with slots:
                started = time.perf_counter()
                completion = await client.complete(request, config.params)
                latency = time.perf_counter() - started
            if config.task != TRANSCRIBE and not completion.text.strip():
                # Nothing to score: another attempt may answer, and this must not be cached.
                finish = completion.finish_reason or "none given"
                raise RetryableError(
                    f"the reply has no text (finish reason: {finish})", kind="empty_reply"
                )
            return _Outcome(completion, latency, attempt, None)
        except PermanentError as error:
            return _Outcome(None, None, attempt, {"kind": error.kind, "message": str(error)})
        except RetryableError as error:
            last = error
            if attempt < config.retry.max_attempts:
                await asyncio.sleep(config.retry.delay(attempt, rng, error.retry_after))
    attempts = config.retry.max_attempts
    message = f"{last} (the last of {attempts} attempts)" if attempts > 1 else str(last)
    return _Outcome(None, None, attempts, {"kind": last.kind, "message": message})


def _has_text(reply: dict[str, Any]) -> bool:
    """Return whether a cached reply holds an answer (an older version cached empty ones)."""
    response = reply.get("response")
    return isinstance(response, str) and bool(response.strip())


def _record(
    row: SweepRow,
    config: PredictConfig,
    prompts: PromptSet,
    key: str,
    cached: bool,
    reply: dict[str, Any] | None,
    error: dict[str, Any] | None,
    attempts: int,
) -> dict[str, Any]:
    return {
        "condition_id": row.job_key,
        "item_id": row.item_id,
        "format": row.format,
        "model": config.model,
        "api": config.api,
        "task": config.task,
        "prompt": prompts.name,
        "request_key": key,
        "response": reply["response"] if reply else None,
        "usage": reply.get("usage", {}) if reply else {},
        "finish_reason": reply.get("finish_reason") if reply else None,
        "latency_s": reply.get("latency_s") if reply else None,
        "attempts": attempts,
        "cached": cached,
        "temperature": config.params.temperature,
        "max_tokens": config.params.max_tokens,
        "error": error,
    }


async def predict_rows(
    rows: Sequence[SweepRow],
    client: ChatClient,
    config: PredictConfig,
    cache: ResponseCache,
    on_done: Callable[[], None] | None = None,
) -> list[dict[str, Any]]:
    """Return one record per row, in row order, using and filling the cache."""
    choose = prompts_for(config.prompt_spec)
    build = build_transcription_request if config.task == TRANSCRIBE else build_request
    slots = asyncio.Semaphore(max(1, config.concurrency))

    async def one(row: SweepRow) -> dict[str, Any]:
        prompts = choose(row)
        try:
            request = build(row, prompts)
        except (OSError, ValueError) as error:
            if on_done:
                on_done()
            return _record(
                row, config, prompts, "", False, None, {"kind": "input", "message": str(error)}, 0
            )
        key = request_key(
            f"{config.api}:{config.model}",
            prompts.digest,
            request.text,
            tuple(image.sha256 for image in request.images),
            config.params.as_dict(),
        )
        hit = cache.get(key)
        if hit is not None and (config.task == TRANSCRIBE or _has_text(hit)):
            if on_done:
                on_done()
            return _record(row, config, prompts, key, True, hit, None, 0)
        outcome = await _call_with_retries(client, request, config, slots, key)
        reply = None
        if outcome.completion is not None:
            reply = {
                "response": outcome.completion.text,
                "usage": outcome.completion.usage,
                "finish_reason": outcome.completion.finish_reason,
                "latency_s": outcome.latency,
                "model": config.model,
                "params": config.params.as_dict(),
            }
            cache.put(key, reply)
        if on_done:
            on_done()
        return _record(row, config, prompts, key, False, reply, outcome.error, outcome.attempts)

    return list(await asyncio.gather(*(one(row) for row in rows)))


def write_predictions(path: Path, records: Sequence[dict[str, Any]]) -> None:
    """Write prediction records as JSON lines, atomically."""
    text = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    atomic_write_text(path, text)


def task_rows(rows: Sequence[SweepRow], task: str) -> list[SweepRow]:
    """Return the rows a task applies to: every row to answer, image formats to transcribe."""
    if task == TRANSCRIBE:
        return [row for row in rows if row.format in IMAGE_FORMATS and row.image is not None]
    return list(rows)


async def run_predict(
    out: Path,
    client: ChatClient,
    config: PredictConfig,
    cache_dir: Path | None = None,
    on_start: Callable[[int], None] | None = None,
    on_done: Callable[[], None] | None = None,
    output: Path | None = None,
) -> PredictSummary:
    """Run the task on every usable row of `out/manifest.jsonl` and write its JSONL.

    Answers go to `out/predictions.jsonl` and transcripts to
    `out/transcripts.jsonl` unless `output` names another file (one per model).
    """
    manifest = read_manifest(out)
    rows = task_rows(manifest.rows, config.task)
    cache = ResponseCache(cache_dir or out / ".cache" / "predict")
    if on_start:
        on_start(len(rows))
    try:
        records = await predict_rows(rows, client, config, cache, on_done)
    finally:
        await client.aclose()
    output = output or out / config.output_name
    write_predictions(output, records)
    fresh = [r for r in records if not r["cached"] and r["request_key"]]
    failed = [r for r in records if r["error"] is not None]
    failures = dict(Counter(str(r["error"]["kind"]) for r in failed).most_common())
    examples: dict[str, str] = {}
    for record in failed:
        examples.setdefault(
            str(record["error"]["kind"]), f"{record['item_id']}: {record['error']['message']}"
        )
    return PredictSummary(
        total=len(records),
        sent=sum(1 for r in fresh if r["error"] is None),
        cached=sum(1 for r in records if r["cached"]),
        failed=sum(1 for r in records if r["error"] is not None),
        attempts=sum(int(r["attempts"]) for r in records),
        skipped_rows=manifest.skipped,
        output=output,
        not_applicable=len(manifest.rows) - len(rows),
        failures=failures,
        examples=examples,
    )
