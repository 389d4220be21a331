"""The seed hash: every seed derived from content is the leading 64 bits of a digest of text.

One function for every stage (the bottom layer, so that textures and
captures can use it too). Callers hash their own text form: the renderer the
canonical JSON of its parts, the parser `seed\\x1fkey`, captures and textures
their keys joined by `\\x1f`. The digest stays what each caller used when its
outputs were first published (SHA-256, or BLAKE2b for captures and textures),
since changing it would change every image and guess those seeds made.
"""

from __future__ import annotations

import hashlib
from typing import Literal

Digest = Literal["sha256", "blake2b"]


def seed_hash(text: str, digest: Digest = "sha256", bits: int = 63) -> int:
    """Return a `bits`-bit seed (at most 64): the first 8 bytes of the digest of `text`, big-endian.

    63 bits (the default) keeps the seed a non-negative signed 64-bit integer.
    """
    data = text.encode("utf-8")
    if digest == "blake2b":
        head = hashlib.blake2b(data, digest_size=8).digest()
    else:
        head = hashlib.sha256(data).digest()[:8]
    return int.from_bytes(head, "big") >> (64 - bits)
