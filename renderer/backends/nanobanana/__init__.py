"""The Nano Banana (Gemini image model) backend: client, prompt, cache, cost, batch, stand-in.

`NanobananaBackend` is the `Backend`; `ImageClient` talks to the service
(limits, retries, refusals, cache), `build_request` turns a Presentation into
a prompt, `Ledger` prices what was asked, `BatchClient` sends rounds as Batch
API jobs, and `standin.StandIn` is a loopback server speaking the same REST
shapes, for tests and trials. The package itself exports only the settings,
which load no SDK (the command line reads its defaults from them).
"""

from __future__ import annotations

from itemshot.renderer.backends.nanobanana.settings import (
    DEFAULT_MODEL,
    BatchSettings,
    ClientSettings,
    MissingApiKey,
    api_key_from_env,
)

__all__ = [
    "DEFAULT_MODEL",
    "BatchSettings",
    "ClientSettings",
    "MissingApiKey",
    "api_key_from_env",
]
