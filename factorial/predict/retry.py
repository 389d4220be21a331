"""Retry policy: which failures to retry and how long to wait (exponential, jittered)."""

from __future__ import annotations

import random
from dataclasses import dataclass

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})

# What a failed prediction row failed of: its record's `error.kind`, counted in the summary.
FAILURE_KINDS: dict[str, str] = {
    "connection_refused": "nothing accepts connections at the endpoint",
    "connection_failed": "the connection broke (reset, closed, name not found)",
    "tls": "the TLS handshake failed (wrong scheme or port, certificate refused)",
    "auth": "the server refused the credentials (HTTP 401/403)",
    "timeout": "no complete answer within --timeout",
    "rate_limited": "HTTP 429 on every attempt",
    "server_error": "HTTP 5xx on every attempt",
    "http_error": "another HTTP error (an unknown model or path, a bad request)",
    "malformed_reply": "an answer not of the API's shape",
    "reply_too_large": "an answer larger than the client accepts",
    "empty_reply": "the model sent no text (empty, null or blank) on every attempt",
    "input": "the row's request could not be built (an image is missing or unreadable)",
}


class RetryableError(Exception):
    """A failure worth another attempt: rate limit, server error, timeout, garbled reply.

    `kind` is one of FAILURE_KINDS: what the row failed of if no attempt succeeds.
    """

    def __init__(
        self, message: str, retry_after: float | None = None, kind: str = "connection_failed"
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.kind = kind


class PermanentError(Exception):
    """A failure that another attempt would repeat (bad request, auth, unknown model).

    `kind` is one of FAILURE_KINDS.
    """

    def __init__(self, message: str, kind: str = "http_error") -> None:
        super().__init__(message)
        self.kind = kind


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


def status_failure(
    status: int, message: str, retry_after: float | None = None
) -> RetryableError | PermanentError:
    """Return the failure an HTTP error status stands for, with its kind."""
    if status in (401, 403):
        return PermanentError(message, kind="auth")
    if not is_retryable_status(status):
        return PermanentError(message, kind="http_error")
    kind = "rate_limited" if status == 429 else "server_error" if status >= 500 else "http_error"
    return RetryableError(message, retry_after, kind=kind)


def parse_retry_after(value: str | None) -> float | None:
    """Return a Retry-After header in seconds when it is a number."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
