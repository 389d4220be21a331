"""The one interface every image backend implements: a job in, a clean image out.

A backend turns a `Job` into a `Rendered` clean image (PNG bytes, the layout
record when it has a DOM, and a provenance record for the sidecar) or raises
`RenderFailure` with a short machine reason. Capture, verification and
writing are not its business: the app layer chains them. Chromium,
Nano Banana and hybrid (a composition of the two) all sit behind it, the way
httpx's transports sit behind one `BaseTransport`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, Self

from itemshot.renderer.jobs import Job
from itemshot.renderer.messages import readable
from itemshot.renderer.records import Layout


@dataclass(frozen=True)
class Attempt:
    """Which try of a job this is, and what earlier tries asked the backend to change.

    Deterministic backends (Chromium) ignore both; a generative backend derives
    its sampling seed from `number` and adjusts its prompt by `adjustments`.
    """

    number: int = 1
    adjustments: tuple[str, ...] = ()


FIRST_ATTEMPT = Attempt()


@dataclass(frozen=True)
class Rendered:
    """A clean image from a backend, with what the backend knows about it.

    `layout` is None for backends without a DOM (their images are audited from
    pixels). `record` is the provenance kept in the sidecar's `render` entry.
    `base` is the exact page a composed backend started from (hybrid), if any.
    """

    image: bytes
    layout: Layout | None
    record: Mapping[str, Any] = field(default_factory=dict)
    base: Rendered | None = None


class RenderFailure(RuntimeError):
    """A job the backend could not render faithfully; `reason` is a short machine key.

    `retryable` says a new attempt may succeed (a refusal answered with a fresh
    seed, a batch's 5xx); `record` carries backend details for the sidecar.
    """

    def __init__(
        self,
        reason: str,
        message: str,
        field: str = "",
        *,
        retryable: bool = False,
        record: Mapping[str, Any] | None = None,
    ) -> None:
        # What the manifest records (`as_error`): bounded, one line, no object reprs.
        super().__init__(readable(message))
        self.reason = reason
        self.field = field
        self.retryable = retryable
        self.record = dict(record or {})

    def as_error(self, item_id: str) -> dict[str, Any]:
        """Return the manifest `error` entry of this failure for one item."""
        return {
            "item_id": item_id,
            "field": self.field or "page",
            "reason": self.reason,
            "message": str(self),
        }


class Backend(Protocol):
    """What the app layer needs of an image backend.

    Use it as an async context manager (it may hold browsers or HTTP clients);
    `slots` says how many `render` calls it serves at once.
    """

    name: str
    slots: int

    async def __aenter__(self) -> Self:
        """Acquire what the backend holds (browsers, clients)."""
        ...

    async def __aexit__(self, *exc: object) -> None:
        """Release what the backend holds."""
        ...

    async def render(self, job: Job, attempt: Attempt = FIRST_ATTEMPT) -> Rendered:
        """Return the clean image of one job; raise `RenderFailure` when it cannot be made."""
        ...
