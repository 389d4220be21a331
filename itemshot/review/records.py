"""Reading manifest rows and verifier records defensively, the way the review app needs them.

The verifier's records keep one general shape (a verdict, reasons with a code,
a region and a detail, per-region scores) but their exact fields move; these
helpers accept the shapes seen so far and treat anything else as "not there"
rather than failing the page.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def verify_record(row: Mapping[str, Any]) -> Mapping[str, Any]:
    """Return the verdict record of a row: `verify`, or the nested one a generated image has."""
    verify = _mapping(row.get("verify"))
    nested = _mapping(verify.get("verdict"))
    return nested if nested and "reasons" in nested else verify


def verdict_of(row: Mapping[str, Any]) -> str:
    """Return `fail`, `pass` or `unverified` for a manifest row."""
    verdict = row.get("verdict")
    if verdict in ("pass", "fail"):
        return str(verdict)
    passed = verify_record(row).get("passed")
    if isinstance(passed, bool):
        return "pass" if passed else "fail"
    return "unverified"


def reasons_of(row: Mapping[str, Any]) -> list[dict[str, str]]:
    """Return the verifier's reasons of a row as {code, region, detail} dicts."""
    found: list[dict[str, str]] = []
    for reason in verify_record(row).get("reasons") or ():
        if isinstance(reason, Mapping) and reason.get("code"):
            detail = reason.get("detail", reason.get("message", ""))
            found.append(
                {
                    "code": str(reason["code"]),
                    "region": str(reason.get("region") or ""),
                    "detail": str(detail or ""),
                }
            )
        elif isinstance(reason, str):
            found.append({"code": reason, "region": "", "detail": ""})
    return found


def reason_codes(row: Mapping[str, Any]) -> list[str]:
    """Return the distinct reason codes of a row, in first-seen order."""
    codes = verify_record(row).get("codes")
    if isinstance(codes, list) and all(isinstance(c, str) for c in codes):
        return list(dict.fromkeys(codes))
    return list(dict.fromkeys(r["code"] for r in reasons_of(row)))


def region_scores(row: Mapping[str, Any]) -> dict[str, float | None]:
    """Return per-region scores (region name → score or None) of a row's verdict."""
    record = verify_record(row)
    scores = record.get("scores")
    if isinstance(scores, Mapping):
        return {str(k): _number(v) for k, v in scores.items()}
    regions = record.get("regions")
    if isinstance(regions, list):
        return {
            str(r["name"]): _number(r.get("score"))
            for r in regions
            if isinstance(r, Mapping) and r.get("name")
        }
    return {}


def region_readings(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Return the `regions` of a full verdict record: name, kind, score, expected, observed."""
    readings = []
    for region in record.get("regions") or ():
        if not isinstance(region, Mapping) or not region.get("name"):
            continue
        readings.append(
            {
                "name": str(region["name"]),
                "kind": str(region.get("kind") or ""),
                "score": _number(region.get("score")),
                "expected": str(region.get("expected") or ""),
                "observed": str(region.get("observed") or ""),
            }
        )
    return readings


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def presentation_of(row: Mapping[str, Any]) -> Mapping[str, Any]:
    """Return a row's presentation record (empty when it has none)."""
    return _mapping(row.get("presentation"))


def read_json(path: Path) -> Any:
    """Return the JSON in a file, or None when it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def audit_verdicts(path: Path) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Yield (image, region readings) for each verdict in an `audit.json`."""
    record = read_json(path)
    verdicts = record.get("verdicts") if isinstance(record, Mapping) else None
    for verdict in verdicts or ():
        if isinstance(verdict, Mapping) and verdict.get("image"):
            yield str(verdict["image"]), region_readings(verdict)
