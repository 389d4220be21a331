"""Request bodies of the review API: read within a size limit, parsed strictly, checked field by field.

Every POST endpoint reads its body through `read_json_object`:

- the body is read as a stream and never past `MAX_BODY` bytes: a declared
  `Content-Length` over the limit is refused before a byte of it is read,
  and a chunked (or undeclared) body is abandoned once it passes the limit;
- the JSON is strict: `NaN`, `Infinity` and numbers too large for a float
  (`1e999`) are refused, naming the field that holds them, as are texts
  nested too deeply to parse;
- `DecisionRequest` and `RegenerationRequest` check every field's type and
  range before the endpoint does anything, so a bad field is a 400 naming
  it and nothing is logged.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from itemshot.factorial.review.log import MAX_SECONDS

MAX_BODY = 64 * 1024


class Refused(Exception):
    """A request the API will not act on: the HTTP status and a short message.

    `unread` says the body may still be arriving; the answer then closes the
    connection, so the server does not go on receiving what it refused.
    """

    def __init__(self, status: int, message: str, *, unread: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.unread = unread


@dataclass(frozen=True)
class _NonFinite:
    """Where the JSON text held a number a float cannot carry (kept to name its field)."""

    text: str


def _float(text: str) -> float | _NonFinite:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text)


def _non_finite(value: Any) -> _NonFinite | None:
    """Return the first non-finite number inside a parsed JSON value (None when there is none)."""
    stack = [value]
    while stack:  # not recursive: a parsed value may be nested deeper than Python recursion goes
        current = stack.pop()
        if isinstance(current, _NonFinite):
            return current
        if isinstance(current, dict):
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    return None


async def read_body(request: Request, limit: int = MAX_BODY) -> bytes:
    """Return the request body, refusing (413) one longer than `limit` without holding it."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            length = int(declared)
        except ValueError:
            raise Refused(400, "Content-Length is not a number", unread=True) from None
        if length > limit:
            raise Refused(413, f"request larger than {limit} bytes", unread=True)
    received = bytearray()
    async for chunk in request.stream():
        received += chunk
        if len(received) > limit:
            raise Refused(413, f"request larger than {limit} bytes", unread=True)
    return bytes(received)


def parse_object(raw: bytes) -> dict[str, Any]:
    """Return a body parsed as one strict JSON object; raise Refused (400) otherwise."""
    try:
        body = json.loads(raw, parse_constant=_NonFinite, parse_float=_float)
    except RecursionError:
        raise Refused(400, "the body is nested too deeply") from None
    except ValueError:  # not UTF-8, not JSON, or an integer with too many digits
        raise Refused(400, "the body is not JSON") from None
    if not isinstance(body, dict):
        raise Refused(400, "the body is not a JSON object")
    for name, value in body.items():
        if (bad := _non_finite(value)) is not None:
            raise Refused(400, f"{name}: {bad.text} is not a finite number")
    return body


async def read_json_object(request: Request) -> dict[str, Any]:
    """Return a request's JSON object body: JSON content type, size-limited, strict."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise Refused(415, "send JSON", unread=True)
    return parse_object(await read_body(request))


def _text(body: Mapping[str, Any], name: str) -> str:
    """Return a string field ('' when absent or null)."""
    value = body.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Refused(400, f"{name} must be a string")
    return value


def _position(body: Mapping[str, Any]) -> int:
    value = body.get("position")
    if isinstance(value, bool) or not isinstance(value, int):
        raise Refused(400, "position must be an integer (the image's place in the set)")
    return value


def _seconds(body: Mapping[str, Any]) -> float | None:
    value = body.get("seconds")
    if value is None:
        return None
    # Compared before converting: an integer too large for a float is refused, not an error.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Refused(400, "seconds must be a number")
    if not 0 <= value <= MAX_SECONDS:
        raise Refused(400, f"seconds must be a finite number from 0 to {MAX_SECONDS:g}")
    return float(value)


def _flag(body: Mapping[str, Any], name: str) -> bool:
    value = body.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise Refused(400, f"{name} must be true or false")
    return value


def _query(body: Mapping[str, Any]) -> dict[str, str]:
    value = body.get("query")
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise Refused(400, "query must be an object of strings (the queue's URL parameters)")
    return dict(value)


@dataclass(frozen=True)
class DecisionRequest:
    """The body of `POST /api/decisions`, every field of its type."""

    id: str
    position: int
    image: str
    action: str
    reason: str
    note: str
    seconds: float | None
    adjudication: bool
    query: dict[str, str]

    @classmethod
    def of(cls, body: Mapping[str, Any]) -> DecisionRequest:
        """Return the decision a body asks for; raise Refused (400) naming a bad field."""
        return cls(
            id=_text(body, "id"),
            position=_position(body),
            image=_text(body, "image"),
            action=_text(body, "action"),
            reason=_text(body, "reason"),
            note=_text(body, "note"),
            seconds=_seconds(body),
            adjudication=_flag(body, "adjudication"),
            query=_query(body),
        )


@dataclass(frozen=True)
class RegenerationRequest:
    """The body of `POST /api/regenerate`, every field of its type."""

    id: str
    position: int
    image: str
    reason: str

    @classmethod
    def of(cls, body: Mapping[str, Any]) -> RegenerationRequest:
        """Return the regeneration a body asks for; raise Refused (400) naming a bad field."""
        return cls(
            id=_text(body, "id"),
            position=_position(body),
            image=_text(body, "image"),
            reason=_text(body, "reason"),
        )


def _count(body: Mapping[str, Any], name: str = "count") -> int:
    value = body.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise Refused(400, f"{name} must be a whole number (the count the confirmation named)")
    return value


def _fraction(body: Mapping[str, Any], name: str) -> float:
    value = body.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        raise Refused(400, f"{name} must be a number between 0 and 1")
    return float(value)


def _id(body: Mapping[str, Any]) -> str:
    value = _text(body, "id")
    if not 0 < len(value) <= 64:
        raise Refused(400, "id must be 1 to 64 characters")
    return value


@dataclass(frozen=True)
class BulkRequest:
    """The body of `POST /api/bulk` (and of `/api/certify/accept`): the count confirmed."""

    id: str
    count: int
    query: dict[str, str]

    @classmethod
    def of(cls, body: Mapping[str, Any]) -> BulkRequest:
        """Return the bulk action a body asks for; raise Refused (400) naming a bad field."""
        return cls(id=_id(body), count=_count(body), query=_query(body))


@dataclass(frozen=True)
class UndoRequest:
    """The body of `POST /api/undo`."""

    id: str

    @classmethod
    def of(cls, body: Mapping[str, Any]) -> UndoRequest:
        """Return the undo a body asks for; raise Refused (400) naming a bad field."""
        return cls(id=_id(body))


@dataclass(frozen=True)
class DrawRequest:
    """The body of `POST /api/certify/draw`: the target and the seed."""

    max_defect_rate: float
    confidence: float
    seed: int

    @classmethod
    def of(cls, body: Mapping[str, Any]) -> DrawRequest:
        """Return the sample a body asks to draw; raise Refused (400) naming a bad field."""
        seed = body.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
            raise Refused(400, "seed must be a whole number from 0")
        return cls(_fraction(body, "max_defect_rate"), _fraction(body, "confidence"), seed)


@dataclass(frozen=True)
class GrowRequest:
    """The body of `POST /api/certify/grow`: the sample size the confirmation named."""

    size: int

    @classmethod
    def of(cls, body: Mapping[str, Any]) -> GrowRequest:
        """Return the growth a body asks for; raise Refused (400) naming a bad field."""
        return cls(size=_count(body, "size"))
