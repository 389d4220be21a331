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

  // Commands items use that this KaTeX lacks, as the nearest command it has
  // (a fresh copy per formula: a formula's \gdef must not reach the next one).
  const MACROS = { "\\overparen": "\\overgroup" };

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
          macros: Object.assign({}, MACROS),
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

  // What a reader sees of a region as text: its text nodes, with each formula
  // (KaTeX's output and its TeX annotation are not text) and each nested region
  // as a break, and paragraphs and list items on lines of their own.
  const BREAK = "\u2063";
  function readerText(node, out) {
    for (const child of node.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) {
        out.push(child.data);
      } else if (child.nodeType === Node.ELEMENT_NODE) {
        if (child.classList.contains("math") || child.hasAttribute("data-region")) {
          out.push(BREAK);
        } else if (/^(P|LI|DIV|FIGURE|FIGCAPTION|BR)$/.test(child.tagName)) {
          out.push("\n");
          readerText(child, out);
          out.push("\n");
        } else {
          readerText(child, out);
        }
      }
    }
    return out;
  }

  // Whether `\name` is a command to the typesetter (KaTeX knows it, even when it
  // wants arguments) rather than a backslash in prose such as `C:\Users` or `\n`.
  const commandCache = new Map();
  function isCommand(name) {
    if (!commandCache.has(name)) {
      let known = true;
      if (window.katex) {
        try {
          window.katex.renderToString("\\" + name, { throwOnError: true, strict: "ignore" });
        } catch (error) {
          known = !/Undefined control sequence/.test(String(error && error.message));
        }
      }
      commandCache.set(name, known);
    }
    return commandCache.get(name);
  }

  function around(text, start, end) {
    return text.slice(Math.max(0, start - 12), end + 12).replace(/[\n\u2063]+/g, " ").trim();
  }

  // LaTeX a reader would see as source on the page: a display or bracket
  // delimiter, a command (`\mu`, or any `\name{`), a braced script, a dollar that opens TeX
  // (`$\mu`, `$^`), or two dollars around TeX (not prose) or one token (`$x$`). An
  // amount is not: a dollar followed by a digit closes no formula of plain
  // text ("$5 and $10"), and two dollars around plain words are prose ("$5
  // per share, in $ thousands").
  // Two words of three letters or more in a row (not command names): prose.
  const PROSE = /(?<![\\A-Za-z])[A-Za-z]{3,}\s+[A-Za-z]{3,}(?![A-Za-z])/;
  function rawLatexIn(text) {
    const found = [];
    for (const m of text.matchAll(/\$\$|\\[()[\]]/g)) {
      found.push({ kind: "delimiter", token: m[0], context: around(text, m.index, m.index + 2) });
    }
    for (const m of text.matchAll(/\\([A-Za-z]+)(\{?)/g)) {
      if (m[2] || isCommand(m[1])) {
        const end = m.index + m[0].length;
        found.push({ kind: "command", token: "\\" + m[1], context: around(text, m.index, end) });
      }
    }
    // A braced script (`e^{-t}`, `V_{in}`) is TeX whatever surrounds it.
    for (const m of text.matchAll(/[\^_]\{/g)) {
      found.push({ kind: "script", token: m[0], context: around(text, m.index, m.index + 2) });
    }
    const dollars = [];
    for (let i = 0; i < text.length; i++) {
      if (text[i] === "$" && text[i - 1] !== "\\" && text[i - 1] !== "$" && text[i + 1] !== "$") {
        dollars.push(i);
      }
    }
    for (const i of dollars) {
      if (/[\\^_{]/.test(text[i + 1] || "")) {
        found.push({ kind: "delimiter", token: "$", context: around(text, i, i + 2) });
      }
    }
    for (let k = 0; k + 1 < dollars.length; k++) {
      const open = dollars[k];
      const close = dollars[k + 1];
      const inner = text.slice(open + 1, close);
      if (inner.includes("\n") || inner.includes(BREAK)) continue;
      const latex = inner.trim();
      const tex = /[\\^_{}]/.test(latex) && !PROSE.test(latex.replace(/\{[^{}]*\}/g, " "));
      if (/\d/.test(text[close + 1] || "") && !tex) continue;
      if (latex && (tex || !/\s/.test(latex))) {
        found.push({ kind: "delimiter", token: "$", context: around(text, open, close + 1) });
      }
    }
    return found;
  }

  // Every region's reader text checked for LaTeX left as source, in page order.
  function rawLatex() {
    const found = [];
    for (const el of document.querySelectorAll("[data-region]")) {
      const text = readerText(el, []).join("");
      for (const finding of rawLatexIn(text)) {
        found.push({ region: el.getAttribute("data-region"), ...finding });
      }
    }
    return found;
  }

  function overflowing(box) {
    return box.scrollHeight > box.clientHeight + 0.5 || box.scrollWidth > box.clientWidth + 0.5;
  }

  // Shrinks the scale named `names` (text `--s`, figures `--fs`) in steps of `step`
  // until the content fits or the scale reaches `minScale`; returns the scale.
  function shrink(box, names, scale, minScale, step) {
    const root = document.documentElement;
    while (overflowing(box) && scale > minScale) {
      scale = Math.max(minScale, scale * step);
      for (const name of names) root.style.setProperty(name, String(scale));
    }
    return scale;
  }

  // Sets the item's text in one of the faces the scale must hold for.
  function setFace(box, face) {
    box.style.fontFamily = face.family;
    box.style.fontWeight = String(face.weight);
    box.style.fontSize = "calc(" + face.size + "px * var(--s))";
    box.style.lineHeight = String(face.line);
    box.style.setProperty("--math", String(face.math));
  }

  // The scale an item's page is fitted at does not depend on its font style: it
  // is the scale at which the item's text fits in every style of the catalogue,
  // each at its x-height-matched size (`faces`, text and figures shrinking
  // together), so every font-style cell of an item has the same scale, figure
  // boxes and x-height. Should the item's own face still overflow (a face outside
  // the styles), its text alone shrinks further, in fine steps, and its figures
  // only once the text is at its minimum. A style the item fits in at no scale
  // is left out. Without `faces`, the item's own face sets the scale.
  function fit(minScale, faces) {
    const box = document.getElementById("content");
    const root = document.documentElement;
    let held = 1;
    for (const face of faces) {
      setFace(box, face);
      const scale = shrink(box, ["--s", "--fs"], held, minScale, 0.92);
      if (overflowing(box)) {
        // A style the item does not fit in at all cannot be rendered anyway: it
        // must not shrink the others' pages to the minimum.
        root.style.setProperty("--s", String(held));
        root.style.setProperty("--fs", String(held));
        continue;
      }
      held = scale;
    }
    box.removeAttribute("style");
    if (!faces.length) held = shrink(box, ["--s", "--fs"], 1, minScale, 0.92);
    const scale = shrink(box, ["--s"], held, minScale, 0.98);
    const figures = shrink(box, ["--fs"], held, minScale, 0.92);
    return { scale: scale, figures: figures, held: held, fits: !overflowing(box) };
  }

  // The x-height of the face and size the first text span is set in, in device
  // pixels: the median ink height, bottom to top, of the lowercase letters with
  // neither ascender nor descender (as fonts/metrics.py defines it), measured by
  // the browser's own text machinery (canvas text metrics), not read from tables.
  const X_HEIGHT_LETTERS = "acemnorsuvwxz";
  const canvas = document.createElement("canvas");
  function xHeight(deviceScale) {
    const probe = document.querySelector("#content [data-region] .t:not(.glyph):not(.figref)");
    if (!probe) return 0;
    const style = getComputedStyle(probe);
    const context = canvas.getContext("2d");
    // Measured at 250 px and scaled down: the metrics come back in whole pixels, and
    // above 256 px the browser takes them from a 64 px glyph (steps of 1/64 em).
    context.font = style.fontStyle + " " + style.fontWeight + " 250px " + style.fontFamily;
    const heights = Array.from(X_HEIGHT_LETTERS, (letter) => {
      const metrics = context.measureText(letter);
      return metrics.actualBoundingBoxAscent + metrics.actualBoundingBoxDescent;
    }).sort((a, b) => a - b);
    const median = heights[(heights.length - 1) / 2];
    return (median * parseFloat(style.fontSize) * deviceScale) / 250;
  }

  // The number of lines a region's text is set on: distinct rows of the boxes of
  // its text runs and formulas (a paragraph's own box would span all its lines).
  function lineCount(el) {
    const range = document.createRange();
    const rects = [];
    for (const part of el.querySelectorAll(".t, .math")) {
      if (part.classList.contains("math")) {
        rects.push(...part.getClientRects());
        continue;
      }
      for (const node of part.childNodes) {
        if (node.nodeType !== Node.TEXT_NODE) continue;
        range.selectNodeContents(node);
        rects.push(...range.getClientRects());
      }
    }
    const rows = [];
    for (const rect of rects) {
      if (rect.width <= 0 || rect.height <= 0) continue;
      const middle = (rect.top + rect.bottom) / 2;
      if (!rows.some((row) => middle >= row.top && middle <= row.bottom)) {
        rows.push({ top: rect.top, bottom: rect.bottom });
      }
    }
    return rows.length;
  }

  function textLines() {
    const lines = {};
    for (const el of document.querySelectorAll("#content [data-region]")) {
      const name = el.getAttribute("data-region");
      if (/^(question|option)/.test(name)) {
        const body = el.querySelector(":scope > .o-body") || el;
        lines[name] = lineCount(body);
      }
    }
    return lines;
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
      // In the reference face's px: a face set larger to match the reference's
      // x-height (`--math` is nominal / set size) reads as the nominal size.
      font_px: parseFloat(style.fontSize) * (parseFloat(style.getPropertyValue("--math")) || 1) * scale,
      // The size the face was actually set at, in device px: what its glyphs are drawn at.
      set_px: parseFloat(style.fontSize) * scale,
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

  window.itemshotLayout = async function (minScale, deviceScale, faces) {
    const math = window.katex ? typesetMath() : { errors: [], refused: [] };
    const images = Array.from(document.images);
    await Promise.all(images.map((img) => img.decode().catch(() => null)));
    const broken = images.filter((img) => img.naturalWidth === 0).map((img) => img.getAttribute("src"));
    broken.push(...(await settleBackgrounds()));
    await settleFonts();
    const fitted = fit(minScale, faces || []);
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
      held_scale: fitted.held,
      figure_scale: fitted.figures,
      x_height: xHeight(deviceScale),
      lines: textLines(),
      fits: fitted.fits,
      math_errors: math.errors,
      raw_latex: rawLatex(),
      math_blocked: math.refused,
      broken_images: broken,
      blocked: blocked.slice(),
      regions: regions,
      span_regions: spanRegions,
    };
  };
})();
