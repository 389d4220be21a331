"""Prompts for the standard and vision settings, direct and chain-of-thought.

Wording sources (data, quoted verbatim):
* MMMU-Pro: `mmmu-pro/prompts.yaml` in MMMU-Benchmark/MMMU (Apache-2.0). The
  standard layout (question, `A. …` option lines, instruction, joined by
  newlines) follows that repository's `infer/infer_gpt.py`. One deliberate
  difference: that script rewrites `<image N>` tags to a bare `<image>`; here
  the numbered tags are kept, because with figures as options (`<image 3>`)
  a bare tag makes shuffled option orders indistinguishable to the model.
* JMMMU-Pro: the `jmmmu_pro_*` task files of EvolvingLMMs-Lab/lmms-eval
  (`jmmmu_pro_vision.yaml`, `jmmmu_pro_vision_cot.yaml`,
  `jmmmu_pro_standard_cot.yaml`; the direct standard instruction is the
  default `post_prompt` of its `utils.construct_prompt`). Its standard layout
  puts a blank line before the instruction.

The reading probes follow the seeds' setups; their wording is itemshot's own,
since neither seed publishes its transcription prompt:
* `transcribe` (JMMMU-Pro's OCR analysis): write out the question and every
  option, not the text inside figures (nor captions, page headers, question
  numbers: the scenes draw them, the source text has none), formulas as
  `$…$` LaTeX, nothing else.
* `ocr_then_answer` (MMMU-Pro's OCR-prompt condition): the CoT vision wording
  ("Write out the multiple-choice question in the image and then solve it")
  with the transcription fenced by `<transcript>` … `</transcript>` lines, so
  the transcript can be scored and the answer parsed from the text after it.
  Text formats have nothing to transcribe: they get the CoT standard wording.

A user template is a YAML (or JSON) file with `standard` and `vision`
instructions, the shape of MMMU-Pro's `prompts.yaml` for one mode; a plain
text file is used as the instruction for every format. A `standard`
instruction that contains `{question}` and `{options}` is used as the whole
text instead of the default layout.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from itemshot.factorial.answers.parsers import LETTERS

MODES = ("direct", "cot", "ocr_then_answer")
TRANSCRIBE = "transcribe"
TRANSCRIPT_OPEN = "<transcript>"
TRANSCRIPT_CLOSE = "</transcript>"

_MMMU_PRO = {
    "cot": {
        "vision": (
            "Write out the multiple-choice question in the image and then solve it. The last "
            "line of your response should be of the following format: 'Answer: $LETTER' "
            "(without quotes) where LETTER is one of options. Think step by step before "
            "answering."
        ),
        "standard": (
            "Answer the preceding multiple choice question. The last line of your response "
            "should be of the following format: 'Answer: $LETTER' (without quotes) where "
            "LETTER is one of options. Think step by step before answering."
        ),
    },
    "direct": {
        "vision": (
            "Answer with the option letter from the given choices directly. The last line of "
            "your response should be of the following format: 'Answer: $LETTER' (without "
            "quotes) where LETTER is one of options."
        ),
        "standard": "Answer with the option letter from the given choices directly.",
    },
}

_MMMU_PRO["ocr_then_answer"] = {
    "vision": (
        "Write out the multiple-choice question in the image and then solve it. First copy "
        "the question text and every option exactly as they appear in the image (not the "
        "text inside figures, captions, page headers or question numbers), each option on its own line starting with its letter, "
        f"between a line {TRANSCRIPT_OPEN} and a line {TRANSCRIPT_CLOSE}. Write formulas "
        "in LaTeX between $ signs. Then solve the question. The last line of your response "
        "should be of the following format: 'Answer: $LETTER' (without quotes) where LETTER "
        "is one of options. Think step by step before answering."
    ),
    "standard": _MMMU_PRO["cot"]["standard"],
}

_TRANSCRIBE = {
    "en": (
        "Transcribe the multiple-choice question in the image. Write out the question text "
        "and every option exactly as they appear, each option on its own line starting with "
        "its letter (for example 'A. ...'). Leave out the text inside figures, charts and "
        "diagrams, figure captions, page headers and footers, and question numbers and "
        "points. Write formulas in LaTeX between $ signs. "
        "Output only the transcription, with no answer and no comments."
    ),
    "ja": (
        "画像の選択式問題を書き起こしてください。問題文とすべての選択肢を、書かれているとおり"
        "正確に書き写してください。各選択肢は改行し、その記号から書き始めてください"
        "（例：「A. …」）。図・グラフの中の文字、図の見出し、ページのヘッダーやフッター、"
        "問題番号や配点は書き起こさないでください。数式は $ で"
        "囲んだ LaTeX で書いてください。書き起こした文章だけを出力し、解答や説明は書かないで"
        "ください。"
    ),
}

_JMMMU_PRO = {
    "cot": {
        "vision": (
            "あなたの役割は画像で与えられた問題を解くことです。あなたの回答の最終行は、"
            "次の形式にしてください：'答え: $LETTER'（引用符なし）。ここで LETTER は"
            "選択肢のいずれかの文字です。答える前に step by step で考えてください。"
        ),
        "standard": (
            "次の選択式問題に答えてください。あなたの回答の最終行は、次の形式にしてください："
            "'答え: $LETTER'（引用符なし）。ここで LETTER は選択肢のいずれかの文字です。"
            "答える前に step by step で考えてください。"
        ),
    },
    "direct": {
        "vision": (
            "あなたの役割は画像で与えられた問題を解くことです。"
            "与えられた選択肢の中から最も適切な回答のアルファベットを直接記入してください。"
        ),
        "standard": (
            "与えられた選択肢の中から最も適切な回答のアルファベットを直接記入してください。"
        ),
    },
}
_JMMMU_PRO["ocr_then_answer"] = {
    "vision": (
        "画像の選択式問題を書き起こしてから解いてください。まず、問題文とすべての選択肢を画像に"
        "書かれているとおり正確に（図の中の文字、図の見出し、ヘッダー、問題番号は除く）、"
        "各選択肢を改行してその記号から書き始め、"
        f"{TRANSCRIPT_OPEN} の行と {TRANSCRIPT_CLOSE} の行の間に書き写してください。数式は $ で"
        "囲んだ LaTeX で書いてください。次に問題を解いてください。あなたの回答の最終行は、次の"
        "形式にしてください：'答え: $LETTER'（引用符なし）。ここで LETTER は選択肢のいずれかの"
        "文字です。答える前に step by step で考えてください。"
    ),
    "standard": _JMMMU_PRO["cot"]["standard"],
}


@dataclass(frozen=True)
class PromptSet:
    """The instructions for one prompt choice: standard (text) and vision (image) settings."""

    name: str
    standard: str
    vision: str
    separator: str = "\n"

    @property
    def digest(self) -> str:
        """Return a short hash of the wording, used in cache keys."""
        text = "\x1f".join((self.standard, self.vision, self.separator))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _japanese(language: str) -> bool:
    return language.lower().startswith("ja")


def builtin_prompts(mode: str, language: str = "en") -> PromptSet:
    """Return the MMMU-Pro prompts for `mode`, or JMMMU-Pro's for Japanese items."""
    if mode == TRANSCRIBE:
        return transcription_prompts(language)
    if mode not in MODES:
        choices = ", ".join((*MODES, TRANSCRIBE))
        raise ValueError(f"prompt mode must be one of {choices}, got {mode!r}")
    if _japanese(language):
        table = _JMMMU_PRO[mode]
        return PromptSet(f"jmmmu_pro-{mode}", table["standard"], table["vision"], "\n\n")
    table = _MMMU_PRO[mode]
    return PromptSet(f"mmmu_pro-{mode}", table["standard"], table["vision"])


def transcription_prompts(language: str = "en") -> PromptSet:
    """Return the transcription probe's prompt (English, or Japanese for Japanese items)."""
    instruction = _TRANSCRIBE["ja" if _japanese(language) else "en"]
    name = f"{'jmmmu_pro' if _japanese(language) else 'mmmu_pro'}-{TRANSCRIBE}"
    return PromptSet(name, instruction, instruction)


def prompt_mode(name: str) -> str:
    """Return the built-in mode of a recorded prompt name (`mmmu_pro-cot` → `cot`), else the name."""
    family, _, mode = name.rpartition("-")
    if family in ("mmmu_pro", "jmmmu_pro") and mode in (*MODES, TRANSCRIBE):
        return mode
    return name


def load_prompt_file(path: Path) -> PromptSet:
    """Return the prompts of a user template file (YAML/JSON mapping or plain text)."""
    text = path.read_text(encoding="utf-8")
    loaded = yaml.safe_load(text) if path.suffix.lower() in (".yaml", ".yml", ".json") else None
    if isinstance(loaded, dict):
        lowered = {str(key).lower(): value for key, value in loaded.items()}
        standard = lowered.get("standard")
        vision = lowered.get("vision")
        if not isinstance(standard, str) or not isinstance(vision, str):
            raise ValueError(
                f"{path.name}: a prompt file needs string 'standard' and 'vision' keys"
            )
        return PromptSet(f"file:{path.name}", standard, vision)
    instruction = text.strip()
    if not instruction:
        raise ValueError(f"{path.name}: the prompt file is empty")
    return PromptSet(f"file:{path.name}", instruction, instruction)


def is_builtin(spec: str) -> bool:
    """Return whether `spec` names a built-in prompt (its wording follows the item language)."""
    return spec in MODES or spec == TRANSCRIBE


def resolve_prompts(spec: str, language: str = "en") -> PromptSet:
    """Return the prompt set for a built-in mode or a template file path."""
    if is_builtin(spec):
        return builtin_prompts(spec, language)
    path = Path(spec)
    if not path.is_file():
        names = ", ".join((*MODES, TRANSCRIBE))
        raise ValueError(f"--prompt must be one of {names} or an existing file, got {spec!r}")
    return load_prompt_file(path)


def format_options(options: Sequence[str]) -> str:
    """Return the options as `A. …` lines."""
    return "\n".join(f"{LETTERS[i]}. {option}" for i, option in enumerate(options))


def standard_text(question: str, options: Sequence[str], prompts: PromptSet) -> str:
    """Return the standard-setting text: question, option lines, instruction."""
    listing = format_options(options)
    if "{question}" in prompts.standard and "{options}" in prompts.standard:
        return prompts.standard.replace("{question}", question).replace("{options}", listing)
    return f"{question}\n{listing}{prompts.separator}{prompts.standard}"


def options_text(options: Sequence[str], prompts: PromptSet) -> str:
    """Return option lines followed by the vision instruction (question shown in the image)."""
    return f"{format_options(options)}{prompts.separator}{prompts.vision}"
