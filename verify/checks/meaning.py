"""Word-level accounting: every word of the source shown in its place, read as itself.

A field can score 0.95 on character accuracy and still say the opposite of
its source: one word ("most" drawn as "least", a dropped "NOT") is a few
characters of a long stem. Here the source's words are aligned with a
reading's words (a word-level edit distance whose substitution cost is the
character distance of the two words, with OCR's merges and splits of words
free), and each source word is judged in its place:

- *shown*: the reading has the word there (letter case, accents and the
  glyphs OCR confuses — `verify.checks.lookalikes` — aside);
- *changed*: the reading has a different word there that is itself a
  plausible word of the language (its `wordfreq` Zipf frequency is at least
  `Thresholds.meaning_word_zipf`) and is no OCR look-alike of the source's
  word: a person reading the image reads that other word;
- *dropped*: a critical word (negation, quantifier, comparative, direction)
  with nothing in its place.

A changed word fails whether it is critical or not, except a short
non-critical one (`Thresholds.meaning_min_letters`), where one engine's misreading into
another real word ("in" for "on") is common and a person's reading rarely
differs. A critical word the reading shows that the source does not have in
that place (a "not" added) fails too. Numbers are the token checks' job
(`verify.checks.tokens`); here only words of letters are accounted.

Each reason names the words as typed tokens (`Reason.tokens`): a settler
asking another reading or the ink about the field drops exactly the words
its evidence shows.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz.distance import Levenshtein

from itemshot.verify.checks.lookalikes import fold_word
from itemshot.verify.reading.text import has_cjk, normalise
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS, Thresholds
from itemshot.verify.verdicts import Reason, ReasonCode


def _words(spaced: str) -> frozenset[str]:
    return frozenset(spaced.split())


# Words whose change reverses what a question asks or states. Inflections are listed: a
# stem says "increases", and "decreases" is what its change reads.
NEGATIONS = _words(
    "not no never none nor neither except cannot without nothing nobody nowhere "
    "isn't aren't doesn't don't didn't wasn't weren't won't can't shouldn't wouldn't"
)
QUANTIFIERS = _words(
    "all any each every some most least only both either few many more less fewer "
    "always sometimes often rarely usually mostly majority minority"
)
COMPARATIVES = _words(
    "greater greatest higher highest lower lowest larger largest smaller smallest better best "
    "worse worst maximum minimum max min faster fastest slower slowest longer longest shorter "
    "shortest stronger strongest weaker weakest earlier earliest later latest first last "
    "increase increases increased increasing decrease decreases decreased decreasing "
    "rise rises fall falls "
    # The degrees themselves: "the low strain test" read "high" is the other test.
    "high low large small big long short fast slow strong weak early late heavy light "
    "hot cold wide narrow thick thin deep shallow"
)
DIRECTIONS = _words(
    "left right above below up down top bottom upper under over inside outside north south "
    "east west clockwise counterclockwise anticlockwise forward backward inward outward "
    "positive negative true false correct incorrect same different before after "
    "agree disagree"
)
CRITICAL = NEGATIONS | QUANTIFIERS | COMPARATIVES | DIRECTIONS
# A critical word added where the source has none changes the question only if it negates.
ADDED_CRITICAL = NEGATIONS

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")
GAP = 1.0  # cost of a word one side has and the other does not
MAX_BLOCK = 6400  # word pairs: an unshared stretch of 80 x 80 words is aligned, no longer
# A neighbour that places a word: read with at most one edit per this many letters.
NEIGHBOUR_MISREAD = 3
STRAY_DISTANCE = 0.67  # share of a word's letters a stray run in its place differs by
MAX_MERGE = 4  # source words one read word may run together ("anddowantto")
MERGE_SLACK = 0.34  # share of their letters a merge's read word may differ by (length, edits)
LENGTH_PREFERENCE = 0.01  # a like-length pairing is this much cheaper: breaks ties only
# Share of their letters two words differ by past which they are unrelated: "I" and
# "species" (one letter of seven), not "U" and "aue" (a handwritten "ΔU =" run together).
UNRELATED = 0.75
LANGUAGES = {"eng": "en"}  # tesseract language -> wordfreq language; others are not accounted


@dataclass(frozen=True)
class Placed:
    """What a reading shows in one source word's place."""

    index: int  # the source word's index
    word: str  # the source word (case-folded)
    read: str | None  # the reading's word there, None when it has none


def split_words(text: str) -> list[str]:
    """Return the words of letters of a text, normalised and case-folded, in order."""
    return [w.casefold() for w in _WORD.findall(_spelled(text))]


def _spelled(text: str) -> str:
    return normalise(text).replace("’", "'")


def referents(text: str) -> frozenset[int]:
    """Return the indices (as in `split_words`) of the text's one-letter referents.

    A letter that names something ("position labelled b)", "(c)", "point B")
    carries the meaning a word does: "a)" shown as "b)" points elsewhere. A
    referent is a lowercase letter marked by a parenthesis, or a capital
    standing alone that is no English word ("A" and "I" are read as words).
    """
    spelled = _spelled(text)
    found = set()
    for index, match in enumerate(_WORD.finditer(spelled)):
        word, at, end = match.group(), match.start(), match.end()
        if len(word) != 1:
            continue
        marked = spelled[end : end + 1] == ")" or spelled[at - 1 : at] == "("
        if marked or (word.isupper() and word not in "AI"):
            found.add(index)
    return frozenset(found)


def align(source: Sequence[str], reading: Sequence[str]) -> list[Placed]:
    """Return, for each source word, the reading's word in its place (word-level alignment).

    Substituting one word for another costs twice their normalised
    character distance (a misread word costs little, a different word
    almost a drop and an insertion); a source word with none costs `GAP`,
    and so does a reading word with none. Two source words read as one
    ("astroke") or one read as two ("fig ure") cost nothing: OCR's spacing
    is no content. The words both sides share are matched first (an exact
    word-level edit script, in C); only what lies between is aligned word
    by word.
    """
    folded_source = [fold_word(w) for w in source]
    folded_reading = [fold_word(w) for w in reading]
    placed: list[Placed] = []
    for equal, i1, i2, j1, j2 in _stretches(folded_source, folded_reading):
        if equal:
            placed += [Placed(i, source[i], reading[j1 + i - i1]) for i in range(i1, i2)]
            continue
        # The stretch between shared words (a merge or split lies inside it: its words
        # equal none of the other side's).
        block = _align_block(source[i1:i2], reading[j1:j2])
        placed += [Placed(p.index + i1 if p.index >= 0 else -1, p.word, p.read) for p in block]
    return placed


def _stretches(source: list[str], reading: list[str]) -> list[tuple[bool, int, int, int, int]]:
    """Return the exact word-level edit script as runs: shared words, and what lies between."""
    runs: list[tuple[bool, int, int, int, int]] = []
    for tag, i1, i2, j1, j2 in Levenshtein.opcodes(source, reading):
        equal = tag == "equal"
        if runs and not equal and not runs[-1][0]:
            _e, a1, _a2, b1, _b2 = runs[-1]
            runs[-1] = (False, a1, i2, b1, j2)
        else:
            runs.append((equal, i1, i2, j1, j2))
    return runs


def _align_block(source: Sequence[str], reading: Sequence[str]) -> list[Placed]:
    """Return the word-by-word alignment of a short stretch (dynamic programming).

    A stretch too long to align word by word (a reading that is mostly
    noise) shows none of its source words.
    """
    n, m = len(source), len(reading)
    if n * m > MAX_BLOCK:
        return [Placed(i, word, None) for i, word in enumerate(source)]
    inf = float("inf")
    cost = [[inf] * (m + 1) for _ in range(n + 1)]
    step: list[list[tuple[int, int] | None]] = [[None] * (m + 1) for _ in range(n + 1)]
    cost[0][0] = 0.0
    for i in range(n + 1):
        for j in range(m + 1):
            here = cost[i][j]
            if here == inf:
                continue
            moves: list[tuple[int, int, float]] = []
            if i < n and j < m:
                moves.append((1, 1, _substitution(source[i], reading[j])))
            if i < n:
                moves.append((1, 0, GAP))
            if j < m:
                moves.append((0, 1, GAP))
            if i + 1 < n and j < m and _same(source[i] + source[i + 1], reading[j]):
                moves.append((2, 1, 0.0))
            elif i + 1 < n and j < m:
                moves += _merges(source, i, reading[j])
            if i < n and j + 1 < m and _same(source[i], reading[j] + reading[j + 1]):
                moves.append((1, 2, 0.0))
            for di, dj, extra in moves:
                if here + extra < cost[i + di][j + dj]:
                    cost[i + di][j + dj] = here + extra
                    step[i + di][j + dj] = (di, dj)
    placed: list[Placed] = []
    i, j = n, m
    while i or j:
        move = step[i][j]
        assert move is not None
        di, dj = move
        if di == 1 and dj == 1:
            placed.append(Placed(i - 1, source[i - 1], reading[j - 1]))
        elif di == 1 and dj == 0:
            placed.append(Placed(i - 1, source[i - 1], None))
        elif di == 2 and _same(source[i - 2] + source[i - 1], reading[j - 1]):
            # Two source words read as one: both shown.
            placed += [Placed(i - 1, source[i - 1], source[i - 1])]
            placed += [Placed(i - 2, source[i - 2], source[i - 2])]
        elif di > 1:  # several source words read as one word, misread: each shows its piece
            pieces = _pieces(source[i - di : i], reading[j - 1])
            placed += [
                Placed(i - di + k, source[i - di + k], piece or None)
                for k, piece in reversed(list(enumerate(pieces)))
            ]
        elif dj == 2:
            placed.append(Placed(i - 1, source[i - 1], source[i - 1]))
        else:  # a reading word the source lacks: recorded as a place of index -1
            placed.append(Placed(-1, "", reading[j - 1]))
        i, j = i - di, j - dj
    placed.reverse()
    return placed


def _merges(source: Sequence[str], i: int, read: str) -> list[tuple[int, int, float]]:
    """Return the moves reading source words i, i+1, … (two to `MAX_MERGE`) as one read word.

    OCR drops the spaces of a tight line ("anddowantto" for "and don't want
    to"): paired with one of those words, the read word hides what it shows
    of the others, and a misread merge (a dropped "n't") goes unseen. A merge
    costs what showing the words' concatenation as the read word costs, and
    is tried only for a read word that differs from the concatenation in
    few letters.
    """
    moves = []
    joined = source[i]
    for k in range(2, MAX_MERGE + 1):
        if i + k > len(source):
            break
        joined += source[i + k - 1]
        if abs(len(joined) - len(read)) > MERGE_SLACK * len(joined):
            continue
        if _distance(joined, read) <= MERGE_SLACK:  # most letters read: no chance likeness
            moves.append((k, 1, _substitution(joined, read)))
    return moves


def _pieces(words: Sequence[str], read: str) -> list[str]:
    """Return the part of one read word that shows each of several source words run together.

    The read word is cut where the character alignment of the words'
    concatenation with it puts each word's last character ("and", "do",
    "want", "to" of "anddowantto"); a word none of whose characters is read
    shows "".
    """
    joined = "".join(words)
    read_at: list[int | None] = [None] * len(joined)
    # On the words as split (already case-folded), not look-alike folded: folding "rn" to "m"
    # changes lengths, and the indices would then cut the read word in the wrong places.
    for tag, i1, i2, j1, j2 in Levenshtein.opcodes(joined, read):
        if tag in ("equal", "replace") and j2 > j1:
            for d in range(i2 - i1):
                read_at[i1 + d] = j1 + min(d, j2 - j1 - 1)
    pieces, start, at = [], 0, 0
    for k, word in enumerate(words):
        shown = [j for j in read_at[at : at + len(word)] if j is not None]
        end = len(read) if k == len(words) - 1 else max([start, *(j + 1 for j in shown)])
        pieces.append(read[start:end])
        start, at = end, at + len(word)
    return pieces


def _distance(a: str, b: str) -> float:
    return Levenshtein.normalized_distance(fold_word(a), fold_word(b))


def _substitution(source_word: str, read_word: str) -> float:
    """Return the cost of showing a source word as a read word.

    Two unrelated words cost the same whatever their lengths, so a changed
    word could pair with a stray one-letter reading beside it as cheaply as
    with its own replacement ("below" → "above" beside a math "N" the source
    text lacks). A pairing of words of like length is a little cheaper, which
    breaks that tie without outweighing any letter that differs.
    """
    longer = max(len(source_word), len(read_word), 1)
    alike = 1.0 - abs(len(source_word) - len(read_word)) / longer
    distance = _distance(source_word, read_word)
    # Words differing in nearly all their letters are unrelated, one shared letter or none:
    # "I" shown as "species" (a letter of seven) is no closer a pairing than "current" is.
    unrelated = 1.0 if distance > UNRELATED else distance
    return 2.0 * unrelated - LENGTH_PREFERENCE * alike


def _same(a: str, b: str) -> bool:
    return fold_word(a) == fold_word(b)


def _edits(a: str, b: str) -> int:
    """Return the characters two words differ by, OCR look-alikes folded."""
    return Levenshtein.distance(fold_word(a), fold_word(b))


@lru_cache(maxsize=65536)
def zipf(word: str, language: str) -> float:
    """Return the word's Zipf frequency in the language (0 for a word never seen)."""
    from wordfreq import zipf_frequency

    return float(zipf_frequency(word, language))


def plausible(word: str, language: str, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> bool:
    """Return whether a reading's word is a real word a person would read there."""
    return len(word) >= 2 and zipf(word, language) >= thresholds.meaning_word_zipf


def _stripped(word: str) -> str:
    """Return the word without accents (an accent misread is no other word)."""
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


def _possessed(word: str) -> str:
    """Return the word without a possessive ending ("candidate's", "states'"); "n't" is kept."""
    return fold_word(re.sub(r"'s?$", "", word))


def changed_to(
    word: str,
    read: str,
    language: str,
    thresholds: Thresholds,
    vocabulary: frozenset[str] = frozenset(),
) -> bool:
    """Return whether `read`, in `word`'s place, is another word a person would read there.

    A reading is a word a person reads when it is common in the language, or
    a word the item itself uses (`vocabulary`): two options a word apart,
    swapped, show each other's rare word ("opiates" for "methamphetamines").
    """
    if _same(_stripped(word), _stripped(read)):
        return False
    if _possessed(word) == _possessed(read):  # "candidate's" read "candidate": an apostrophe lost
        return False
    if word not in CRITICAL and len(word) < thresholds.meaning_min_letters:
        return False
    if not (plausible(read, language, thresholds) or read in vocabulary):
        return False
    # One character off ("lover" for "lower") in a long word is a misread glyph as often as
    # another word; a critical word has no such slack: "most" and "host" are both read.
    edits = _edits(word, read)
    return edits >= thresholds.meaning_min_edits or word in CRITICAL


@dataclass(frozen=True)
class WordFinding:
    """One word the reading does not show as the source has it."""

    code: ReasonCode
    index: int  # source word index; -1 for a word the source does not have
    word: str  # the source's word ("" for an added one)
    read: str  # what the reading shows there ("" for a dropped one)

    @property
    def token(self) -> str:
        """Return the finding's token: its word and place, the key settlers drop it by."""
        return f"{self.word or self.read}@{self.index}"

    def describe(self) -> str:
        """Return the finding in words for the reason's detail."""
        if self.code is ReasonCode.WORD_CHANGED:
            return f"{self.word!r} read as {self.read!r}"
        if self.code is ReasonCode.WORD_ADDED:
            return f"{self.read!r} shown where the source has no such word"
        return f"{self.word!r} not shown"


def language_of(lang: str) -> str | None:
    """Return the word list's language for a tesseract language, None when not accounted."""
    return LANGUAGES.get(lang)


def findings(
    text: str,
    reading: str,
    language: str = "en",
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    vocabulary: frozenset[str] = frozenset(),
) -> list[WordFinding]:
    """Return the source words one reading shows otherwise (changed, dropped or added).

    `vocabulary` is every word of the item (`changed_to`).
    """
    if has_cjk(text):
        return []
    source = split_words(text)
    if not source:
        return []
    found: list[WordFinding] = []
    letters = referents(text)
    placed = align(source, split_words(reading))
    for k, place in enumerate(placed):
        if place.index < 0:
            read = place.read or ""
            # A word the source lacks: only a negation changes what is asked, and only
            # one read between the source's words, not a stray word at either end.
            inside = 0 < k < len(placed) - 1
            if inside and read in ADDED_CRITICAL and plausible(read, language, thresholds):
                found.append(WordFinding(ReasonCode.WORD_ADDED, -1, "", read))
            continue
        critical = place.word in CRITICAL
        if place.read is None or (critical and _stray(place, language, thresholds)):
            if critical:
                found.append(WordFinding(ReasonCode.WORD_DROPPED, place.index, place.word, ""))
            continue
        if place.index in letters:
            if len(place.read) == 1 and not _same(place.word, place.read):
                found.append(
                    WordFinding(ReasonCode.WORD_CHANGED, place.index, place.word, place.read)
                )
        elif changed_to(place.word, place.read, language, thresholds, vocabulary):
            found.append(WordFinding(ReasonCode.WORD_CHANGED, place.index, place.word, place.read))
        elif rival := _rival_misread(place, language, thresholds, vocabulary):
            found.append(WordFinding(ReasonCode.WORD_CHANGED, place.index, place.word, rival))
    return found


def _stray(place: Placed, language: str, thresholds: Thresholds) -> bool:
    """Return whether a source word's place holds a stray glyph run rather than a misreading.

    The alignment pairs a word with whatever stands in its place: a dropped
    "except" at a stem's end takes the "p" a figure reference left there. A
    read word that is no word and has few of the source word's letters
    (`STRAY_DISTANCE`) does not show it.
    """
    read = place.read or ""
    return (
        not plausible(read, language, thresholds) and _distance(place.word, read) > STRAY_DISTANCE
    )


def _rival_misread(
    place: Placed, language: str, thresholds: Thresholds, vocabulary: frozenset[str]
) -> str | None:
    """Return the other word a reading that is no word of its own stands for, if any."""
    read = place.read or ""
    return negated_by_prefix(place.word, read, language, thresholds) or respelled(
        place.word, read, language, thresholds, vocabulary
    )


def respelled(
    word: str,
    read: str,
    language: str,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    vocabulary: frozenset[str] = frozenset(),
) -> str | None:
    """Return the other word a reading that is no word misspells by one glyph, nearer than the source's.

    A handwritten "growth" read "gvowth" is no word, so `changed_to` sees no
    other word; but one glyph from "growth" and six from "vessel", it is what
    a misread "growth" looks like, not a misread "vessel". That other word
    is the rival the ink then weighs against the source's drawing (the most
    common such word; the source's own look-alikes are none).
    """
    if plausible(read, language, thresholds) or len(read) < thresholds.meaning_min_letters:
        return None
    near = _edits(word, read)
    rivals = [
        w
        for w in _one_glyph_off(fold_word(read), language, thresholds)
        if near - _edits(w, read) >= thresholds.meaning_min_edits
        and changed_to(word, w, language, thresholds, vocabulary)
    ]
    return max(rivals, key=lambda w: (zipf(w, language), w)) if rivals else None


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _one_glyph_off(read: str, language: str, thresholds: Thresholds) -> list[str]:
    """Return the common words one glyph (dropped, added, replaced or swapped) from `read`."""
    cuts = [(read[:k], read[k:]) for k in range(len(read) + 1)]
    spelt = {a + b[1:] for a, b in cuts if b}
    spelt |= {a + b[1] + b[0] + b[2:] for a, b in cuts if len(b) > 1}
    spelt |= {a + c + b[1:] for a, b in cuts if b for c in _LETTERS}
    spelt |= {a + c + b for a, b in cuts for c in _LETTERS}
    common = _common_words(language, thresholds.meaning_word_zipf)
    return sorted(w for w in spelt if w in common and w != read)


@lru_cache(maxsize=4)
def _common_words(language: str, min_zipf: float) -> frozenset[str]:
    """Return the language's words at least as common as `min_zipf` (`wordfreq`'s list)."""
    from wordfreq import get_frequency_dict

    least = 10 ** (min_zipf - 9)  # Zipf is log10 of the frequency per billion words
    return frozenset(w for w, f in get_frequency_dict(language).items() if f >= least)


# Prefixes that turn a word into its opposite: "correct" and "incorrect" ask opposite things.
NEGATING_PREFIXES = ("in", "un", "im", "il", "ir", "non", "dis")
MIN_UNPREFIXED = 4  # letters of the word a prefix negates: shorter ones are fragments


def adds_negation(word: str, read: str) -> bool:
    """Return whether `read` is `word` with a negating prefix added ("correct" read "incorrect").

    An engine drops a handwritten prefix ("is incorrect" read "is correct")
    far more often than it invents one: a reading showing the source's word
    settles nothing against one showing it negated; the ink decides.
    """
    source, shown = word.casefold(), read.casefold()
    return any(shown == prefix + source for prefix in NEGATING_PREFIXES)


def negated_by_prefix(
    word: str, read: str, language: str, thresholds: Thresholds = DEFAULT_THRESHOLDS
) -> str | None:
    """Return the source word with a negating prefix added or dropped, when that is what was read.

    A handwritten "incorrect" read "incovvect" is no word, so no word was
    read instead of "correct"; but it is nearer "incorrect" than "correct" by
    more than a glyph, which a prefix the source lacks explains and a
    misread glyph does not.
    """
    source, shown = word.casefold(), read.casefold()
    for prefix in NEGATING_PREFIXES:
        if source.startswith(prefix) and not shown.startswith(prefix):
            rival = source[len(prefix) :]
        elif shown.startswith(prefix) and not source.startswith(prefix):
            rival = prefix + source
        else:
            continue
        if len(rival) < MIN_UNPREFIXED or not plausible(rival, language, thresholds):
            continue  # "index" read "dex" is a lost glyph run, not "in" + "dex"
        if Levenshtein.distance(shown, rival) < Levenshtein.distance(shown, source) - 1:
            return rival
    return None


def word_reasons(
    name: str,
    text: str,
    reading: str,
    lang: str,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    vocabulary: frozenset[str] = frozenset(),
) -> list[Reason]:
    """Return a reason per kind of word the reading does not show as the source has it."""
    language = language_of(lang)
    if language is None:
        return []
    by_code: dict[ReasonCode, list[WordFinding]] = {}
    for finding in findings(text, reading, language, thresholds, vocabulary):
        by_code.setdefault(finding.code, []).append(finding)
    return [
        Reason(
            code,
            name,
            "; ".join(f.describe() for f in found),
            tokens=tuple(f.token for f in found),
        )
        for code, found in by_code.items()
    ]


def token_shown(text: str, token: str, readings: Sequence[str]) -> bool:
    """Return whether some reading shows the word a finding's token names, in its place."""
    word, _, at = token.rpartition("@")
    index = int(at)
    source = split_words(text)
    for reading in readings:
        placed = align(source, split_words(reading))
        if index < 0:
            # An added word is settled by a reading that has nothing added there.
            if not any(p.index < 0 and p.read == word for p in placed):
                return True
            continue
        at_index = {p.index: p for p in placed if p.index >= 0}
        place = at_index.get(index)
        if place is None or place.read is None or not _same(place.read, word):
            continue
        neighbours = [at_index[i] for i in (index - 1, index + 1) if i in at_index]
        # The word must be read where the source has it, not merely aligned there: a "not"
        # from a figure's "(image not available)" lands in a dropped "not"'s place when
        # nothing around it is read. A neighbour read as itself places it.
        if not neighbours or any(_read_as_itself(n) for n in neighbours):
            return True
    return False


def _read_as_itself(place: Placed) -> bool:
    """Return whether a source word's place holds that word, a misread glyph or so aside."""
    if place.read is None:
        return False
    return _edits(place.read, place.word) <= len(place.word) // NEIGHBOUR_MISREAD


WORD_CODES = (ReasonCode.WORD_CHANGED, ReasonCode.WORD_DROPPED, ReasonCode.WORD_ADDED)


def token_word(token: str) -> tuple[str, int]:
    """Return (word, source index) of a finding's token."""
    word, _, at = token.rpartition("@")
    return word, int(at)


def source_spelling(text: str, index: int) -> str | None:
    """Return the source's own spelling (letter case kept) of its `index`-th word."""
    spelled = _WORD.findall(normalise(text).replace("’", "'"))
    return spelled[index] if 0 <= index < len(spelled) else None
