"""Settings of the Nano Banana backend, importable without loading google-genai.

The command line reads its defaults from here, so `itemshot --help` does not
pay for the SDK.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

DEFAULT_MODEL = "gemini-3-pro-image-preview"  # Nano Banana Pro
DEFAULT_API_VERSION = "v1beta"
KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
INLINE_LIMIT = 20_000_000  # bytes per batch request the service accepts inline


class MissingApiKey(RuntimeError):
    """No API key in the environment."""


def api_key_from_env() -> str:
    """Return the API key from GEMINI_API_KEY or GOOGLE_API_KEY; raise a clear error if unset."""
    for name in KEY_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    raise MissingApiKey(
        "no API key: set GEMINI_API_KEY (or GOOGLE_API_KEY) in the environment "
        "for --backend nanobanana/hybrid (--dry-run needs no key)"
    )


@dataclass(frozen=True)
class ClientSettings:
    """How to reach the model and how hard to push it."""

    model: str = DEFAULT_MODEL
    api_base: str | None = None  # None: GOOGLE_GEMINI_BASE_URL, else the SDK default
    api_version: str | None = None  # None: GOOGLE_GENAI_API_VERSION, else v1beta
    concurrency: int = 4
    requests_per_minute: float = 60.0  # 0 = no limit
    max_retries: int = 5
    backoff_base: float = 2.0  # seconds
    backoff_max: float = 60.0
    timeout: float = 180.0  # seconds per request
    jitter_seed: int = 0

    def endpoint(self) -> tuple[str | None, str]:
        """Return (base URL, API version): flag first, then the SDK's environment variables."""
        base = self.api_base or os.environ.get("GOOGLE_GEMINI_BASE_URL") or None
        version = (
            self.api_version or os.environ.get("GOOGLE_GENAI_API_VERSION") or DEFAULT_API_VERSION
        )
        return base, "v1beta" if version == "beta" else version


@dataclass(frozen=True)
class BatchSettings:
    """How batches are polled and sized."""

    poll_interval: float = 30.0  # seconds between polls (batches take minutes to hours)
    timeout: float = (
        48 * 3600.0
    )  # give up (and cancel) after this long; the service expires at 48 h
    max_bytes: int = INLINE_LIMIT * 9 // 10  # inline payload per batch, with a margin
    display_name: str = "itemshot"
