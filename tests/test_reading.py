"""The reading probe: `predict --task transcribe`, the `ocr_then_answer` prompt and the analysis.

Scripted transcripts (exact, one digit changed, an option missing, empty, a
prose typo, labels written "(A)") come back from a loopback OpenAI-compatible
stand-in; every expected number is computed here from first principles: the
accuracy as 1 − Levenshtein / max(len) after the documented normalisation
(NFKC, every space removed, case folded), correlations, McNemar p-values and
paired differences by their textbook formulas, the logistic slope by
statsmodels.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_analyze import draw_image
from test_predict import StandIn, image_hashes, main, write_manifest

import itemshot
from itemshot.factorial.analysis.transcripts import score_transcript, split_fields, split_ocr_answer
from itemshot.factorial.answers.prompts import resolve_prompts
from itemshot.factorial.design.sweep import SweepRow, row_from_record
from itemshot.factorial.predict.messages import build_request, build_transcription_request
from itemshot.factorial.predict.predict import PredictConfig, prompts_for
from itemshot.verify.reading.text import normalise

N_ITEMS = 8
LETTERS = "ABCD"


# ---------------------------------------------------------------- independent scoring


def levenshtein(a: str, b: str) -> int:
    """Return the edit distance of two strings (textbook dynamic programme)."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def documented_accuracy(expected: str, observed: str) -> float:
    """Return 1 − Levenshtein / max(len) after NFKC, removing every space and folding case."""

    def prepare(text: str) -> str:
        return "".join(unicodedata.normalize("NFKC", text).split()).casefold()

    a, b = prepare(expected), prepare(observed)
    if not a and not b:
        return 1.0
    return 1 - levenshtein(a, b) / max(len(a), len(b))


def item_text(index: int) -> tuple[str, list[str]]:
    """Return the source question and options of item `index`."""
    question = f"A crate in <image 1> weighs {137 + 11 * index} kg. Which load is heaviest here?"
    options = ["4,500 kg", "4,600 kg", "Neither of the above", f"{12 + index} m/s"]
    return question, options


def shown(question: str) -> str:
    """Return the question as the page shows it: `<image 1>` reads "Figure 1"."""
    return question.replace("<image 1>", "Figure 1")


def transcript(index: int, kind: str) -> str:
    """Return a scripted transcript of item `index`."""
    question, options = item_text(index)
    lines = [shown(question)] + [f"{LETTERS[i]}. {o}" for i, o in enumerate(options)]
    if kind == "exact":
        return "\n".join(lines)
    if kind == "digit":
        weight = str(137 + 11 * index)
        changed = weight[:-1] + str((int(weight[-1]) + 1) % 10)
        return "\n".join([lines[0].replace(weight, changed), *lines[1:]])
    if kind == "missing":
        return "\n".join(line for line in lines if not line.startswith("C."))
    if kind == "empty":
        return ""
    if kind == "prose":  # a clause lost: below 0.95 with every number, unit and letter kept
        return "\n".join([lines[0].replace(" Which load is heaviest here?", ""), *lines[1:]])
    if kind == "paren":
        return "\n".join([lines[0]] + [f"({LETTERS[i]}) {o}" for i, o in enumerate(options)])
    raise ValueError(kind)


def expected_whole(index: int) -> str:
    question, options = item_text(index)
    return "\n".join([shown(question)] + [f"{LETTERS[i]}. {o}" for i, o in enumerate(options)])


def observed_whole(index: int, kind: str) -> str:
    """Return the transcript with its labels in the documented canonical form `A.`."""
    text = transcript(index, kind)
    for letter in LETTERS:
        text = text.replace(f"({letter}) ", f"{letter}. ")
    return text


def sweep_row(index: int, fmt: str = "vision") -> SweepRow:
    question, options = item_text(index)
    return SweepRow(f"q{index}|{fmt}", f"q{index}", fmt, "B", tuple(options), question)


# ---------------------------------------------------------------- scoring units


@pytest.mark.parametrize("kind", ["exact", "digit", "missing", "empty", "prose", "paren"])
def test_transcript_scores_match_the_documented_formula(kind: str) -> None:
    index = 3
    reading = score_transcript(sweep_row(index), transcript(index, kind), "m")
    expected = documented_accuracy(expected_whole(index), observed_whole(index, kind))
    assert reading.accuracy == pytest.approx(expected, abs=1e-12)
    question, _ = item_text(index)
    observed_question = transcript(index, kind).split("\n")[0] if kind != "empty" else ""
    assert reading.question == pytest.approx(
        documented_accuracy(shown(question), observed_question), abs=1e-12
    )
    option_scores = [field.accuracy for field in reading.options]
    if kind == "missing":
        assert option_scores == [1.0, 1.0, 0.0, 1.0]
        assert reading.missed("letters") and not reading.missed("numbers")
    if kind == "digit":
        assert 0.95 < reading.accuracy < 1.0  # a near-perfect similarity ...
        assert reading.missed("numbers")  # ... is still a critical-token miss
        assert [d for k, d in reading.missing if k == "numbers"] == [f"question: {137 + 33}"]
    if kind == "prose":
        assert reading.accuracy < 0.95 and reading.critical_ok
    if kind in ("exact", "paren"):
        assert reading.accuracy == 1.0 and reading.critical_ok
    if kind == "empty":
        assert reading.status == "empty" and reading.accuracy == 0.0
        assert all(reading.missed(k) for k in ("numbers", "letters", "short options"))


def test_japanese_transcript_with_full_width_forms() -> None:
    question = "図に示す<image 1>の荷物は4,500 kgです。正しいものはどれか。"
    options = ("4,500 kg", "4,600 kg", "どちらでもない", "12 m/s")
    row = SweepRow("j|vision", "j", "vision", "A", options, question, language="ja")
    text = (
        "図に示す 図1 の荷物は ４，５００ kg です。正しいものは どれか。\n"
        "Ａ．４，５００ kg\nＢ．４，６００ kg\nＣ．どちらでもない\nＤ．１２ m/s"
    )
    reading = score_transcript(row, text, "m")
    expected = "\n".join([question.replace("<image 1>", "図1")] + [
        f"{LETTERS[i]}. {o}" for i, o in enumerate(options)
    ])  # fmt: skip
    observed = unicodedata.normalize("NFKC", text).replace("．", ". ")
    assert reading.accuracy == pytest.approx(documented_accuracy(expected, observed), abs=1e-12)
    assert reading.accuracy == 1.0 and reading.critical_ok


def test_transcript_blocks_and_labels() -> None:
    reply = "Let me read it.\n<transcript>\nQ?\nA. one\nB. two\n</transcript>\nSo.\nAnswer: B"
    block, rest = split_ocr_answer(reply)
    assert block == "Q?\nA. one\nB. two" and rest.strip() == "So.\nAnswer: B"
    assert split_ocr_answer("Answer: B") == (None, "Answer: B")
    assert split_ocr_answer("<Transcript>Q? A. one</transcript> Answer: A") == (
        "Q? A. one",
        " Answer: A",
    )
    assert split_ocr_answer("<transcript>\nQ?\nAnswer: B")[0] is None  # never closed
    stem, found = split_fields("Which hold?\nI. one\nII. two\n(A) I only (B) II only", 2)
    assert stem == "Which hold?\nI. one\nII. two"
    assert found == {"A": "I only", "B": "II only"}


_WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789 ,.?", min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(question=_WORDS, options=st.lists(_WORDS, min_size=2, max_size=10))
def test_canonical_transcripts_split_back_into_their_fields(
    question: str, options: list[str]
) -> None:
    # The fields come back as the verifier compares them (normalised: elision dots are no
    # content, so an option ".." comes back empty).
    text = "\n".join([question] + [f"{'ABCDEFGHIJ'[i]}. {o}" for i, o in enumerate(options)])
    stem, found = split_fields(text, len(options))
    assert stem == normalise(question)
    assert [found[k] for k in sorted(found)] == [normalise(o) for o in options]


def test_transcription_prompts_follow_the_item_language() -> None:
    english = resolve_prompts("transcribe", "en").vision
    japanese = resolve_prompts("transcribe", "ja").vision
    assert "every option" in english and "inside figures" in english
    assert "選択肢" in japanese and "図" in japanese
    ocr = resolve_prompts("ocr_then_answer", "en")
    assert "<transcript>" in ocr.vision and "Answer: $LETTER" in ocr.vision
    assert ocr.standard == resolve_prompts("cot", "en").standard
    row = SweepRow("j|vision", "j", "vision", "A", ("x", "y"), "問", image=Path("j.png"),
                   language="ja")  # fmt: skip
    assert prompts_for(PredictConfig("m", task="transcribe").prompt_spec)(row).vision == japanese
    for bad in ({"task": "transcribe", "prompt": "cot"}, {"prompt": "transcribe"}):
        with pytest.raises(ValueError):
            PredictConfig("m", **bad)


# ---------------------------------------------------------------- the stand-in sweep

TRANSCRIPTS = {
    "m1": ["exact", "exact", "paren", "digit", "missing", "prose", "empty", "exact"],
    "m2": ["exact", "digit", "digit", "missing", "empty", "empty", "exact", "prose"],
    "m3": ["exact", "exact", "exact", "exact", "prose", "digit", "exact", "exact"],
}
ANSWERS = {  # (model, prompt, cell) → right (1) / wrong (0) per item
    ("m1", "direct", "vision"): [1, 1, 1, 0, 0, 1, 0, 0],
    ("m1", "direct", "standard"): [1, 1, 1, 1, 1, 0, 1, 1],
    ("m2", "direct", "vision"): [1, 0, 1, 0, 0, 1, 1, 0],
    ("m2", "direct", "standard"): [1, 1, 1, 1, 0, 1, 1, 1],
    ("m3", "direct", "vision"): [1, 1, 0, 1, 1, 0, 1, 1],
    ("m3", "direct", "standard"): [1, 1, 1, 1, 1, 1, 0, 1],
    ("m1", "ocr_then_answer", "vision"): [1, 1, 1, 1, 0, 1, 0, 1],
    ("m1", "ocr_then_answer", "standard"): [1, 1, 1, 1, 1, 0, 1, 1],
}
NO_BLOCK = 7  # m1's ocr_then_answer reply to this item has no transcript block


def _manifest(out: Path, n_items: int = N_ITEMS) -> list[dict[str, Any]]:
    rows = []
    for index in range(n_items):
        question, options = item_text(index)
        base = {"item_id": f"q{index}", "status": "ok", "question": question, "options": options,
                "answer": "B", "subject": "Physics", "language": "en", "error": None}  # fmt: skip
        rows.append(
            {**base, "job_key": f"q{index}|vision", "format": "vision",
             "image": draw_image(out, f"q{index}.png", f"page q{index}"),
             "condition": {"format": "vision", "n_options": 4},
             "verify": {"passed": True, "scores": verifier_scores(index)}}
        )  # fmt: skip
        rows.append(
            {**base, "job_key": f"q{index}|standard", "format": "standard",
             "figures": [draw_image(out, f"q{index}-figure.png", f"figure q{index}")],
             "condition": {"format": "standard", "n_options": 4}}
        )  # fmt: skip
    write_manifest(out, rows)
    return rows


def verifier_scores(index: int) -> dict[str, float]:
    """Return the field scores itemshot's own OCR round trip recorded for item `index`."""
    return {"question": 0.9 + 0.01 * index, **{f"option:{x}": 1.0 - 0.02 * i
            for i, x in enumerate(LETTERS)}}  # fmt: skip


def _letter(right: int) -> str:
    return "B" if right else "C"


def _replies(out: Path, rows: list[dict[str, Any]]) -> dict[tuple[str, str, tuple[str, ...]], str]:
    """Return the stand-in's script: (model, request text, image hashes) → reply."""
    replies: dict[tuple[str, str, tuple[str, ...]], str] = {}
    for record in rows:
        row = row_from_record(record, out)
        index = int(row.item_id[1:])
        cell = row.format
        for model in TRANSCRIPTS:
            if cell == "vision":
                request = build_transcription_request(row, resolve_prompts("transcribe"))
                key = (model, request.text, tuple(i.sha256 for i in request.images))
                replies[key] = transcript(index, TRANSCRIPTS[model][index])
            for prompt in ("direct", "ocr_then_answer"):
                outcome = ANSWERS.get((model, prompt, cell))
                if outcome is None:
                    continue
                request = build_request(row, resolve_prompts(prompt))
                reply = f"Answer: {_letter(outcome[index])}"
                if prompt == "ocr_then_answer" and cell == "vision":
                    block = transcript(index, TRANSCRIPTS[model][index])
                    if index != NO_BLOCK:
                        block = f"<transcript>\n{block}\n</transcript>"
                    reply = f"{block}\nSolved.\n{reply}"
                key = (model, request.text, tuple(i.sha256 for i in request.images))
                replies[key] = reply
    return replies


@functools.cache
def _accuracy(model: str, index: int) -> float:
    return documented_accuracy(
        expected_whole(index), observed_whole(index, TRANSCRIPTS[model][index])
    )


def mcnemar_p(first: list[int], second: list[int]) -> float:
    """Return McNemar's exact two-sided p: binomial tail of the discordant pairs."""
    b = sum(1 for x, y in zip(first, second, strict=True) if x and not y)
    c = sum(1 for x, y in zip(first, second, strict=True) if y and not x)
    n = b + c
    if n == 0:
        return 1.0
    return min(1.0, 2 * sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2**n)


def point_biserial(scores: list[float], outcomes: list[int]) -> float:
    """Return (M1 − M0) / s · sqrt(p q), s the population standard deviation of the scores."""
    right = [x for x, y in zip(scores, outcomes, strict=True) if y]
    wrong = [x for x, y in zip(scores, outcomes, strict=True) if not y]
    p = len(right) / len(scores)
    spread = statistics.pstdev(scores)
    return (statistics.mean(right) - statistics.mean(wrong)) / spread * math.sqrt(p * (1 - p))


def test_two_prompts_three_models_reading_report(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    rows = _manifest(out)
    replies = _replies(out, rows)

    def answer(body: dict[str, Any]) -> str:
        text = body["messages"][0]["content"][0]["text"]
        return replies[(body["model"], text, tuple(image_hashes(body)))]

    predictions, transcripts = [], []
    with StandIn(["429", "500"], answer) as server:
        common = ["--endpoint", server.endpoint, "--retry-delay", "0.01", "--concurrency", "3"]
        for model in TRANSCRIPTS:
            transcripts.append(out / f"{model}-transcripts.jsonl")
            args = ["predict", str(out), "--model", model, "--task", "transcribe",
                    "--output", str(transcripts[-1]), *common]  # fmt: skip
            assert main(args) == 0
            predictions.append(out / f"{model}-direct.jsonl")
            assert main(["predict", str(out), "--model", model, "--output",
                         str(predictions[-1]), *common]) == 0  # fmt: skip
        predictions.append(out / "m1-ocr.jsonl")
        assert main(["predict", str(out), "--model", "m1", "--prompt", "ocr_then_answer",
                     "--output", str(predictions[-1]), *common]) == 0  # fmt: skip
        sent = len(server.requests)
    assert sent == 3 * N_ITEMS + 4 * 2 * N_ITEMS + 2  # transcripts, answers, two retries
    records = [json.loads(x) for x in transcripts[0].read_text(encoding="utf-8").splitlines()]
    assert len(records) == N_ITEMS and {r["task"] for r in records} == {"transcribe"}
    assert all(r["condition_id"].endswith("|vision") for r in records)

    # Transcripts alone, from Python: the reading table needs no answers.
    alone = itemshot.analyze([], out, transcripts=transcripts[0], bootstrap=100)
    assert alone.runs == () and alone.reading is not None
    (only,) = alone.reading.transcription
    assert (only.model, only.cell, only.accuracy.n) == ("m1", "vision·4", N_ITEMS)
    assert only.accuracy.mean == pytest.approx(
        statistics.mean(_accuracy("m1", i) for i in range(N_ITEMS))
    )

    # Two models (m1 with two prompts, m2): the report a user of a two-model sweep reads.
    two = tmp_path / "report-two-models"
    status = main(
        ["analyze", str(predictions[0]), str(predictions[1]), str(predictions[3]), "--sets",
         str(out), "--transcripts", str(transcripts[0]), str(transcripts[1]), "--report",
         str(two), "--bootstrap", "300"]
    )  # fmt: skip
    assert status == 0
    markdown = (two / "report.md").read_text(encoding="utf-8")
    for title in ("## transcription accuracy % per model and cell",
                  "## reading and correctness across items",
                  "| all models · direct (pooled) | 16 |",
                  "## accuracy conditional on reading (threshold 0.95)",
                  "## gain of the ocr_then_answer prompt", "![reading](reading.png)",
                  "across-model correlation (direct) needs 3 or more models, have 2"):  # fmt: skip
        assert title in markdown, title
    assert "## across models" not in markdown
    assert (two / "reading.png").stat().st_size > 10_000
    two_results = json.loads((two / "results.json").read_text(encoding="utf-8"))
    assert [p["run"] for p in two_results["reading"]["points"]] == [
        "m1 · direct",
        "m1 · ocr_then_answer",
        "m2 · direct",
    ]

    report = tmp_path / "report"
    status = main(
        ["analyze", *map(str, predictions), "--sets", str(out), "--transcripts",
         *map(str, transcripts), "--report", str(report), "--bootstrap", "300"]
    )  # fmt: skip
    assert status == 0
    results = json.loads((report / "results.json").read_text(encoding="utf-8"))
    reading = results["reading"]
    assert "pairs" not in reading and "readings" not in reading  # they have their own files

    # Transcription table: mean whole-item accuracy per model, critical and prose-only counts.
    table = {(c["model"], c["source"], c["cell"]): c for c in reading["transcription"]}
    for model, kinds in TRANSCRIPTS.items():
        cell = table[(model, "transcribe", "vision·4")]
        scores = [_accuracy(model, i) for i in range(N_ITEMS)]
        assert cell["accuracy"]["mean"] == pytest.approx(statistics.mean(scores))
        assert cell["accuracy"]["low"] <= cell["accuracy"]["mean"] <= cell["accuracy"]["high"]
        assert cell["read"] == sum(1 for s in scores if s >= 0.95)
        assert cell["critical"]["numbers"] == kinds.count("digit") + kinds.count("empty")
        assert cell["critical"]["letters"] == kinds.count("missing") + kinds.count("empty")
        assert cell["prose_only"] == kinds.count("prose")
        verifier = [statistics.mean(verifier_scores(i).values()) for i in range(N_ITEMS)]
        assert cell["verifier"]["mean"] == pytest.approx(statistics.mean(verifier))
    ocr = table[("m1", "ocr_then_answer", "vision·4")]
    assert ocr["unscored"] == 1 and ocr["accuracy"]["n"] == N_ITEMS - 1

    # Item-level correlation and logistic fit, per run and pooled over the three models.
    correlations = {c["name"]: c for c in reading["correlations"]}
    fits = {f["name"]: f for f in reading["logistic"]}
    import statsmodels.api as sm

    pooled_x: list[float] = []
    pooled_y: list[int] = []
    for model in TRANSCRIPTS:
        x = [_accuracy(model, i) for i in range(N_ITEMS)]
        y = ANSWERS[(model, "direct", "vision")]
        pooled_x += x
        pooled_y += y
        found = correlations[f"{model} · direct"]
        assert found["r"] == pytest.approx(point_biserial(x, y))
        assert found["n"] == N_ITEMS and found["low"] <= found["r"] <= found["high"]
        reference = sm.Logit(y, sm.add_constant(x)).fit(disp=0)
        assert fits[f"{model} · direct"]["slope"] == pytest.approx(reference.params[1], rel=1e-6)
        assert fits[f"{model} · direct"]["converged"]
    pooled = correlations["all models · direct (pooled)"]
    assert pooled["r"] == pytest.approx(point_biserial(pooled_x, pooled_y))
    assert pooled["n"] == 3 * N_ITEMS

    # Across models: one point per model, Pearson r of the three (reading, accuracy) means.
    means = [statistics.mean(_accuracy(m, i) for i in range(N_ITEMS)) for m in TRANSCRIPTS]
    rates = [statistics.mean(ANSWERS[(m, "direct", "vision")]) for m in TRANSCRIPTS]
    across = {c["name"]: c for c in reading["across_models"]}["across models · direct"]
    assert across["r"] == pytest.approx(statistics.correlation(means, rates))

    # Accuracy conditional on reading, paired with the standard cell (McNemar by hand).
    conditional = {(c["run"], c["group"]): c for c in reading["conditional"]}
    for model in TRANSCRIPTS:
        scores = [_accuracy(model, i) for i in range(N_ITEMS)]
        vision = ANSWERS[(model, "direct", "vision")]
        standard = ANSWERS[(model, "direct", "standard")]
        for label, keep in (
            ("read ≥ 0.95", lambda s: s >= 0.95),
            ("read < 0.95", lambda s: s < 0.95),
        ):
            items = [i for i in range(N_ITEMS) if keep(scores[i])]
            found = conditional[(f"{model} · direct", label)]
            first = [vision[i] for i in items]
            second = [standard[i] for i in items]
            assert found["effect"]["n_items"] == len(items)
            assert found["vision"]["correct"] == sum(first)
            assert found["standard"]["correct"] == sum(second)
            if items:
                assert found["effect"]["estimate"] == pytest.approx(
                    statistics.mean(first) - statistics.mean(second)
                )
                assert found["effect"]["pvalue"] == pytest.approx(mcnemar_p(first, second))

    # The OCR prompt's gain over direct on the vision cell.
    gains = {e["name"]: e for e in reading["ocr_gains"]}
    gain = gains["m1: vision·4 ocr_then_answer − direct"]
    ocr_answers = ANSWERS[("m1", "ocr_then_answer", "vision")]
    direct_answers = ANSWERS[("m1", "direct", "vision")]
    assert gain["estimate"] == pytest.approx(
        statistics.mean(ocr_answers) - statistics.mean(direct_answers)
    )
    assert gain["pvalue"] == pytest.approx(mcnemar_p(ocr_answers, direct_answers))
    ocr_run = {r["run"]: r for r in results["runs"]}["m1 · ocr_then_answer"]
    ocr_cell = {c["label"]: c for c in ocr_run["cells"]}["vision·4"]
    assert ocr_cell["accuracy"]["correct"] == sum(ocr_answers)  # parsed after the block

    # Beside the report: every scored transcript, and every (reading, answer) pair plotted.
    assert "## across models: r of mean transcription" in (report / "report.md").read_text(
        encoding="utf-8"
    )
    readings = [json.loads(x) for x in (report / "readings.jsonl").read_text().splitlines()]
    assert len(readings) == 4 * N_ITEMS  # three transcription runs and m1's ocr blocks
    digit = next(r for r in readings if r["model"] == "m1" and r["condition_id"] == "q3|vision"
                 and r["source"] == "transcribe")  # fmt: skip
    # The changed number is lost, and with it the quantity it had a unit for.
    assert digit["missing"] == [
        ["numbers", f"question: {137 + 33}"],
        ["units", f"question: {137 + 33}kg"],
    ]
    pairs = (report / "reading_pairs.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(pairs) == 4 * N_ITEMS - 1  # three direct runs and the ocr run (one without block)


# ---------------------------------------------------------------- resume after SIGKILL


def _body_digest(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


@pytest.mark.parametrize(
    ("task_args", "rows_sent", "answered_first"),
    [(["--task", "transcribe"], N_ITEMS, 3), (["--prompt", "ocr_then_answer"], 2 * N_ITEMS, 5)],
)
def test_killed_run_resumes_without_sending_an_answered_request_again(
    tmp_path: Path, task_args: list[str], rows_sent: int, answered_first: int
) -> None:
    out = tmp_path / "sweep"
    _manifest(out)
    in_flight = 2
    # The first `answered_first` requests are answered; the next `in_flight` are held open.
    with StandIn(["ok"] * answered_first + ["timeout"] * in_flight) as server:
        command = [sys.executable, "-m", "itemshot.cli", "predict", str(out), "--model", "m1",
                   "--endpoint", server.endpoint, "--concurrency", str(in_flight),
                   "--timeout", "120", *task_args]  # fmt: skip
        environment = {**os.environ, "NO_ALBUMENTATIONS_UPDATE": "1"}
        log = tmp_path / "predict.log"
        with log.open("w") as stderr:
            child = subprocess.Popen(
                command, stdout=subprocess.DEVNULL, stderr=stderr, env=environment
            )
            try:
                # A request is sent only when a slot frees, and a slot frees only after the
                # reply before it is in the cache: with every slot held, all answers are cached.
                arrived = server.wait_for_requests(answered_first + in_flight, timeout=120)
                assert arrived, log.read_text()
                child.send_signal(signal.SIGKILL)
                child.wait(timeout=60)
            finally:
                if child.poll() is None:
                    child.kill()
                    child.wait()
        assert child.returncode == -signal.SIGKILL
        first_run = [_body_digest(body) for body in server.requests]
        answered = set(first_run[:answered_first])
        held = set(first_run[answered_first:])
        name = "transcripts.jsonl" if "transcribe" in task_args else "predictions.jsonl"
        assert not (out / name).exists()  # the killed run wrote nothing half-done
        server.release.set()

        before = len(server.requests)
        status = main(["predict", str(out), "--model", "m1", "--endpoint", server.endpoint,
                       "--concurrency", "3", *task_args])  # fmt: skip
        assert status == 0
        second_run = [_body_digest(body) for body in server.requests[before:]]
    assert len(second_run) == rows_sent - answered_first
    assert not answered & set(second_run)  # nothing answered before is sent again
    assert held <= set(second_run)  # the requests cut off by the kill are sent once more
    assert len(set(second_run)) == len(second_run)
    records = [json.loads(x) for x in (out / name).read_text(encoding="utf-8").splitlines()]
    assert len(records) == rows_sent
    assert sum(1 for r in records if r["cached"]) == answered_first
    assert all(r["error"] is None for r in records)
