"""Chromium backend: a pool of reusable pages in headless Chromium driven by Playwright.

Each page slot has its own browser context whose every request is intercepted:
the page may load only its job's figures and the shared static assets. Anything
else fails the job. A slot loads one long-lived shell document (KaTeX, fonts,
stylesheets) and shows each job inside it, rather than loading a new document
per job. Screenshots use the DevTools fast path (see field notes).
"""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Browser, BrowserContext, CDPSession, Page, Route, async_playwright

from itemshot.backgrounds.texture_names import TEXTURE_NAMES, texture_file
from itemshot.renderer.assets import ORIGIN, AssetNotAllowed, static_asset
from itemshot.renderer.backends.base import FIRST_ATTEMPT, Attempt, Rendered, RenderFailure
from itemshot.renderer.jobs import RENDERER_VERSION, Job
from itemshot.renderer.page import PageDocument, build_page, shell_html
from itemshot.renderer.records import Layout, Region, box_to_quad

CHROMIUM_CANDIDATES = ("/usr/lib/chromium/chromium", "/usr/bin/chromium", "chromium")
SHELL_PATH = "/shell.html"
SHELL_HTML = shell_html().encode("utf-8")
RENDER_TIMEOUT_S = 60.0


def _warm_up_html() -> str:
    tiles = "".join(
        f"<div style='background: url(/static/textures/{texture_file(name)}) center / 512px'>"
        f"</div><div class='small' style='background: url(/static/textures/{texture_file(name)}) "
        "center / 512px'></div>"
        for name in TEXTURE_NAMES
    )
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><style>"
        "div { width: 120px; height: 60px; display: inline-block; }"
        ".small { width: 40px; height: 16px; border-radius: 2px; box-shadow: 0 3px 5px #0006; }"
        "</style></head><body><main id='content'>"
        f"{tiles}</main></body></html>"
    )


_WARM_UP_HTML = _warm_up_html()
# One round trip per job: swap the job's page into the shell, then lay it out.
_SHOW_AND_LAYOUT = """async ([html, minScale, dsf]) => {
  await window.itemshotShow(html);
  return await window.itemshotLayout(minScale, dsf);
}"""


def find_chromium() -> str:
    """Return the path of the system Chromium binary (override with ITEMSHOT_CHROMIUM)."""
    explicit = os.environ.get("ITEMSHOT_CHROMIUM")
    if explicit:
        return explicit
    for candidate in CHROMIUM_CANDIDATES:
        path = candidate if os.path.isabs(candidate) else shutil.which(candidate)
        if path and os.path.exists(path):
            return path
    raise RuntimeError("Chromium not found; install the Debian package `chromium`")


@dataclass
class _Slot:
    """One page ready for work, with the assets of the job it is rendering."""

    context: BrowserContext
    page: Page
    cdp: CDPSession
    assets: dict[str, tuple[bytes, str]] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)
    metrics: tuple[int, int, float] | None = None  # the page size last set, to skip resets


@dataclass(frozen=True)
class RenderOutput:
    """A clean render: PNG bytes and its layout record."""

    png: bytes
    layout: Layout
    browser_version: str


class ChromiumPool:
    """`browsers` Chromium processes × `pages` page slots each, reused for every job."""

    def __init__(self, browsers: int = 2, pages: int = 2) -> None:
        self.browser_count = max(1, browsers)
        self.pages_per_browser = max(1, pages)
        self._playwright: Any = None
        self._browsers: list[Browser] = []
        self._slots: asyncio.Queue[_Slot] = asyncio.Queue()
        self.version = ""

    async def __aenter__(self) -> ChromiumPool:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Launch the browsers and open every page slot on the blank local page."""
        self._playwright = await async_playwright().start()
        executable = find_chromium()
        for _ in range(self.browser_count):
            browser = await self._playwright.chromium.launch(
                executable_path=executable,
                args=[
                    "--disable-gpu",
                    "--disable-quic",
                    "--no-first-run",
                    "--disable-sync",
                    "--font-render-hinting=none",
                    "--disable-lcd-text",
                    # Byte-identical output whatever the job order or worker count:
                    # rasterise in the page's own process, on one thread, whole
                    # tiles at a time (with the defaults, anti-aliased edges and
                    # scaled images varied with what other pages drew before).
                    "--num-raster-threads=1",
                    "--disable-oop-rasterization",
                    "--disable-gpu-compositing",
                    "--disable-partial-raster",
                ],
            )
            self._browsers.append(browser)
            self.version = browser.version
            for _ in range(self.pages_per_browser):
                self._slots.put_nowait(await self._open_slot(browser))

    async def _open_slot(self, browser: Browser) -> _Slot:
        context = await browser.new_context(
            viewport={"width": 768, "height": 1024}, device_scale_factor=1, java_script_enabled=True
        )
        page = await context.new_page()
        cdp = await context.new_cdp_session(page)
        slot = _Slot(context=context, page=page, cdp=cdp)

        async def handle(route: Route) -> None:
            await self._serve(slot, route)

        await context.route("**/*", handle)
        await page.goto(ORIGIN + SHELL_PATH, wait_until="load")
        await cdp.send("DOM.enable")
        await cdp.send("CSS.enable")
        await self._warm_up(slot)
        return slot

    async def _warm_up(self, slot: _Slot) -> None:
        """Paint every scene texture once, so a page's first job looks like its later ones.

        Chromium paints a texture differently the first time a page uses it
        (seen on small rounded boxes); painting them all up front makes the
        output independent of which jobs a page happened to render before.
        """
        await slot.page.evaluate(_SHOW_AND_LAYOUT, [_WARM_UP_HTML, 1, 1])
        await slot.cdp.send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True})

    async def _serve(self, slot: _Slot, route: Route) -> None:
        url = route.request.url
        path = url.removeprefix(ORIGIN) if url.startswith(ORIGIN + "/") else None
        try:
            if path is None:
                raise AssetNotAllowed(url)
            if path == SHELL_PATH:
                body, mime = SHELL_HTML, "text/html"
            elif path in slot.assets:
                body, mime = slot.assets[path]
            else:
                body, mime = static_asset(path)
        except AssetNotAllowed:
            slot.refused.append(url)
            await route.abort("blockedbyclient")
            return
        await route.fulfill(status=200, body=body, content_type=mime)

    async def close(self) -> None:
        """Close every browser and stop Playwright."""
        for browser in self._browsers:
            await browser.close()
        self._browsers.clear()
        if self._playwright is not None:
            await self._playwright.stop()
            self._playwright = None

    async def render(self, document: PageDocument) -> RenderOutput:
        """Render one page document and return its PNG and layout; raise RenderFailure."""
        slot = await self._slots.get()
        try:
            return await asyncio.wait_for(self._render(slot, document), RENDER_TIMEOUT_S)
        except TimeoutError:
            message = f"rendering took longer than {RENDER_TIMEOUT_S:.0f} s"
            raise RenderFailure("timeout", message) from None
        finally:
            slot.assets = {}
            slot.refused = []
            self._slots.put_nowait(slot)

    async def _render(self, slot: _Slot, document: PageDocument) -> RenderOutput:
        slot.assets = dict(document.assets)
        slot.refused = []
        metrics = (document.css_width, document.css_height, document.device_scale)
        if metrics != slot.metrics:
            await slot.cdp.send(
                "Emulation.setDeviceMetricsOverride",
                {
                    "width": document.css_width,
                    "height": document.css_height,
                    "deviceScaleFactor": document.device_scale,
                    "mobile": False,
                },
            )
            slot.metrics = metrics
        result = await slot.page.evaluate(
            _SHOW_AND_LAYOUT, [document.html, document.min_scale, document.device_scale]
        )
        refused = slot.refused + result["blocked"]
        if refused:
            raise RenderFailure(
                "forbidden_request",
                f"the page asked for {refused[0]!r}, which is not one of the job's assets",
            )
        if result["broken_images"]:
            raise RenderFailure(
                "figure_not_shown", f"figure did not load: {result['broken_images']}"
            )
        if result["math_errors"]:
            raise RenderFailure(
                "latex_error", f"LaTeX error: {result['math_errors'][0]}", "question"
            )
        if not result["fits"]:
            raise RenderFailure(
                "does_not_fit",
                "the content does not fit the page even at the minimum readable font size "
                f"({document.min_scale * 100:.0f}% of the requested size); try a larger aspect, "
                "a smaller margin or a smaller font size",
            )
        fonts = await self._fonts_per_region(slot, result["span_regions"])
        shot = await slot.cdp.send(
            "Page.captureScreenshot",
            {"format": "png", "optimizeForSpeed": True, "captureBeyondViewport": False},
        )
        png = base64.b64decode(shot["data"])
        width = round(document.css_width * document.device_scale)
        height = round(document.css_height * document.device_scale)
        regions = tuple(_region(r, fonts.get(r["name"], {})) for r in result["regions"])
        layout = Layout(
            width=width,
            height=height,
            regions=regions,
            font_scale=round(float(result["scale"]), 4),
            fonts_requested=document.fonts.families,
            fonts_fallback=dict(document.fonts.fallback_chars),
            fonts_uncovered=document.fonts.uncovered,
        )
        return RenderOutput(png=png, layout=layout, browser_version=self.version)

    async def _fonts_per_region(
        self, slot: _Slot, span_regions: Sequence[str]
    ) -> dict[str, dict[str, int]]:
        """Return, per region, the platform fonts Chromium really used and their glyph counts."""
        root = await slot.cdp.send("DOM.getDocument", {"depth": 0})
        found = await slot.cdp.send(
            "DOM.querySelectorAll",
            {"nodeId": root["root"]["nodeId"], "selector": "[data-region] .t"},
        )
        node_ids = found["nodeIds"]
        replies = await asyncio.gather(
            *(slot.cdp.send("CSS.getPlatformFontsForNode", {"nodeId": n}) for n in node_ids)
        )
        per_region: dict[str, dict[str, int]] = {}
        for region, reply in zip(span_regions, replies, strict=False):
            counts = per_region.setdefault(region, {})
            for font in reply.get("fonts", []):
                family = font["familyName"]
                counts[family] = counts.get(family, 0) + int(font.get("glyphCount", 0))
        return per_region


class ChromiumBackend:
    """The Chromium backend: exact pages from the Jinja scenes, with their layout records.

    `browsers` processes × `pages` page slots each. Deterministic: the same job
    gives the same bytes on any attempt, so `attempt` is ignored.
    """

    name = "chromium"

    def __init__(self, browsers: int = 2, pages: int = 2) -> None:
        self.pool = ChromiumPool(browsers, pages)
        self.slots = self.pool.browser_count * self.pool.pages_per_browser

    async def __aenter__(self) -> ChromiumBackend:
        await self.pool.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.pool.close()

    async def render(self, job: Job, attempt: Attempt = FIRST_ATTEMPT) -> Rendered:
        """Return the clean render of a job and its layout; raise RenderFailure."""
        document = build_page(job.item, job.presentation, job.seed, job.content)
        output = await self.pool.render(document)
        record = {
            "backend": self.name,
            "browser": output.browser_version,
            "renderer_version": RENDERER_VERSION,
            "decor": document.decor,
            "css_size": [document.css_width, document.css_height],
            "device_scale": document.device_scale,
            "placeholders": list(document.placeholders),
        }
        return Rendered(output.png, output.layout, record)


def _region(raw: dict[str, Any], fonts: dict[str, int]) -> Region:
    name = raw["name"]
    kind = name.split(":", 1)[0]
    box = tuple(round(float(v), 2) for v in raw["box"])
    letter = name.split(":", 1)[1] if kind == "option" else ""
    figure = int(name.split(":")[1]) if kind in ("figure", "caption") else None
    return Region(
        name=name,
        kind=kind,
        box=box,  # type: ignore[arg-type]
        quad=box_to_quad(box),
        text=raw["text"],
        math=tuple(raw["math"]),
        label=raw["label"],
        letter=letter,
        figure=figure,
        placeholder=bool(raw["placeholder"]),
        fonts=fonts,
        font_px=round(float(raw["font_px"]), 2),
        color=raw["color"],
        background=raw["background"],
        overflow=bool(raw["overflow"]),
    )
