"""Hostile servers: a bad answer costs one item (it falls back or fails), never the run.

Stand-ins on loopback speak the Gemini and OpenAI wire protocols and
misbehave: a 48 KB PNG declaring 20000×20000 pixels, broken JSON, replies
of the wrong shape, a body dripped one byte at a time, the caller's API key
echoed back in an error and in a reply.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from itemshot.renderer.backends.nanobanana.standin import (
    Captured,
    Reply,
    StandIn,
    error_reply,
    finish_reply,
    image_reply,
    text_reply,
)
from itemshot.renderer.output import read_jsonl
from tests.conftest import job_sidecar, run_cli
from tests.fault_injection import HOSTILE, ChatServer, files_containing

KEY = "AIzaSy-stand-in-key-0123456789abcdef"
BOMB = (HOSTILE / "bomb.png").read_bytes()
FLAGS = ("--scene", "plain", "--font-size", "22", "--no-progress", "--no-verify")
# item id → the word its question carries, which the stand-in reads in the prompt
ITEMS = {
    "gen-bomb": "bomb",
    "gen-broken-json": "brokenjson",
    "gen-not-a-list": "notalist",
    "gen-wrong-types": "wrongtypes",
    "gen-slow-drip": "slowdrip",
    "gen-echo-error": "echoerror",
    "gen-echo-text": "echotext",
    "gen-refused": "refused",
}


def hostile_answer(captured: Captured) -> Reply:
    """Answer each item's requests in its own hostile way."""
    prompt = captured.prompt
    key = captured.headers.get("x-goog-api-key", "")
    if "bomb" in prompt:
        return image_reply(BOMB)
    if "brokenjson" in prompt:
        return Reply(200, {}, raw=b'{"candidates": [{"content": ')
    if "notalist" in prompt:
        return Reply(200, {"candidates": "not-a-list"})
    if "wrongtypes" in prompt:
        return Reply(200, {"candidates": [{"content": {"parts": 5}}]})
    if "slowdrip" in prompt:
        return Reply(200, text_reply("a reply that never ends").body, drip=0.2)
    if "echoerror" in prompt:
        return error_reply(400, f"API key not valid: {key}")
    if "echotext" in prompt:
        return text_reply(f"I will not draw this. Your key is {key}.")
    return finish_reply("IMAGE_SAFETY")


def write_items(path: Path, ids: dict[str, str]) -> Path:
    rows = [
        {"id": item_id, "question": f"Question {word}: which letter comes first?",
         "options": ["A letter", "B letter", "C letter", "D letter"], "answer": "A"}
        for item_id, word in ids.items()
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def generative_flags(server: StandIn, cache: Path) -> tuple[str, ...]:
    return (
        "--backend", "nanobanana", "--api-base", server.base_url, "--cache", str(cache),
        "--attempts", "2", "--max-retries", "1", "--backoff-base", "0.05", "--timeout", "2",
        "--rpm", "0", "--concurrency", "8",
    )  # fmt: skip


def attempts_of(out: Path, row: dict) -> list[dict]:
    return job_sidecar(out, row)["render"]["attempts"]


@pytest.fixture(scope="module")
def generative_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[int, dict[str, dict], Path, Path, StandIn]:
    """Run every hostile item through `render --backend nanobanana` once."""
    root = tmp_path_factory.mktemp("servers")
    dataset = write_items(root / "items.jsonl", ITEMS)
    out, cache = root / "out", root / "cache"
    with pytest.MonkeyPatch.context() as patch, StandIn(hostile_answer) as server:
        patch.setenv("GEMINI_API_KEY", KEY)
        status = run_cli("render", dataset, "--out", out, *FLAGS, *generative_flags(server, cache))
    manifest = {row["item_id"]: row for row in read_jsonl(out / "manifest.jsonl")}
    return status, manifest, out, cache, server


def test_every_hostile_answer_costs_its_item_a_fallback_and_the_run_completes(
    generative_run: tuple,
) -> None:
    status, manifest, out, _, _ = generative_run
    assert status == 0  # every item has an image: the Chromium fallback of the same page
    assert set(manifest) == set(ITEMS)
    for item_id, row in manifest.items():
        assert row["status"] == "ok" and row["fallback"] is True, (item_id, row)
        assert (out / row["image"]).is_file()


@pytest.mark.parametrize(
    ("item_id", "kind", "words"),
    [
        ("gen-bomb", "invalid", "20000×20000"),  # case 1
        ("gen-broken-json", "error", "malformed reply (JSONDecodeError"),  # case 4
        ("gen-not-a-list", "invalid", "neither content nor finishReason"),
        ("gen-wrong-types", "error", "malformed reply (ValidationError"),
        ("gen-slow-drip", "error", "no complete answer within the 2 s deadline"),  # case 5
        ("gen-refused", "refusal", ""),
    ],
)
def test_each_hostile_answer_is_recorded_with_its_reason(
    generative_run: tuple, item_id: str, kind: str, words: str
) -> None:
    _, manifest, out, _, _ = generative_run
    first = attempts_of(out, manifest[item_id])[0]["outcome"]
    assert first["kind"] == kind, first
    assert words in (first["error"] or ""), first


def test_the_bomb_is_billed_but_never_decoded_or_cached(generative_run: tuple) -> None:
    _, manifest, out, cache, _ = generative_run
    attempts = attempts_of(out, manifest["gen-bomb"])
    assert [a["outcome"]["refused_images"] for a in attempts] == [1, 1]
    costs = json.loads((out / "cost.json").read_text(encoding="utf-8"))
    bomb_cost = next(e for e in costs["jobs"] if e["item_id"] == "gen-bomb")
    assert sum(bomb_cost["images"].values()) == 2
    assert not [p for p in cache.rglob("*") if p.suffix == ".png"]


def test_an_echoed_api_key_is_written_nowhere(generative_run: tuple) -> None:
    """Case 16: the key comes back in an error and in a reply text; both are kept, redacted."""
    _, manifest, out, cache, server = generative_run
    assert any(c.headers.get("x-goog-api-key") == KEY for c in server.captured)
    assert files_containing(out, KEY) == []
    assert files_containing(cache, KEY) == []
    error = attempts_of(out, manifest["gen-echo-error"])[0]["outcome"]["error"]
    text = attempts_of(out, manifest["gen-echo-text"])[0]["outcome"]["text"]
    assert "API key not valid: [REDACTED]" in error
    assert "Your key is [REDACTED]." in text


def test_a_bomb_already_in_the_cache_is_refused_on_the_rerun(
    generative_run: tuple, tmp_path: Path
) -> None:
    """An older version kept the bomb in OUT/.cache; reading it back must not decode it."""
    _, manifest, out, cache, _ = generative_run
    for attempt in attempts_of(out, manifest["gen-bomb"]):
        key = attempt["request_key"]
        folder = cache / key[:2]
        (folder / f"{key}.png").write_bytes(BOMB)
        record = {"kind": "image", "mime": "image/png", "image_file": f"{key}.png"}
        (folder / f"{key}.json").write_text(json.dumps(record), encoding="utf-8")
    dataset = write_items(tmp_path / "items.jsonl", {"gen-bomb": "bomb"})
    rerun = tmp_path / "out"
    with pytest.MonkeyPatch.context() as patch, StandIn(hostile_answer) as server:
        patch.setenv("GEMINI_API_KEY", KEY)
        status = run_cli(
            "render", dataset, "--out", rerun, *FLAGS, *generative_flags(server, cache)
        )
        assert server.requests == 0  # every answer came from the cache
    row = read_jsonl(rerun / "manifest.jsonl")[0]
    assert status == 0 and row["fallback"] is True
    outcomes = [a["outcome"] for a in attempts_of(rerun, row)]
    assert all(o["cached"] and o["kind"] == "invalid" for o in outcomes), outcomes
    assert all("'the cached image' is 20000×20000 px" in o["error"] for o in outcomes)


def test_batch_answers_are_checked_one_by_one(tmp_path: Path) -> None:
    """The same checks in batch mode: one bad inlined answer falls back alone."""
    ids = {"batch-bomb": "bomb", "batch-not-a-list": "notalist", "batch-refused": "refused"}
    dataset = write_items(tmp_path / "items.jsonl", ids)
    out = tmp_path / "out"
    with pytest.MonkeyPatch.context() as patch, StandIn(hostile_answer) as server:
        patch.setenv("GEMINI_API_KEY", KEY)
        status = run_cli(
            "render", dataset, "--out", out, *FLAGS, *generative_flags(server, tmp_path / "c"),
            "--batch", "--poll-interval", "0",
        )  # fmt: skip
    manifest = {row["item_id"]: row for row in read_jsonl(out / "manifest.jsonl")}
    assert status == 0
    assert all(row["status"] == "ok" and row["fallback"] for row in manifest.values())
    bomb = attempts_of(out, manifest["batch-bomb"])[0]["outcome"]
    assert bomb["kind"] == "invalid" and "20000×20000" in bomb["error"]
    odd = attempts_of(out, manifest["batch-not-a-list"])[0]["outcome"]
    assert odd["kind"] == "invalid" and "neither content" in odd["error"]


def test_predict_timeout_is_a_deadline_and_keys_are_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Case 5 for `predict`: a server dripping a byte every 0.2 s fails its row at
    `--timeout`, whatever it still has to send; an echoed key is redacted."""
    secret = "sk-stand-in-secret-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    out = tmp_path / "set"
    out.mkdir()
    rows = [
        {"item_id": name, "job_key": name, "status": "ok", "format": "blind",
         "question": f"Question {name}: which letter?", "options": ["a", "b", "c", "d"],
         "answer": "B", "language": "en", "error": None}
        for name in ("slow", "echo", "fine")
    ]  # fmt: skip
    (out / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    def behave(text: str) -> str:
        return "drip" if "slow" in text else "echo" if "echo" in text else "ok"

    with ChatServer(behave) as server:
        status = run_cli(
            "predict", out, "--endpoint", server.endpoint, "--model", "m", "--timeout", "1",
            "--max-attempts", "2", "--retry-delay", "0.01",
        )  # fmt: skip
    predictions = {p["item_id"]: p for p in read_jsonl(out / "predictions.jsonl")}
    assert status == 3  # some rows failed; the others are written
    slow = predictions["slow"]
    assert slow["response"] is None and slow["attempts"] == 2
    assert slow["error"]["kind"] == "timeout"
    assert "no complete answer within the 1 s deadline" in slow["error"]["message"]
    assert predictions["fine"]["response"] == "Answer: B"
    assert predictions["echo"]["response"] == "I was called with Bearer [REDACTED]"
    assert files_containing(out, secret) == []
