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
import contextlib
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import (
    Browser,
    BrowserContext,
    CDPSession,
    Page,
    Route,
    async_playwright,
)
from playwright.async_api import Error as PlaywrightError

from itemshot.backgrounds.texture_names import TEXTURE_NAMES, texture_file
from itemshot.renderer.assets import ORIGIN, AssetNotAllowed, static_asset
from itemshot.renderer.backends.base import FIRST_ATTEMPT, Attempt, Rendered, RenderFailure
from itemshot.renderer.jobs import RENDERER_VERSION, Job
from itemshot.renderer.measures import clean_measures
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
_SHOW_AND_LAYOUT = """async ([html, minScale, dsf, faces]) => {
  await window.itemshotShow(html);
  return await window.itemshotLayout(minScale, dsf, faces || []);
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


@dataclass(eq=False)
class _Browser:
    """One Chromium process and the event set when it goes away (crash, kill, exit)."""

    browser: Browser
    gone: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass(eq=False)
class _Slot:
    """One page ready for work, with the assets of the job it is rendering.

    A slot outlives its page: when the page's renderer or its browser dies, the
    slot is rebuilt in place (`crashed` is per page, `browser.gone` per browser).
    """

    index: int  # which browser of the pool the slot belongs to
    browser: _Browser
    context: BrowserContext
    page: Page
    cdp: CDPSession
    crashed: asyncio.Event = field(default_factory=asyncio.Event)
    assets: dict[str, tuple[bytes, str]] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)
    metrics: tuple[int, int, float] | None = None  # the page size last set, to skip resets

    @property
    def dead(self) -> bool:
        """Return whether the page or its browser has gone away."""
        return self.crashed.is_set() or self.browser.gone.is_set()


class _SlotLost(Exception):
    """The page a job was rendering in died (renderer crash, browser killed or closed)."""


@dataclass(frozen=True)
class RenderOutput:
    """A clean render: PNG bytes and its layout record."""

    png: bytes
    layout: Layout
    browser_version: str


# A job whose page dies is retried once on a fresh page; a second death fails it.
RENDER_TRIES = 2


class ChromiumPool:
    """`browsers` Chromium processes × `pages` page slots each, reused for every job.

    A page whose renderer crashes, or a browser that is killed, is replaced
    (the browser relaunched) and the job it was rendering is tried once more;
    a job never waits on a dead page, since every step races the page's crash
    and its browser's disconnect.
    """

    def __init__(self, browsers: int = 2, pages: int = 2) -> None:
        self.browser_count = max(1, browsers)
        self.pages_per_browser = max(1, pages)
        self._playwright: Any = None
        self._browsers: list[_Browser] = []
        self._relaunching: list[asyncio.Lock] = []
        self._slots: asyncio.Queue[_Slot] = asyncio.Queue()
        self._opening: asyncio.Future[Any] | None = None
        self._executable = ""
        self.version = ""
        self.relaunches = 0  # browsers and pages replaced after a crash

    async def __aenter__(self) -> ChromiumPool:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Launch the browsers and open the page slots; return once the first slot is ready.

        The other slots open in the background and join the queue as they are
        ready, so the first job starts after one browser launch, not after all
        of them (every slot is warmed up alike, so which slot a job lands on
        does not change its bytes).
        """
        self._playwright = await async_playwright().start()
        self._executable = find_chromium()
        # Browser i is self._browsers[i]: browsers are appended in index order.
        self._relaunching = [asyncio.Lock() for _ in range(self.browser_count)]
        self._browsers = [await self._launch()]
        self._slots.put_nowait(await self._open_slot(0))
        self._opening = asyncio.ensure_future(self._open_rest())

    async def _open_rest(self) -> None:
        """Open the first browser's other pages, then launch the other browsers with theirs."""
        for _ in range(self.pages_per_browser - 1):
            self._slots.put_nowait(await self._open_slot(0))
        for index in range(1, self.browser_count):
            self._browsers.append(await self._launch())
            for _ in range(self.pages_per_browser):
                self._slots.put_nowait(await self._open_slot(index))

    async def _launch(self) -> _Browser:
        browser = await self._playwright.chromium.launch(
            executable_path=self._executable,
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
        handle = _Browser(browser)
        browser.on("disconnected", lambda _browser: handle.gone.set())
        self.version = browser.version
        return handle

    async def _open_slot(self, index: int, slot: _Slot | None = None) -> _Slot:
        """Open a page in browser `index`: a new slot, or a new page for `slot` in place."""
        handle = self._browsers[index]
        context = await handle.browser.new_context(
            viewport={"width": 768, "height": 1024}, device_scale_factor=1, java_script_enabled=True
        )
        page = await context.new_page()
        cdp = await context.new_cdp_session(page)
        if slot is None:
            slot = _Slot(index=index, browser=handle, context=context, page=page, cdp=cdp)
        else:
            slot.browser, slot.context, slot.page, slot.cdp = handle, context, page, cdp
            slot.crashed, slot.metrics = asyncio.Event(), None
        crashed = slot.crashed  # this page's own event, not a later page's

        def died(_page: Page) -> None:
            crashed.set()

        page.on("crash", died)
        page.on("close", died)

        async def handle_route(route: Route) -> None:
            await self._serve(slot, route)

        await context.route("**/*", handle_route)
        await page.goto(ORIGIN + SHELL_PATH, wait_until="load")
        await cdp.send("DOM.enable")
        await cdp.send("CSS.enable")
        await self._warm_up(slot)
        return slot

    async def _rebuild(self, slot: _Slot) -> None:
        """Give a dead slot a new page, relaunching its browser first when that died too.

        The browser's disconnect can arrive after its pages' crash, so a browser
        that cannot open a page is taken for dead and relaunched as well.
        """
        if slot.browser.gone.is_set():
            await self._relaunch(slot.index, slot.browser)
        else:
            with contextlib.suppress(PlaywrightError, TimeoutError):
                await asyncio.wait_for(slot.context.close(), 5)
        try:
            await asyncio.wait_for(self._open_slot(slot.index, slot), RENDER_TIMEOUT_S)
        except PlaywrightError:
            await self._relaunch(slot.index, self._browsers[slot.index])
            await asyncio.wait_for(self._open_slot(slot.index, slot), RENDER_TIMEOUT_S)
        self.relaunches += 1

    async def _relaunch(self, index: int, dead: _Browser) -> None:
        """Replace browser `index` when it is still the dead one (another slot may have already)."""
        async with self._relaunching[index]:
            if self._browsers[index] is not dead:
                return
            dead.gone.set()
            with contextlib.suppress(PlaywrightError, TimeoutError):
                await asyncio.wait_for(dead.browser.close(), 5)  # what is left of it
            self._browsers[index] = await self._launch()

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
        """Close every browser (those still running) and stop Playwright."""
        if self._opening is not None:
            # Slots still opening are let finish (or fail) before their browser closes.
            await asyncio.gather(self._opening, return_exceptions=True)
            self._opening = None
        for handle in self._browsers:
            with contextlib.suppress(PlaywrightError):
                await handle.browser.close()
        self._browsers.clear()
        if self._playwright is not None:
            await self._playwright.stop()
            self._playwright = None

    async def render(self, document: PageDocument) -> RenderOutput:
        """Render one page document and return its PNG and layout; raise RenderFailure.

        A page that dies under the job is replaced and the job tried again,
        `RENDER_TRIES` times in all; then it fails as `renderer_crashed`.
        """
        if document.math_blocked:
            raise _blocked(*document.math_blocked[0])
        slot = await self._slots.get()
        lost: list[str] = []
        try:
            while len(lost) < RENDER_TRIES:
                if slot.dead:
                    try:
                        await self._rebuild(slot)
                    except Exception as error:  # the relaunch failed: count it as a try
                        lost.append(f"the page could not be replaced ({_first_line(error)})")
                        slot.crashed.set()
                        continue
                try:
                    return await self._guarded(slot, document)
                except _SlotLost as error:
                    lost.append(str(error))
                    slot.crashed.set()  # rebuilt before its next use
            raise RenderFailure(
                "renderer_crashed",
                f"the browser page died {len(lost)} times while rendering ({'; '.join(lost)})",
            )
        finally:
            slot.assets = {}
            slot.refused = []
            self._slots.put_nowait(slot)

    async def _guarded(self, slot: _Slot, document: PageDocument) -> RenderOutput:
        """Render on `slot`, giving up as soon as its page or browser dies, or on the timeout."""
        work = asyncio.ensure_future(self._render(slot, document))
        deaths = [
            asyncio.ensure_future(slot.crashed.wait()),
            asyncio.ensure_future(slot.browser.gone.wait()),
        ]
        try:
            done, _ = await asyncio.wait(
                [work, *deaths], timeout=RENDER_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for waiter in deaths:
                waiter.cancel()
        if work in done:
            try:
                return work.result()
            except PlaywrightError as error:
                if slot.dead or _crashed(error):
                    raise _SlotLost(_first_line(error)) from None
                raise RenderFailure(
                    "page_error", f"the page failed: {_first_line(error)}"
                ) from None
        work.cancel()
        with contextlib.suppress(BaseException):
            await work
        if slot.browser.gone.is_set():
            raise _SlotLost("the browser process went away")
        if slot.crashed.is_set():
            raise _SlotLost("the page's renderer process crashed")
        slot.crashed.set()  # a page stuck this long is not reused
        raise RenderFailure("timeout", f"rendering took longer than {RENDER_TIMEOUT_S:.0f} s")

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
            _SHOW_AND_LAYOUT,
            [
                document.html,
                document.min_scale,
                document.device_scale,
                [dict(face) for face in document.fit_faces],
            ],
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
        if result["math_blocked"]:  # KaTeX's trust hook: a command the deny list missed
            raise _blocked(
                result["math_blocked"][0]["region"], result["math_blocked"][0]["command"]
            )
        if result["math_errors"]:
            first = result["math_errors"][0]
            raise RenderFailure(
                "latex_error",
                f"LaTeX error in {_where(first['region'])}: {first['message']}",
                region_field(first["region"]),
            )
        if result["raw_latex"]:
            raise raw_latex_failure(result["raw_latex"])
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
        measures = clean_measures(
            regions,
            x_height_px=float(result["x_height"]),
            page_scale=float(result["scale"]),
            held_scale=float(result["held_scale"]),
            figure_scale=float(result["figure_scale"]),
            lines=result["lines"],
            font_px=document.font_px,
        )
        layout = Layout(
            width=width,
            height=height,
            regions=regions,
            font_scale=round(float(result["scale"]), 4),
            fonts_requested=document.fonts.families,
            fonts_fallback=dict(document.fonts.fallback_chars),
            fonts_uncovered=document.fonts.uncovered,
            measures=measures,
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
        document = build_page(
            job.item, job.presentation, job.seed, job.content, decor_seed=job.item_seed
        )
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
        normalised = figures_normalised(job)
        if normalised:  # only when a figure needed it, so other records stay as they were
            record["figures_normalised"] = normalised
        return Rendered(output.png, output.layout, record)


def figures_normalised(job: Job) -> dict[str, list[str]]:
    """Return, per figure the page shows, what was done to its file's pixels at load."""
    if job.content.figures != "show":
        return {}
    return {
        str(number): list(figure.normalised)
        for number in job.item.referenced_figures()
        if (figure := job.item.figures.get(number)) is not None and figure.normalised
    }


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
        set_px=round(float(raw["set_px"]), 2),
        color=raw["color"],
        background=raw["background"],
        overflow=bool(raw["overflow"]),
    )


def region_field(region: str) -> str:
    """Return the manifest field of a page region: `question` for its paragraphs, else itself.

    Options keep their letter (`option:B`), so an error in an option is
    reported under that option, not under the question.
    """
    return "question" if region.split(":", 1)[0] == "question" else region


def _blocked(region: str, command: str) -> RenderFailure:
    """Return the failure of an item whose LaTeX uses a command that is not allowed."""
    return RenderFailure(
        "math_blocked",
        f"{command} is not allowed in LaTeX (in {_where(region)})",
        region_field(region),
    )


def raw_latex_failure(findings: Sequence[dict[str, str]]) -> RenderFailure:
    """Return the failure of a page that shows LaTeX as source (`raw_latex`), naming the first.

    `findings` are the page check's (see page.js, rawLatex): each a region, a
    kind (`delimiter`, `command` or `script`), the token and the text around it. The
    record keeps every finding, so a report can count them by kind.
    """
    first = findings[0]
    return RenderFailure(
        "raw_latex",
        f"LaTeX left as source on the page in {_where(first['region'])}: {first['kind']} "
        f"{first['token']} in “{first['context']}”",
        region_field(first["region"]),
        record={
            "raw_latex": [
                {key: str(finding[key]) for key in ("region", "kind", "token", "context")}
                for finding in findings
            ]
        },
    )


def _where(region: str) -> str:
    field_name = region_field(region)
    return (
        f"option {field_name.split(':', 1)[1]}" if field_name.startswith("option:") else field_name
    )


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0][:200]


def _crashed(error: PlaywrightError) -> bool:
    return "crash" in str(error).lower() or "closed" in str(error).lower()
