"""Image backends behind one protocol: `Backend.render(job, attempt) -> Rendered`.

- `chromium.ChromiumBackend`: Jinja scenes rasterised by headless Chromium,
  with a layout record from the DOM.
- `nanobanana.NanobananaBackend`: the Gemini image model draws the scene
  (no layout record; audited from pixels).
- `hybrid.HybridBackend`: the Chromium page, re-photographed by the model.

The backend classes load Playwright or google-genai, so they are imported
from their modules, not with this package.
"""

from __future__ import annotations

from itemshot.renderer.backends.base import (
    FIRST_ATTEMPT,
    Attempt,
    Backend,
    Rendered,
    RenderFailure,
)

__all__ = [
    "FIRST_ATTEMPT",
    "Attempt",
    "Backend",
    "RenderFailure",
    "Rendered",
]
