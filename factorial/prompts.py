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

from itemshot.factorial.parsers import LETTERS

MODES = ("direct", "cot")

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


def builtin_prompts(mode: str, language: str = "en") -> PromptSet:
    """Return the MMMU-Pro prompts for `mode`, or JMMMU-Pro's for Japanese items."""
    if mode not in MODES:
        raise ValueError(f"prompt mode must be one of {', '.join(MODES)}, got {mode!r}")
    if language.lower().startswith("ja"):
        table = _JMMMU_PRO[mode]
        return PromptSet(f"jmmmu_pro-{mode}", table["standard"], table["vision"], "\n\n")
    table = _MMMU_PRO[mode]
    return PromptSet(f"mmmu_pro-{mode}", table["standard"], table["vision"])


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


def resolve_prompts(spec: str, language: str = "en") -> PromptSet:
    """Return the prompt set for `direct`, `cot`, or a template file path."""
    if spec in MODES:
        return builtin_prompts(spec, language)
    path = Path(spec)
    if not path.is_file():
        raise ValueError(f"--prompt must be direct, cot or an existing file, got {spec!r}")
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
