"""Whether the ink of a field supports its source text, as the second engine sees it.

A reader's best guess is one string; the image may support others nearly as
well. A handwriting "J" drawn as a hook is read ")" by both engines, yet the
recogniser gives "J" almost the same probability there: to the eye and to
the model the glyph is the source's "J". A changed digit is different: the
model is sure it sees "8" where the source says "5", and the source text
costs it many times more.

The test is forced alignment (CTC Viterbi). The recogniser's per-frame
class probabilities for each text line are aligned to the source text, the
lines consuming it in order with every frame explained, and the best
alignment's log-probability is compared with that of the model's own best
path. The difference (nats) is how much less likely the source text is than
what the model would have written; near zero means the ink supports it.
Spaces are optional (merged with the blank), because engines write them
inconsistently. An option's label may stand before its text: up to
LABEL_EM em of the first line are left to the model's own reading (the
label is checked on its own).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from itemshot.verify import second_reader

LABEL_EM = 2.5  # em of an option's first line its label may take ("(A)", "A.")
COSTLIEST = 4  # glyphs kept on the record


@dataclass(frozen=True)
class Support:
    """What each source glyph costs against the second engine's own best reading of the ink."""

    glyphs: str  # the source text without spaces, as aligned
    costs: tuple[float, ...]  # nats per glyph (its frames and the blanks after it)
    lines: int

    @property
    def gap(self) -> float:
        """Return the dearest glyph's cost (inf when the text could not be aligned at all)."""
        return max(self.costs, default=float("inf"))

    def as_dict(self) -> dict[str, object]:
        """Return the record kept in a region's measures: the dearest glyphs first."""
        order = sorted(range(len(self.costs)), key=lambda i: -self.costs[i])[:COSTLIEST]
        return {
            "engine": second_reader.ENGINE,
            "gap_nats": round(self.gap, 2),
            "costliest": [[self.glyphs[i], round(self.costs[i], 2)] for i in order],
            "lines": self.lines,
        }


def _targets(text: str) -> list[str] | None:
    """Return the text's characters without spaces as the recogniser writes them, or None.

    None if a character is outside the recogniser's dictionary.
    """
    index = second_reader.class_index()
    found: list[str] = []
    for char in text:
        if char.isspace():
            continue
        if char not in index:
            char = unicodedata.normalize("NFKC", char)
        if char not in index:
            return None
        found.append(char)
    return found


@dataclass(frozen=True)
class _Line:
    """One line's forced alignment: best score per state at every frame and how it got there."""

    score: np.ndarray  # frames × states
    came: np.ndarray  # frames × states: 0 stay, 1 step, 2 skip a blank, 3 start here


def _emissions(
    logp: np.ndarray, target: list[str], alike: Mapping[str, frozenset[str]]
) -> np.ndarray:
    """Return frames × target positions: the log-probability of each source glyph per frame.

    A glyph the font draws alike with others ("1" and "l") scores as the
    likeliest of them: the ink cannot tell them apart, and any of them is
    the source's glyph as drawn.
    """
    index = second_reader.class_index()
    columns: dict[str, np.ndarray] = {}
    for char in dict.fromkeys(target):
        classes = [index[c] for c in alike.get(char, frozenset()) | {char} if c in index]
        columns[char] = logp[:, classes].max(axis=1)
    return np.stack([columns[c] for c in target], axis=1)


def _viterbi_line(
    blank: np.ndarray,
    emit: np.ndarray,
    repeats: np.ndarray,
    start: np.ndarray,
    prefix_frames: int,
    best: np.ndarray,
) -> _Line:
    """Align one line to the source text, continuing from `start` (best score per position).

    State 2p is the blank after target[:p], state 2p+1 emits target[p]. The
    first `prefix_frames` frames may be read freely (an option's label),
    scoring the model's own `best` class.
    """
    frames, length = emit.shape
    states = 2 * length + 1
    skip = np.zeros(states, dtype=bool)
    skip[3::2] = ~repeats  # enter target[p] from target[p-1] directly unless it repeats it
    neg = -np.inf
    entry = np.full(states, neg)
    entry[0::2] = start
    entry[1::2] = start[:-1]
    score = np.full((frames, states), neg)
    came = np.zeros((frames, states), dtype=np.int8)
    free = 0.0
    for frame in range(frames):
        emission = np.empty(states)
        emission[0::2] = blank[frame]
        emission[1::2] = emit[frame]
        if frame == 0:
            options = np.stack(
                [np.full(states, neg), np.full(states, neg), np.full(states, neg), entry]
            )
        else:
            previous = score[frame - 1]
            step = np.concatenate(([neg], previous[:-1]))
            jump = np.where(skip, np.concatenate(([neg, neg], previous[:-2])), neg)
            restart = entry + free if frame <= prefix_frames else np.full(states, neg)
            options = np.stack([previous, step, jump, restart])
        came[frame] = options.argmax(axis=0)
        score[frame] = options.max(axis=0) + emission
        if frame < prefix_frames:
            free += float(best[frame])
    return _Line(score, came)


def _ends(line: _Line) -> np.ndarray:
    """Return the best score of having consumed target[:p] at the line's last frame."""
    last = line.score[-1]
    end = last[0::2].copy()
    end[1:] = np.maximum(end[1:], last[1::2])
    return end


def _end_state(line: _Line, position: int) -> int:
    """Return the state the best alignment ending at `position` finishes the line in."""
    last = line.score[-1]
    if position > 0 and last[2 * position - 1] > last[2 * position]:
        return 2 * position - 1
    return 2 * position


def _glyph_costs(
    aligned: list[_Line],
    blanks: list[np.ndarray],
    emits: list[np.ndarray],
    bests: list[np.ndarray],
    length: int,
) -> np.ndarray:
    """Return per source glyph what its frames cost against the model's best reading (nats).

    The best alignment is traced back line by line; a frame's cost is the
    best class's log-probability minus that of the state it was aligned to,
    and a blank's cost goes to the glyph before it.
    """
    costs = np.zeros(length)
    position = length
    for line, blank, emit, best in zip(
        reversed(aligned), reversed(blanks), reversed(emits), reversed(bests), strict=True
    ):
        state = _end_state(line, position)
        for frame in range(line.score.shape[0] - 1, -1, -1):
            glyph = max(0, (state - 1) // 2)
            forced = blank[frame] if state % 2 == 0 else emit[frame, state // 2]
            costs[min(glyph, length - 1)] += best[frame] - forced
            move = int(line.came[frame, state])
            if move == 3:
                break  # the line began here (frames before it were its label)
            state -= (0, 1, 2)[move]
        position = state // 2
    return costs


def support(
    crops: list[tuple[np.ndarray, float]],
    text: str,
    *,
    label: bool = False,
    alike: Mapping[str, frozenset[str]] | None = None,
) -> Support | None:
    """Return how well normalised crops (grey, font px), read in order, support `text`.

    None when the crops hold no line or the text has a character outside the
    recogniser's dictionary. With `label`, the first line may begin with an
    option label the text does not hold. `alike` maps a glyph to those the
    font draws alike with it.
    """
    target = _targets(text)
    lines = [(line, px) for grey, px in crops for line in second_reader.split_lines(grey, px)]
    if target is None or not target or not lines:
        return None
    repeats = np.asarray([a == b for a, b in pairwise(target)], dtype=bool)
    space = second_reader.space_index()
    scores = np.full(len(target) + 1, -np.inf)
    scores[0] = 0.0
    aligned: list[_Line] = []
    blanks, emits, bests = [], [], []
    log_probs = second_reader.line_log_probs([line for line, _px in lines])
    for number, ((line, font_px), logp) in enumerate(zip(lines, log_probs, strict=True)):
        blank = np.logaddexp(logp[:, 0], logp[:, space])
        others = logp.copy()
        others[:, [0, space]] = -np.inf
        best = np.maximum(blank, others.max(axis=1))
        emit = _emissions(logp, target, alike or {})
        prefix = 0
        if label and number == 0:
            frames_per_em = logp.shape[0] * font_px / max(1, line.shape[1])
            prefix = int(np.ceil(LABEL_EM * frames_per_em))
        aligned.append(_viterbi_line(blank, emit, repeats, scores, prefix, best))
        blanks.append(blank)
        emits.append(emit)
        bests.append(best)
        scores = _ends(aligned[-1])
    if not np.isfinite(scores[-1]):
        return Support("".join(target), (), len(lines))
    costs = _glyph_costs(aligned, blanks, emits, bests, len(target))
    return Support("".join(target), tuple(float(max(0.0, c)) for c in costs), len(lines))
