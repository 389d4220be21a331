"""Retry policy: which failures to retry and how long to wait (exponential, jittered)."""

from __future__ import annotations

import random
from dataclasses import dataclass

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class RetryableError(Exception):
    """A failure worth another attempt: rate limit, server error, timeout, garbled reply."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class PermanentError(Exception):
    """A failure that another attempt would repeat (bad request, auth, unknown model)."""


@dataclass(frozen=True)
class RetryPolicy:
    """How many attempts to make and the backoff between them."""

    max_attempts: int = 6
    base_delay: float = 1.0
    max_delay: float = 60.0
    jitter: float = 0.5

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None = None) -> float:
        """Return the wait in seconds before attempt `attempt + 1` (attempt counts from 1)."""
        backoff = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        backoff *= 1 + self.jitter * rng.random()
        if retry_after is not None:
            backoff = max(backoff, min(retry_after, self.max_delay))
        return backoff


def is_retryable_status(status: int) -> bool:
    """Return whether an HTTP status code is worth retrying."""
    return status in RETRYABLE_STATUS or status >= 500


def parse_retry_after(value: str | None) -> float | None:
    """Return a Retry-After header in seconds when it is a number."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
