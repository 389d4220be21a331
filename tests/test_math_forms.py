"""Every math form MMMU-Pro writes is typeset; a page that would show LaTeX as source fails.

The parser tests pin how each form is read; the Chromium tests render real
pages and read what the page check (page.js, rawLatex) found in the DOM.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from itemshot.fonts.catalogue import choose_fonts
from itemshot.renderer.backends.base import RenderFailure
from itemshot.renderer.backends.chromium import ChromiumBackend, ChromiumPool
from itemshot.renderer.items import Item
from itemshot.renderer.jobs import JobRequest, plan
from itemshot.renderer.markup import Math, Text, parse_inline
from itemshot.renderer.output import read_jsonl
from itemshot.renderer.page import PageDocument
from itemshot.renderer.presentation import PresentationSpec
from tests.conftest import run_cli

# One question per form, each as MMMU-Pro writes it; (form, LaTeX the page typesets).
FORMS = {
    "spaced": (r"A charge of +10 $\mu $C at 0$^\circ $ <$\theta $ < 90$^\circ $.", "$…$ spaced"),
    "spaced-both": (r"Four angles $ L_{1} $, $ L_{2} $ were observed.", "$…$ spaced"),
    "spaced-digit": (r"The model is $\beta $0 + $\beta $1Di + ui.", "$…$ spaced"),
    "tight": (r"The current $I_1$ in $\Omega$.", "$…$"),
    "display": (r"Solve $$x^2 = 4$$ for x.", "$$…$$"),
    "brackets": (r"Solve \[\int_0^1 f(x)\,dx\] now.", "\\[…\\]"),
    "parens": (r"Let \(y = mx + b\) be a line.", "\\(…\\)"),
    "undelimited": (r"Find the voltage if \omega = 5 Mrad/s.", "undelimited"),
    "undelimited-script": (
        r"The response is 10e^{-t} u(t) - 20e^{-(t - 1)} u(t - 2).",
        "undelimited",
    ),
}
DELIMITERS = ("$", "\\(", "\\)", "\\[", "\\]")


def test_each_form_is_read_as_a_formula() -> None:
    for question, form in FORMS.values():
        segments = parse_inline(question)
        maths = [s for s in segments if isinstance(s, Math)]
        assert maths and {m.form for m in maths} == {form}, (question, segments)
        text = "".join(s.text for s in segments if isinstance(s, Text))
        assert not any(d in text for d in DELIMITERS), (question, text)
        assert "\\" not in text, (question, text)


def test_spaced_dollars_keep_their_content_and_undelimited_runs_stop_at_prose() -> None:
    assert [s for s in parse_inline(r"10 $\mu $g") if isinstance(s, Math)] == [Math("\\mu", False)]
    assert parse_inline(r"if \omega = 5 Mrad/s.") == [
        Text("if "),
        Math("\\omega = 5", False),
        Text(" Mrad/s."),
    ]
    option = parse_inline(r"17.1 \phase{90.7} mA.")
    assert option == [Math("17.1 \\phase{90.7}", False), Text(" mA.")]
    # A braced script is TeX with no command: "resistance" and "ohm" stay prose.
    assert parse_inline("of 10^{-2} ohm") == [Text("of "), Math("10^{-2}", False), Text(" ohm")]


@pytest.mark.parametrize(
    "text",
    [
        "A pen costs $5 and a book $10.",
        "It costs $3.50 and $4.",
        "Machine A: $20,518.13; Machine B: $19,149.5",
        "Sales (figures in $ thousands) rose by $ 1 per piece.",
        "2001:$10.70; 2002:$13.80",
        "an income of $12,000?",
    ],
)
def test_dollar_amounts_stay_text(text: str) -> None:
    assert parse_inline(text) == [Text(text)]


def test_escaped_dollars_read_as_dollars() -> None:
    assert parse_inline(r"from \$8 to \$10 if your income is $12,000") == [
        Text("from $8 to $10 if your income is $12,000")
    ]


@pytest.mark.parametrize(
    "text",
    [r"The bearing is 86°43\25.9'", r"Open C:\Users\name and print a\n", r"10 $\mu g per litre"],
)
def test_backslashes_outside_formulas_and_unclosed_dollars_stay_text(text: str) -> None:
    # No formula is made up: prose backslashes stay; an unclosed `$` is left for the page check.
    assert parse_inline(text) == [Text(text)]


def _items(questions: dict[str, str], option: str = "one") -> list[Item]:
    return [
        Item(id=name, question=question, options=(option, "two", "three", "four"), answer=0)
        for name, question in questions.items()
    ]


async def _render(items: list[Item], font_style: str = "regular") -> dict[str, object]:
    """Return, per item, its Rendered page or the RenderFailure it raised (one Chromium page)."""
    spec = PresentationSpec(font_style=font_style)
    jobs = plan([JobRequest(item, spec) for item in items], 7)
    outcomes: dict[str, object] = {}
    async with ChromiumBackend(1, 1) as backend:
        for job in jobs:
            try:
                outcomes[job.item.id] = await backend.render(job)
            except RenderFailure as failure:
                outcomes[job.item.id] = failure
    return outcomes


def test_every_form_typesets_in_chromium_and_leaves_no_delimiter() -> None:
    questions = {name: question for name, (question, _) in FORMS.items()}
    questions["amounts"] = "It costs $5 and $3.50 and $4; from \\$8 to \\$10."
    questions["prose-backslash"] = r"The bearing is 86°43\25.9' and C:\Users\name holds a\n."
    outcomes = asyncio.run(_render(_items(questions, option=r"1.2\phase{-37.8} V")))
    for name, outcome in outcomes.items():
        assert not isinstance(outcome, RenderFailure), (name, outcome)
        regions = {r.name: r for r in outcome.layout.regions}  # type: ignore[attr-defined]
        question = regions["question"]
        if name in FORMS:
            assert question.math, name  # the formula's element is on the page, typeset
            assert not any(d in question.text for d in DELIMITERS), (name, question.text)
            assert "\\" not in question.text, (name, question.text)
        assert regions["option:A"].math == ("1.2\\phase{-37.8} V",)
    amounts = {r.name: r for r in outcomes["amounts"].layout.regions}["question"]  # type: ignore[attr-defined]
    assert amounts.text == "It costs $5 and $3.50 and $4; from $8 to $10." and not amounts.math
    prose = {r.name: r for r in outcomes["prose-backslash"].layout.regions}["question"]  # type: ignore[attr-defined]
    assert "86°43\\25.9'" in prose.text and "C:\\Users\\name" in prose.text


def test_a_page_that_would_show_raw_latex_fails_naming_item_and_field(tmp_path: Path) -> None:
    options = ["one", "two", "three", "four"]
    rows = [
        {"id": "unclosed-dollar", "question": r"The dose is 10 $\mu g per litre.",
         "options": options, "answer": "A"},
        {"id": "unclosed-paren", "question": "Which line?",
         "options": ["one", r"the line \(y = 2x", "three", "four"], "answer": "A"},
        {"id": "unbalanced-run", "question": r"Find {\alpha at the pivot.", "options": options,
         "answer": "A"},
        {"id": "unknown-command", "question": r"Evaluate $\foo{x}$ now.", "options": options,
         "answer": "A"},
        {"id": "fine", "question": r"Evaluate $\frac{1}{2} $ for $5.", "options": options,
         "answer": "A"},
    ]  # fmt: skip
    dataset = tmp_path / "items.jsonl"
    dataset.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    assert run_cli("render", dataset, "--out", out, "--no-progress", "--no-verify") == 3
    manifest = {r["item_id"]: r for r in read_jsonl(out / "manifest.jsonl")}
    assert manifest["fine"]["status"] == "ok"
    expected = {
        "unclosed-dollar": ("question", "\\mu"),
        "unclosed-paren": ("option:B", "\\("),
        "unbalanced-run": ("question", "\\alpha"),
    }
    for item_id, (field, token) in expected.items():
        error = manifest[item_id]["error"]
        assert (error["item_id"], error["reason"], error["field"]) == (item_id, "raw_latex", field)
        assert token in error["message"] and "left as source" in error["message"], error
    assert "option B" in manifest["unclosed-paren"]["error"]["message"]
    # KaTeX refuses an unknown command inside delimiters before the page check runs.
    assert manifest["unknown-command"]["error"]["reason"] == "latex_error"
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["failures_by_reason"]["raw_latex"] == 3


def _document(text: str) -> PageDocument:
    """Return a page whose question is one text span, as the templates write it."""
    html = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'></head><body><main id='content'>"
        f"<div data-region='question'><p class='q-par'><span class='t'>{text}</span></p></div>"
        "</main></body></html>"
    )
    return PageDocument(html=html, assets={}, css_width=600, css_height=300, device_scale=1.0,
                        min_scale=0.5, fonts=choose_fonts("regular", "en"), decor={},
                        placeholders=())  # fmt: skip


def test_the_page_check_reads_the_dom_text_not_the_source() -> None:
    # Text put on the page as is (no parser): what the check must and must not call LaTeX.
    legitimate = [
        "A pen costs $5 and a book $10.",
        "Machine A: $20,518.13; Machine B: $19,149.5 (in $ thousands)",
        "The bearing is 86°43\\25.9' and C:\\Users\\name holds a\\n.",
        "Price: US$ 5 per unit",
        "snake_case names and x^2 + y^2",
        "a profit of $7,000 for each boat. Capacity {(customers) / (season)}, cost {$ / (boat)}",
    ]
    raw = {
        "10 $\\mu $g": "command",
        "the value $x$ here": "delimiter",
        "solve $$x$$": "delimiter",
        "let \\(y\\) be": "delimiter",
        "\\unknownname{3}": "command",
        "the $\\beta $0 term": "command",
        "the response 10e^{-t} u(t)": "script",
        "a gain V_{out} / V_{in}": "script",
    }

    async def check() -> dict[str, str]:
        results: dict[str, str] = {}
        async with ChromiumPool(1, 1) as pool:
            for text in [*legitimate, *raw]:
                try:
                    await pool.render(_document(text))
                    results[text] = "ok"
                except RenderFailure as failure:
                    assert failure.reason == "raw_latex" and failure.field == "question", failure
                    results[text] = failure.record["raw_latex"][0]["kind"]
        return results

    results = asyncio.run(check())
    assert {t: results[t] for t in legitimate} == dict.fromkeys(legitimate, "ok")
    assert {t: results[t] for t in raw} == raw


def test_a_backslash_in_the_handwritten_face_is_drawn_by_a_face_that_has_one() -> None:
    items = _items({"bearing": r"The bearing is 86°43\25.9' exactly."})
    outcome = asyncio.run(_render(items, font_style="handwritten"))["bearing"]
    assert not isinstance(outcome, RenderFailure), outcome
    layout = outcome.layout  # type: ignore[attr-defined]
    assert layout.fonts_fallback == {"DejaVu Sans": "\\"}
    question = {r.name: r for r in layout.regions}["question"]
    assert set(question.fonts) == {"Nanum Pen Script", "DejaVu Sans"}
    assert question.fonts["DejaVu Sans"] == 1  # the one backslash, not the words
