"""Option sets per item: the 4-option, 10-option and full sets, with letters re-assigned.

Policies (recorded on every manifest row as `option_policy`):

* `original_4` — the dataset's own original set (MMMU-Pro mix `options`),
  used for the 4-option level whenever an item has one, whatever its size.
* `as_is` — the item's options unchanged (the `all` level, or a level at or
  above the number of options the item has).
* `seeded_distractors` — the correct answer plus `level - 1` distractors
  drawn from the larger set by a seed derived from (design seed, item id,
  level); the options keep their relative order and get new letters.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace
from typing import Any

from itemshot.renderer.identity import same_text, visible_form
from itemshot.renderer.items import LETTERS, Item
from itemshot.renderer.seeds import derive_seed

ORIGINAL_4 = "original_4"
AS_IS = "as_is"
SEEDED = "seeded_distractors"

_MATH_DELIMITERS = re.compile(r"\$+")


@dataclass(frozen=True)
class OptionSet:
    """The options an item shows at one `n_options` level, and how they were chosen."""

    level: int | str
    options: tuple[str, ...]
    answer: int
    policy: str

    @property
    def answer_letter(self) -> str:
        """Return the letter of the correct option in this set."""
        return LETTERS[self.answer]

    @property
    def answer_text(self) -> str:
        """Return the text of the correct option."""
        return self.options[self.answer]


@dataclass(frozen=True)
class Inconsistency:
    """A disagreement between an item's option sets (answer text or distractors)."""

    item_id: str
    kind: str
    detail: str

    def as_record(self) -> dict[str, str]:
        """Return the inconsistency as a JSON-ready record."""
        return {"item_id": self.item_id, "kind": self.kind, "detail": self.detail}


def normalise_option(text: str) -> str:
    """Return option text in its visible form (`renderer.identity`), `$` math delimiters removed."""
    return visible_form(_MATH_DELIMITERS.sub("", text))


def same_option(a: str, b: str) -> bool:
    """Return whether two option texts are one option: identity after `$` delimiters are removed.

    The adapters compare options by the same identity, so a zero-width space
    or a Cyrillic look-alike does not make a set's option "another" one here.
    """
    return same_text(_MATH_DELIMITERS.sub("", a), _MATH_DELIMITERS.sub("", b))


def option_set(item: Item, level: int | str, seed: int) -> OptionSet:
    """Return the option set of `item` at `level` (4, 10 or "all")."""
    if level == 4 and item.options_4 is not None and item.answer_4 is not None:
        return OptionSet(level, item.options_4, item.answer_4, ORIGINAL_4)
    if level == "all" or len(item.options) <= int(level):
        return OptionSet(level, item.options, item.answer, AS_IS)
    rng = random.Random(derive_seed(seed, item.id, "option_set", level))
    others = [i for i in range(len(item.options)) if i != item.answer]
    keep = sorted([item.answer, *rng.sample(others, int(level) - 1)])
    options = tuple(item.options[i] for i in keep)
    return OptionSet(level, options, keep.index(item.answer), SEEDED)


def with_options(item: Item, chosen: OptionSet) -> Item:
    """Return a copy of `item` that shows exactly the options of `chosen`."""
    return replace(
        item, options=chosen.options, answer=chosen.answer, options_4=None, answer_4=None
    )


def answer_check(item: Item, chosen: OptionSet) -> str:
    """Return `identical`, `normalised` (the same option by `same_option`) or `differs`."""
    reference = item.options[item.answer]
    if chosen.answer_text == reference:
        return "identical"
    if same_option(chosen.answer_text, reference):
        return "normalised"
    return "differs"


def inconsistencies(item: Item) -> list[Inconsistency]:
    """Return every disagreement between an item's original set and its larger set."""
    if item.options_4 is None or item.answer_4 is None:
        return []
    found: list[Inconsistency] = []
    small = item.options_4[item.answer_4]
    large = item.options[item.answer]
    if small != large:
        kind = "answer_text_format" if same_option(small, large) else "answer_text"
        found.append(
            Inconsistency(
                item.id,
                kind,
                f"original set answer {LETTERS[item.answer_4]} {small!r} vs larger set answer "
                f"{LETTERS[item.answer]} {large!r}",
            )
        )
    missing = [
        text
        for index, text in enumerate(item.options_4)
        if index != item.answer_4 and not any(same_option(text, o) for o in item.options)
    ]
    if missing:
        found.append(
            Inconsistency(
                item.id, "distractor_not_in_larger_set", f"{len(missing)} option(s): {missing!r}"
            )
        )
    return found


def describe(chosen: OptionSet) -> dict[str, Any]:
    """Return the manifest fields that describe an option set."""
    return {"option_policy": chosen.policy, "n_shown": len(chosen.options)}
