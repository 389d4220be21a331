"""Which catalogue face drew a page with no layout record, told from its ink.

Region mode knows the face each region was set in, and three of its steps
depend on it: tokens read as the face draws them (a handwritten "1" is a
bare stroke), labels drawn alike in the face, and the ink settler, which
draws the source's tokens in that face. An image with no record (generated
or made elsewhere) says nothing of its face; but its words that were read
exactly are known to be shown, so each candidate face draws them and the
face whose drawing matches the ink best, by a clear lead, is the face. A
page no face fits that well keeps no face, and those steps stay off.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from itemshot.fonts.catalogue import STYLES, choose_fonts
from itemshot.verify.settlers import ink
from itemshot.verify.thresholds import Thresholds

_PROBE = re.compile(r"[^\W\d_]+")
MIN_OPENING = 3  # characters: a shorter opening ("1") fits a stroke of any size


@dataclass(frozen=True)
class DrawnFace:
    """The face that drew a page: its family, its drawn size per estimated px, the evidence."""

    family: str
    size: int  # px its glyphs are drawn at (the probes' median)
    reference_px: float  # the size estimated from the OCR boxes of the lines the probes are on
    score: float  # the probe words' mean match with the ink in this face
    runner_up: str  # the next best face
    runner_up_score: float
    probes: tuple[str, ...]  # the words drawn

    def as_dict(self) -> dict[str, object]:
        """Return the evidence as a JSON-ready record for the region's measures."""
        return {
            "family": self.family,
            "size": self.size,
            "reference_px": round(self.reference_px, 2),
            "score": round(self.score, 4),
            "runner_up": self.runner_up,
            "runner_up_score": round(self.runner_up_score, 4),
            "probes": list(self.probes),
        }

    def drawn_px(self, estimated_px: float) -> float:
        """Return the drawn size of text whose OCR boxes estimate `estimated_px`."""
        return self.size * estimated_px / max(self.reference_px, 1e-6)

    def fitted_px(
        self, crop: np.ndarray, text: str, estimated_px: float, thresholds: Thresholds
    ) -> float | None:
        """Return the size a field's text is drawn at in `crop`, found from its ink.

        An OCR box's height is a poor gauge of a field whose words are
        brackets and symbols: "(C) [Ca2+]" boxes 45% taller than the stem's
        words, and the ink drawn at the size that implies matches nothing. So
        the field's opening words are drawn in the face at every size between
        the page's and that estimate, and the best fit is the size. None when
        the opening is too short to tell a size by, or no drawing matches the
        ink by `ink_min_match`.
        """
        shown = opening(text, int(thresholds.face_opening_chars))
        if len(shown.replace(" ", "")) < MIN_OPENING:
            return None
        low = max(6, round(min(self.size, estimated_px) * ink.SCALES[0]))
        high = max(low, round(max(self.size, estimated_px) * ink.SCALES[-1]))
        score, size = ink.face_fit([crop], shown, self.family, range(low, high + 1), thresholds)
        return float(size) if score >= thresholds.ink_min_match else None


def opening(text: str, limit: int) -> str:
    """Return the first words of `text` up to `limit` characters (the first word at least)."""
    words = text.split()
    shown = words[:1]
    for word in words[1:]:
        if len(" ".join([*shown, word])) > limit:
            break
        shown.append(word)
    return " ".join(shown)


@dataclass(frozen=True)
class Probe:
    """A word read exactly as the source has it: its text, its ink and its estimated size."""

    text: str
    crop: np.ndarray  # normalised grey (dark ink on white) around the word
    font_px: float  # the size estimated from its OCR box


@lru_cache(maxsize=8)
def candidate_families(language: str) -> tuple[str, ...]:
    """Return the first face of every style role for a language, once each."""
    return tuple(dict.fromkeys(choose_fonts(style, language).faces[0].family for style in STYLES))


def is_probe(word: str, source_words: set[str], thresholds: Thresholds) -> bool:
    """Return whether an OCR word is a source word of letters, long enough to tell faces by."""
    letters = _PROBE.fullmatch(word) is not None
    long = len(word) >= int(thresholds.face_probe_letters)
    return letters and long and word.casefold() in source_words


def as_source_spells(word: str, source_text: str) -> str:
    """Return a probe word in the source's own letter case, which is what the page draws.

    OCR reads a case it cannot tell apart in a face ("Position" for a
    handwritten "position?"): drawn in the case read, the probe fits the
    face that drew it badly. A word the source spells both ways is kept as read.
    """
    spellings = {w for w in _PROBE.findall(source_text) if w.casefold() == word.casefold()}
    return word if word in spellings or len(spellings) != 1 else spellings.pop()


def longest_probes(
    words: Iterable[str], source_words: set[str], thresholds: Thresholds
) -> list[str]:
    """Return the longest probe words among OCR words (`face_probes` of them, once each)."""
    probes = [w for w in dict.fromkeys(words) if is_probe(w, source_words, thresholds)]
    return sorted(probes, key=len, reverse=True)[: int(thresholds.face_probes)]


def identify_face(
    probes: list[Probe], reference_px: float, language: str, thresholds: Thresholds
) -> DrawnFace | None:
    """Return the catalogue face whose drawings of the probe words fit their ink best.

    The probes are chosen by `longest_probes`. Each face is tried over the
    sizes a face of any x-height may be drawn at for a word of that box.
    None when there is no probe, or no face fits well enough (their mean
    match under `ink_min_match`, the least a token's drawing must match),
    or two faces fit about as well (within `face_lead`).
    """
    if not probes:
        return None
    fits: list[tuple[float, int, str]] = []
    for family in candidate_families(language):
        scores, sizes = [], []
        for probe in probes:
            low = max(6, round(probe.font_px * thresholds.face_size_low))
            high = max(low, round(probe.font_px * thresholds.face_size_high))
            tried = range(low, high + 1)
            score, size = ink.face_fit([probe.crop], probe.text, family, tried, thresholds)
            scores.append(score)
            sizes.append(size)
        fits.append((float(np.mean(scores)), round(float(np.median(sizes))), family))
    fits.sort(reverse=True)
    (score, size, family), (second, _size, other) = fits[0], fits[1]
    if score < thresholds.ink_min_match or score - second < thresholds.face_lead:
        return None
    texts = tuple(p.text for p in probes)
    return DrawnFace(family, size, reference_px, score, other, second, texts)
