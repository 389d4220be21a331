"""Parser tests: agreement with the official MMMU-Pro extractions and properties."""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itemshot.factorial.answers.parsers import coerce_options, parse_mmmu_pro, row_rng
from itemshot.factorial.answers.parsers_strict import parse_strict
from itemshot.factorial.answers.registry import get_parser
from tests.conftest import OUTPUTS

# The carried rows of each published GPT-4o file: (rows, rows the official
# evaluation marked right in `if_right`). The published accuracies of the full
# 1,730-row files (standard10 CoT 55.03 %, direct 40.12 %, vision CoT 50.06 %,
# direct 42.43 %) are checked the same way by `benchmarks/published_outputs.py`.
OFFICIAL = {
    "gpt-4o_standard10_cot.jsonl": (18, 4),
    "gpt-4o_standard10_direct.jsonl": (46, 13),
    "gpt-4o_vision_cot.jsonl": (30, 11),
    "gpt-4o_vision_direct.jsonl": (22, 5),
}
TEN = [f"option text {i}" for i in range(10)]


def _rows(name: str) -> list[dict]:
    path = OUTPUTS / name
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("name", sorted(OFFICIAL))
def test_mmmu_pro_parser_matches_official_letters(name: str) -> None:
    rows = _rows(name)
    count, right = OFFICIAL[name]
    assert len(rows) == count and sum(bool(row["if_right"]) for row in rows) == right
    fallback_rows = []
    agreed = 0
    for row in rows:
        result = parse_mmmu_pro(
            row["response"], coerce_options(row["options"]), row_rng(0, row["id"])
        )
        if result.fallback:
            fallback_rows.append(row)
            continue
        assert result.letter == row["pred_indexs"], row["id"]
        agreed += 1
    assert agreed + len(fallback_rows) == len(rows)
    # The official count of right rows must be reachable by some outcome of the random guesses.
    sure = sum(
        1
        for row in rows
        if row not in fallback_rows
        and parse_mmmu_pro(row["response"], coerce_options(row["options"])).letter == row["answer"]
    )
    assert sure <= right <= sure + len(fallback_rows)
    print(f"{name}: {len(fallback_rows)} fallback rows, right {sure}–{sure + len(fallback_rows)}")


def test_fallback_is_seeded_and_flagged() -> None:
    options = ["x", "y", "z", "w"]
    first = parse_mmmu_pro("", options, row_rng(7, "item-1"))
    again = parse_mmmu_pro("", options, row_rng(7, "item-1"))
    assert first == again
    assert first.fallback and first.reason == "random_fallback" and not first.valid
    letters = {parse_mmmu_pro("", options, row_rng(seed, "k")).letter for seed in range(40)}
    assert letters == set("ABCD")


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("The answer is (B).", "B"),
        ("Answer: Ｃ", "C"),
        ("答え: Ｄ", "D"),
        ("正解は【E】です。", "E"),
        ("I think it is **F**", "F"),
        ("Reasoning…\n\n**G**", "G"),
        ("so we get $\\boxed{H}$", "H"),
        ("Final answer: \\( \\text{J} \\)", "J"),
        ("(C)", "C"),
        ("D. neither of them", "D"),
        ("Answer: I", "I"),
        ("Answer: \\( \\text{(C)} \\)", "C"),
        ("Answer: \\(\\textbf{(D)}\\)", "D"),
        ("Answer: \\(\\text{\\textbf{F}} \\$12,000\\)", "F"),
        ("Answer: \\( \\text{(B)}\\ v_1 > v_3 < v_2 \\)", "B"),
        ("\\[\n\\boxed{\\text{Answer: } J}\n\\]", "J"),
        ("\\text{Answer: } \\boxed{(A) 2.00 \\, \\text{m}^2}", "A"),
        ("So, the answer is \\( \\text{C. } 1,631 \\).", "C"),
        ("Answer: $\\mathrm{E}$", "E"),
        ("Answer: (e)", "E"),
        ("(c)", "C"),
    ],
)
def test_strict_accepts_explicit_forms(response: str, expected: str) -> None:
    result = parse_strict(response, TEN)
    assert (result.letter, result.fallback) == (expected, False)


@pytest.mark.parametrize(
    "response",
    [
        "",
        "I'm sorry, I can't help with that.",
        "A. first\nB. second\nC. third",
        "Answer: I think it depends.",
        "Answer: C or D",
        "Answer: (A)(D)",
        "Answer: K",
        "Answer: \\( \\text{(C)} \\) or \\( \\text{(D)} \\)",
        "\\boxed{A + B}",
        "\\boxed{(A)(D)}",
        "Answer: a bit of both",
        "(e)" + "",
    ],
)
def test_strict_refuses_to_guess(response: str) -> None:
    options = TEN[:4] if response == "(e)" else TEN  # `(e)` is outside A-D
    result = parse_strict(response, options)
    assert result.letter is None and not result.fallback


def test_strict_ignores_listing_before_the_answer() -> None:
    response = "Options:\nA. red\nB. green\nC. blue\n\nThe sky is blue.\nAnswer: C"
    assert parse_strict(response, ["red", "green", "blue"]).letter == "C"


def test_get_parser_by_name() -> None:
    strict = get_parser("strict")
    official = get_parser("mmmu_pro", seed=3)
    assert strict("Answer: B", TEN, "k").letter == "B"
    assert official("nothing here", TEN, "k") == official("nothing here", TEN, "k")
    with pytest.raises(ValueError):
        get_parser("nope")


_letters = st.sampled_from(list(string.ascii_uppercase[:10]))


def _ends_with_answer_line(text: str) -> bool:
    last = text.rstrip().rsplit("\n", 1)[-1]
    return parse_strict(last, TEN).letter is not None or "Answer:" in last


@settings(max_examples=300, deadline=None)
@given(prefix=st.text(max_size=400), letter=_letters)
def test_answer_line_wins_for_both_parsers(prefix: str, letter: str) -> None:
    if _ends_with_answer_line(prefix):
        return
    response = f"{prefix}\nAnswer: {letter}"
    assert parse_strict(response, TEN).letter == letter
    assert parse_mmmu_pro(response, TEN, row_rng(0, "p")).letter == letter


_option_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=40
)


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(_option_text, min_size=2, max_size=10),
    style=st.sampled_from(["{l}. {t}", "({l}) {t}", "{l}) {t}", "- {l}. {t}", "**{l}.** {t}"]),
    blank_lines=st.booleans(),
)
def test_option_listing_alone_is_never_an_answer(
    texts: list[str], style: str, blank_lines: bool
) -> None:
    lines = [
        style.format(l=string.ascii_uppercase[i], t=t.strip() or "x") for i, t in enumerate(texts)
    ]
    response = ("\n\n" if blank_lines else "\n").join(lines)
    assert parse_strict(response, texts).letter is None


# LaTeX wrappers that only change how a letter looks; nesting any of them must
# not change what the strict parser reads.
_WRAPPERS = ("\\text{%s}", "\\textbf{%s}", "\\mathrm{%s}", "\\mathbf{%s}", "\\( %s \\)",
             "$%s$", "\\[%s\\]", "\\text{ %s } ", "\\emph{%s}")  # fmt: skip


def _wrap(core: str, chain: list[str]) -> str:
    for wrapper in chain:
        core = wrapper % core
    return core


_chains = st.lists(st.sampled_from(_WRAPPERS), max_size=4)
_tails = st.sampled_from(["", " 2.00 \\, \\text{m}^2", "\\ v_1 > v_2", " \\$5,340."])


@settings(max_examples=300, deadline=None)
@given(
    letter=_letters,
    label=st.sampled_from(["%s", "(%s)", "%s."]),
    chain=_chains,
    tail=_tails,
    prefix=st.sampled_from(["", "So x = 4.\n\n", "Options:\nA. 1\nB. 2\n\n"]),
)
def test_latex_wrapped_letter_is_read(
    letter: str, label: str, chain: list[str], tail: str, prefix: str
) -> None:
    core = label % letter
    wrapped = _wrap(core + tail if label != "%s" else core, chain)
    assert parse_strict(f"{prefix}Answer: {wrapped}", TEN).letter == letter
    assert parse_strict(f"{prefix}\\boxed{{{wrapped}}}", TEN).letter == letter


@settings(max_examples=200, deadline=None)
@given(
    first=_letters, second=_letters, chain=_chains, joiner=st.sampled_from([" or ", ", ", " and "])
)
def test_latex_wrapped_two_letters_are_refused(
    first: str, second: str, chain: list[str], joiner: str
) -> None:
    both = f"{_wrap(first, chain)}{joiner}{_wrap(second, chain)}"
    assert parse_strict(f"Answer: {both}", TEN).letter is None


@settings(max_examples=100, deadline=None)
@given(chain=_chains)
def test_latex_wrapped_refusal_stays_unparseable(chain: list[str]) -> None:
    refusal = _wrap("I cannot determine the answer from the image.", chain)
    assert parse_strict(refusal, TEN).letter is None
