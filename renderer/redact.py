"""Secrets never written: every text a server sends back is scrubbed of the keys sent to it.

A service may echo the API key it was given (in an error message, a reply
text, a URL). Whatever of its answer is kept — sidecars, the response cache,
manifests, cost records, predictions — passes through a `Redactor` holding
the run's keys first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

REDACTED = "[REDACTED]"
# A shorter "key" would blank ordinary words of the text it is removed from.
MIN_SECRET_CHARS = 6


@dataclass(frozen=True)
class Redactor:
    """Replaces each secret (and its URL-encoded form) with `[REDACTED]`."""

    secrets: tuple[str, ...] = ()

    @classmethod
    def of(cls, *secrets: str | None) -> Redactor:
        """Return a redactor for these secrets (empty and very short ones are ignored)."""
        found: list[str] = []
        for secret in secrets:
            if secret and len(secret.strip()) >= MIN_SECRET_CHARS:
                found += [secret.strip(), quote(secret.strip(), safe="")]
        # Longest first, so a secret that contains another is replaced whole.
        return cls(tuple(sorted(set(found), key=len, reverse=True)))

    def text(self, value: str) -> str:
        """Return `value` with every secret replaced."""
        for secret in self.secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value

    def value(self, value: Any) -> Any:
        """Return a JSON-like value (strings, lists, dicts, nested) with every secret replaced."""
        if not self.secrets:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.value(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.value(v) for v in value)
        return value
