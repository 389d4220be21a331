"""Confound check: within each item, does a contrast change anything besides its factor?

The balance check asks whether a design's cells are spread evenly over items;
this one asks whether each contrast changes only what it names. For every
factor and every level other than the reference, the cells of one item that
differ only in that factor are paired, and the per-item difference of every
nuisance measure of their images (`renderer.measures`: x-height, figure area,
page scale, options shown, line count) is taken, level minus reference.

A measure is *held* in a factor's contrasts unless the factor changes it by
its nature (`CHANGED_BY`: a font-size contrast changes the x-height, a
font-style one the line breaks); a design may say otherwise per factor
(`held`). The check fails when a held measure differs beyond its tolerance
(`TOLERANCES`) for any item. Rows without measures (text-only formats, older
sets, failed renders) take no part; contrasts with no within-item pairs
(balanced designs, one cell per item) are listed as such.
"""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from itemshot.renderer.measures import MEASURES


@dataclass(frozen=True)
class Tolerance:
    """How far a measure may move and still count as held: relative or absolute."""

    limit: float
    relative: bool

    def difference(self, level: float, reference: float) -> float:
        """Return level minus reference: as a fraction of the reference when relative."""
        if not self.relative:
            return float(level) - float(reference)
        if reference == 0:
            return 0.0 if level == 0 else float("inf")
        return (float(level) - float(reference)) / float(reference)

    def describe(self) -> str:
        """Return the tolerance as text (`±5%`, `±0`)."""
        if self.relative:
            return f"±{self.limit * 100:g}%"
        return f"±{self.limit:g}"


TOLERANCES: dict[str, Tolerance] = {
    "x_height_px": Tolerance(0.05, relative=True),
    "figure_area_px": Tolerance(0.02, relative=True),
    "page_scale": Tolerance(0.05, relative=True),
    "options_shown": Tolerance(0, relative=False),
    "line_count": Tolerance(0, relative=False),
}
assert set(TOLERANCES) == set(MEASURES)

# The factors that change a measure by what they are. Lengths are in the final
# image's pixels, so resolution, delivered size and capture change them; the
# amount of content and the room for it change the fit and the line breaks.
_CONTENT = ("format", "n_options")
_ROOM = ("scene", "aspect", "margin")
_PIXELS = ("resolution", "deliver_size", "capture", "severity")
CHANGED_BY: dict[str, frozenset[str]] = {
    "x_height_px": frozenset(("font_size", *_PIXELS)),
    "figure_area_px": frozenset(("font_size", *_PIXELS, *_ROOM, *_CONTENT)),
    "page_scale": frozenset(("font_size", *_ROOM, *_CONTENT)),
    "options_shown": frozenset(_CONTENT),
    "line_count": frozenset(("font_style", "font_face", "font_size", *_ROOM, *_CONTENT)),
}


def held_measures(factor: str, held: Mapping[str, Sequence[str]] | None = None) -> tuple[str, ...]:
    """Return the measures a factor's contrasts hold: the design's word, else the defaults."""
    if held and factor in held:
        return tuple(m for m in MEASURES if m in set(held[factor]))
    return tuple(m for m in MEASURES if factor not in CHANGED_BY[m])


@dataclass(frozen=True)
class MeasureSpread:
    """One nuisance measure over one contrast's item pairs."""

    measure: str
    held: bool
    tolerance: Tolerance
    pairs: int
    mean: float  # mean per-item difference (relative ones as fractions)
    worst: float  # the per-item difference furthest from zero
    worst_item: str
    beyond: int  # items whose difference is outside the tolerance
    passed: bool

    def as_dict(self) -> dict[str, Any]:
        """Return the spread as a JSON-ready dict."""
        return {
            "measure": self.measure,
            "held": self.held,
            "tolerance": self.tolerance.describe(),
            "relative": self.tolerance.relative,
            "pairs": self.pairs,
            "mean": _finite(self.mean),
            "worst": _finite(self.worst),
            "worst_item": self.worst_item,
            "beyond": self.beyond,
            "passed": self.passed,
        }


@dataclass(frozen=True)
class ContrastConfounds:
    """One contrast (a factor's level against its reference) and its nuisance spreads."""

    factor: str
    level: Any
    reference: Any
    pairs: int
    measures: tuple[MeasureSpread, ...]

    @property
    def passed(self) -> bool:
        """Return whether every held measure stays within its tolerance."""
        return all(m.passed for m in self.measures)

    def as_dict(self) -> dict[str, Any]:
        """Return the contrast as a JSON-ready dict."""
        return {
            "factor": self.factor,
            "level": self.level,
            "reference": self.reference,
            "pairs": self.pairs,
            "passed": self.passed,
            "measures": [m.as_dict() for m in self.measures],
        }


@dataclass(frozen=True)
class ConfoundReport:
    """The confound check of a run: every contrast, and whether all held measures held."""

    contrasts: tuple[ContrastConfounds, ...]
    notes: tuple[str, ...]

    @property
    def passed(self) -> bool:
        """Return whether no contrast changes a held measure beyond its tolerance."""
        return all(c.passed for c in self.contrasts)

    @property
    def failures(self) -> tuple[tuple[ContrastConfounds, MeasureSpread], ...]:
        """Return (contrast, measure) for every held measure outside its tolerance."""
        return tuple((c, m) for c in self.contrasts for m in c.measures if not m.passed)

    def as_dict(self) -> dict[str, Any]:
        """Return the report as a JSON-ready dict."""
        return {
            "passed": self.passed,
            "notes": list(self.notes),
            "tolerances": {name: t.describe() for name, t in TOLERANCES.items()},
            "contrasts": [c.as_dict() for c in self.contrasts],
        }

    def lines(self) -> list[str]:
        """Return the report as short text lines (the design summary's and the report's)."""
        verdict = "passed" if self.passed else "FAILED"
        out = [f"confound check {verdict} ({len(self.contrasts)} contrasts)"]
        for contrast in self.contrasts:
            if contrast.pairs == 0:
                continue
            spreads = ", ".join(
                f"{m.measure} {_shown(m)}{'' if m.held else ' (free)'}"
                + ("" if m.passed else f" BEYOND {m.tolerance.describe()} in {m.beyond}")
                for m in contrast.measures
            )
            head = f"{contrast.factor}={_label(contrast.level)} vs {_label(contrast.reference)}"
            out.append(f"  {head} [{contrast.pairs} items]: {spreads}")
        out += [f"  note: {note}" for note in self.notes]
        return out


def _shown(spread: MeasureSpread) -> str:
    """Return the worst per-item difference as text (`-1.2%`, `+1`)."""
    if math.isinf(spread.worst):
        return "worst inf"
    if spread.tolerance.relative:
        return f"worst {spread.worst * 100:+.1f}%"
    return f"worst {spread.worst:+g}"


def _finite(value: float) -> float | str:
    return "inf" if math.isinf(value) else value


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _label(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def confound_report(
    rows: Iterable[Mapping[str, Any]],
    factors: Sequence[tuple[str, Sequence[Any]]],
    reference: Mapping[str, Any] | None = None,
    held: Mapping[str, Sequence[str]] | None = None,
) -> ConfoundReport:
    """Return the confound check of a run's manifest rows.

    `factors` are the design's (name, levels) in order, `reference` each
    factor's reference level (default: its first), `held` the design's own
    word on which measures a factor holds (default: `held_measures`).
    """
    reference = {name: (reference or {}).get(name, levels[0]) for name, levels in factors}
    measured = [
        row
        for row in rows
        if row.get("status") == "ok"
        and isinstance(row.get("measures"), Mapping)
        and row["measures"]
        and isinstance(row.get("condition"), Mapping)
    ]
    notes: list[str] = []
    if not measured:
        notes.append("no image carries nuisance measures: nothing to compare")
    contrasts: list[ContrastConfounds] = []
    for name, levels in factors:
        cells: dict[tuple[str, str], dict[str, Mapping[str, Any]]] = defaultdict(dict)
        for row in measured:
            condition = dict(row["condition"])
            if name not in condition:
                continue
            level = condition.pop(name)
            cells[(str(row["item_id"]), _key(condition))][_key(level)] = row["measures"]
        keep = held_measures(name, held)
        for level in levels:
            if _key(level) == _key(reference[name]):
                continue
            pairs = [
                (item, group[_key(level)], group[_key(reference[name])])
                for (item, _), group in sorted(cells.items())
                if _key(level) in group and _key(reference[name]) in group
            ]
            spreads = tuple(_spread(m, m in keep, pairs) for m in MEASURES)
            contrasts.append(ContrastConfounds(name, level, reference[name], len(pairs), spreads))
    unpaired = sorted({c.factor for c in contrasts if c.pairs == 0})
    if measured and unpaired:
        notes.append(f"no within-item pairs for: {', '.join(unpaired)}")
    return ConfoundReport(tuple(contrasts), tuple(notes))


def _spread(
    measure: str,
    held: bool,
    pairs: Sequence[tuple[str, Mapping[str, Any], Mapping[str, Any]]],
) -> MeasureSpread:
    tolerance = TOLERANCES[measure]
    differences = [
        (item, tolerance.difference(level[measure], ref[measure]))
        for item, level, ref in pairs
        if measure in level and measure in ref
    ]
    if not differences:
        return MeasureSpread(measure, held, tolerance, 0, 0.0, 0.0, "", 0, True)
    worst_item, worst = max(differences, key=lambda pair: abs(pair[1]))
    # A hair of slack: measures are rounded where they are recorded.
    beyond = sum(1 for _, d in differences if abs(d) > tolerance.limit + 1e-9)
    finite = [d for _, d in differences if not math.isinf(d)]
    mean = statistics.fmean(finite) if finite else float("inf")
    return MeasureSpread(
        measure,
        held,
        tolerance,
        len(differences),
        mean,
        worst,
        worst_item,
        beyond,
        passed=not held or beyond == 0,
    )


CONFOUNDS_FILE = "confounds.json"  # written beside a sweep's balance.json
TABLE_HEADER = ["contrast", "items", *MEASURES, "check"]


def confound_table(record: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Return (header, rows) of a confound record (`ConfoundReport.as_dict`) for a report.

    One row per contrast with pairs: each measure's worst per-item difference
    (relative ones in %), `free` beside a measure the factor may change, and
    `BEYOND` beside a held one outside its tolerance.
    """
    rows = []
    for contrast in record.get("contrasts", []):
        if not contrast.get("pairs"):
            continue
        cells = []
        for spread in contrast["measures"]:
            worst = spread["worst"]
            if worst == "inf":
                shown = "inf"
            elif spread["relative"]:
                shown = f"{float(worst) * 100:+.1f}%"
            else:
                shown = f"{float(worst):+g}"
            if not spread["held"]:
                shown += " free"
            elif not spread["passed"]:
                shown += f" BEYOND {spread['tolerance']} ({spread['beyond']})"
            cells.append(shown)
        level, reference = _label(contrast["level"]), _label(contrast["reference"])
        verdict = "ok" if contrast["passed"] else "FAILED"
        rows.append(
            [
                f"{contrast['factor']}={level} vs {reference}",
                str(contrast["pairs"]),
                *cells,
                verdict,
            ]
        )
    return TABLE_HEADER, rows


def read_confounds(sets: Iterable[Path]) -> tuple[tuple[str, Mapping[str, Any]], ...]:
    """Return (set name, confound record) of each output set whose sweep wrote one."""
    found = []
    for folder in sets:
        path = Path(folder) / CONFOUNDS_FILE
        if path.is_file():
            found.append((Path(folder).name, json.loads(path.read_text(encoding="utf-8"))))
    return tuple(found)
