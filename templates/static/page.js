// Runs inside the rendering page: typesets math, waits for images and fonts,
// shrinks content that does not fit, and reports every region's box and text.
// It is our own script; item text never reaches it except as DOM text.
(function () {
  "use strict";

  // Requests the page's content security policy stopped before they left the
  // page; reported with the layout so such a job fails like a refused request.
  const blocked = [];
  document.addEventListener("securitypolicyviolation", (event) => {
    blocked.push(event.blockedURI || event.violatedDirective);
  });

  // Resolves once `el` has loaded or failed to; with the request guard, a
  // refused resource has been recorded by then.
  function settled(el) {
    return new Promise((resolve) => {
      el.addEventListener("load", resolve, { once: true });
      el.addEventListener("error", resolve, { once: true });
    });
  }

  // Typesets every formula. Errors and commands that asked to be trusted (links,
  // images, classes, styles) are reported with the region they are in, so the
  // job fails naming the question or the option at fault.
  function typesetMath() {
    const errors = [];
    const refused = [];
    for (const el of document.querySelectorAll(".math")) {
      const latex = el.getAttribute("data-latex");
      const holder = el.closest("[data-region]");
      const region = holder ? holder.getAttribute("data-region") : "question";
      try {
        window.katex.render(latex, el, {
          displayMode: el.classList.contains("display"),
          throwOnError: true,
          trust: (context) => {
            refused.push({ region: region, command: context.command });
            return false;
          },
          strict: "ignore",
        });
      } catch (error) {
        el.classList.add("math-error");
        el.textContent = latex;
        const message = String(error && error.message ? error.message : error);
        errors.push({ region: region, message: latex + ": " + message });
      }
    }
    return { errors: errors, refused: refused };
  }

  function overflowing(box) {
    return box.scrollHeight > box.clientHeight + 0.5 || box.scrollWidth > box.clientWidth + 0.5;
  }

  function fit(minScale) {
    const box = document.getElementById("content");
    const root = document.documentElement;
    let scale = 1;
    while (overflowing(box) && scale > minScale) {
      scale = Math.max(minScale, scale * 0.92);
      root.style.setProperty("--s", String(scale));
    }
    return { scale: scale, fits: !overflowing(box) };
  }

  function effectiveBackground(el) {
    for (let node = el; node; node = node.parentElement) {
      const bg = getComputedStyle(node).backgroundColor;
      if (bg && bg !== "rgba(0, 0, 0, 0)" && bg !== "transparent") return bg;
    }
    return "rgb(255, 255, 255)";
  }

  function describe(el, scale) {
    const rect = el.getBoundingClientRect();
    const texts = Array.from(el.querySelectorAll(".t"));
    const paragraphs = el.querySelectorAll(".q-par");
    let text;
    if (paragraphs.length) {
      text = Array.from(paragraphs)
        .map((p) => Array.from(p.querySelectorAll(".t")).map((t) => t.textContent).join(""))
        .join("\n");
    } else {
      text = texts.map((t) => t.textContent).join("");
    }
    const label = el.querySelector(":scope > .label");
    const first = texts[0] || el;
    const style = getComputedStyle(first);
    const math = Array.from(el.querySelectorAll(".math")).map((m) => m.getAttribute("data-latex"));
    let clipped = el.scrollWidth > el.clientWidth + 1;
    if (el.tagName === "IMG") clipped = clipped || !el.complete || el.naturalWidth === 0;
    return {
      name: el.getAttribute("data-region"),
      box: [rect.left * scale, rect.top * scale, rect.right * scale, rect.bottom * scale],
      text: text,
      math: math,
      label: label ? label.textContent : "",
      font_px: parseFloat(style.fontSize) * scale,
      color: style.color,
      background: effectiveBackground(el),
      overflow: clipped,
      placeholder: el.classList.contains("placeholder"),
    };
  }

  // A web font starts loading only once layout needs it, and `fonts.ready` may
  // resolve before that: force layout, then wait for every face still loading.
  async function settleFonts() {
    void document.body.offsetHeight;
    await document.fonts.ready;
    const loading = Array.from(document.fonts).filter((face) => face.status === "loading");
    await Promise.all(loading.map((face) => face.loaded.catch(() => null)));
  }

  // CSS background images (scene textures) load on their own schedule and are
  // not in document.images: decode each one so the screenshot never races it.
  async function settleBackgrounds() {
    const urls = new Set();
    for (const el of document.querySelectorAll("*")) {
      for (const pseudo of [null, "::before", "::after"]) {
        const value = getComputedStyle(el, pseudo).backgroundImage;
        for (const match of value.matchAll(/url\("?([^")]+)"?\)/g)) urls.add(match[1]);
      }
    }
    const failed = [];
    await Promise.all(
      Array.from(urls).map((url) => {
        const image = new Image();
        image.src = url;
        return image.decode().catch(() => failed.push(url));
      }),
    );
    return failed;
  }

  // Stylesheets come and go with the job: one already loaded is switched on or
  // off through its CSSStyleSheet (the link's own `disabled` would refetch it
  // asynchronously); a new one is added and awaited.
  function applyStylesheets(parsedHead) {
    const wanted = Array.from(parsedHead.querySelectorAll("link[rel=stylesheet]"));
    const hrefs = new Set(wanted.map((link) => link.getAttribute("href")));
    const present = new Map();
    for (const link of document.head.querySelectorAll("link[rel=stylesheet]")) {
      present.set(link.getAttribute("href"), link);
      if (link.sheet) link.sheet.disabled = !hrefs.has(link.getAttribute("href"));
    }
    const loads = [];
    for (const link of wanted) {
      if (present.has(link.getAttribute("href"))) continue;
      const added = document.createElement("link");
      added.rel = "stylesheet";
      loads.push(settled(added));
      added.href = link.getAttribute("href");
      document.head.appendChild(added);
    }
    for (const style of document.head.querySelectorAll("style")) style.remove();
    for (const style of parsedHead.querySelectorAll("style")) document.head.appendChild(style);
    return Promise.all(loads);
  }

  // Shows a job's page inside this long-lived shell document instead of loading
  // a new document per job: KaTeX, fonts, stylesheets and textures stay loaded.
  // The HTML is our own autoescaped template output; the parsed copy is inert
  // (no script runs, nothing loads) until its nodes are moved into the page,
  // and script elements are dropped before that.
  window.itemshotShow = async function (html) {
    const parsed = new DOMParser().parseFromString(html, "text/html");
    for (const script of parsed.querySelectorAll("script")) script.remove();
    blocked.length = 0;
    // What else in the body loads something (images are awaited by the layout).
    const loading = Array.from(
      parsed.body.querySelectorAll("link[rel~=stylesheet], iframe, object, image"),
    ).map(settled);
    const root = document.documentElement;
    root.removeAttribute("style");
    root.lang = parsed.documentElement.lang;
    await applyStylesheets(parsed.head);
    document.body.className = parsed.body.className;
    // Hidden until laid out: the frames Chromium paints while figures, fonts
    // and the fit loop settle then cost next to nothing (itemshotLayout shows it).
    document.body.style.visibility = "hidden";
    document.body.replaceChildren(...Array.from(parsed.body.childNodes));
    window.scrollTo(0, 0);
    await Promise.all(loading);
  };

  window.itemshotLayout = async function (minScale, deviceScale) {
    const math = window.katex ? typesetMath() : { errors: [], refused: [] };
    const images = Array.from(document.images);
    await Promise.all(images.map((img) => img.decode().catch(() => null)));
    const broken = images.filter((img) => img.naturalWidth === 0).map((img) => img.getAttribute("src"));
    broken.push(...(await settleBackgrounds()));
    await settleFonts();
    const fitted = fit(minScale);
    await settleFonts();
    document.body.style.removeProperty("visibility");
    const regions = Array.from(document.querySelectorAll("[data-region]")).map((el) =>
      describe(el, deviceScale),
    );
    // One entry per text span, in document order, so the caller can pair each
    // span with the fonts the browser actually used for it.
    const spanRegions = Array.from(document.querySelectorAll("[data-region] .t")).map((t) =>
      t.closest("[data-region]").getAttribute("data-region"),
    );
    return {
      scale: fitted.scale,
      fits: fitted.fits,
      math_errors: math.errors,
      math_blocked: math.refused,
      broken_images: broken,
      blocked: blocked.slice(),
      regions: regions,
      span_regions: spanRegions,
    };
  };
})();
