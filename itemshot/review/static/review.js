// itemshot review: keyboard-first review of an output set.
// No inline script anywhere (the page's content security policy forbids it):
// everything the script needs is in data-* attributes of <main>.
"use strict";

(function () {
  const main = document.getElementById("main");
  const page = main ? main.dataset.page : "";
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const help = document.getElementById("help");
  const toast = document.getElementById("toast");
  const shownAt = performance.now();
  let busy = false;

  function randomId() {
    // crypto.randomUUID needs a secure context; getRandomValues works everywhere.
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function say(text, kind) {
    toast.textContent = text;
    toast.className = "toast " + (kind || "");
    toast.hidden = false;
  }

  function openOverlay(overlay) {
    overlay.hidden = false;
  }

  function closeOverlays() {
    let closed = false;
    document.querySelectorAll(".overlay").forEach((o) => {
      if (!o.hidden) {
        o.hidden = true;
        closed = true;
      }
    });
    return closed;
  }

  function overlayOpen() {
    return Array.from(document.querySelectorAll(".overlay")).some((o) => !o.hidden);
  }

  async function post(path, body) {
    const response = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(body),
      credentials: "same-origin",
    });
    let answer = {};
    try {
      answer = await response.json();
    } catch (error) {
      answer = { ok: false, error: "HTTP " + response.status };
    }
    if (!response.ok || !answer.ok) {
      throw new Error(answer.error || "HTTP " + response.status);
    }
    return answer;
  }

  document.querySelectorAll("[data-help]").forEach((b) =>
    b.addEventListener("click", () => (help.hidden ? openOverlay(help) : closeOverlays()))
  );
  document.querySelectorAll("[data-close]").forEach((b) => b.addEventListener("click", closeOverlays));
  document.querySelectorAll("[data-autosubmit]").forEach((s) =>
    s.addEventListener("change", () => s.form.submit())
  );

  async function undo() {
    if (busy) return;
    busy = true;
    say("undoing your last decision…", "pending");
    try {
      const answer = await post("/api/undo", { id: randomId() });
      say("undone: " + answer.undone + " decision" + (answer.undone === 1 ? "" : "s"), "done");
      document.body.dataset.undone = String(answer.undone);
      // Back to the image whose decision was undone, in the same filtered queue.
      location.assign(
        (answer.next === "/" ? location.pathname : answer.next) + location.search
      );
    } catch (error) {
      say("not undone: " + error.message, "error");
      busy = false;
    }
  }

  // Bulk actions name their count in the confirmation and send it: the server refuses
  // when the selection no longer holds exactly that many images.
  async function confirmed(question, path, body) {
    if (busy || !window.confirm(question)) return;
    busy = true;
    say("saving…", "pending");
    try {
      const answer = await post(path, body);
      document.body.dataset.saved = JSON.stringify(answer);
      location.reload();
    } catch (error) {
      say("not saved: " + error.message, "error");
      busy = false;
    }
  }

  const bulk = document.getElementById("bulk-accept");
  if (bulk) {
    bulk.addEventListener("click", () => {
      const count = Number(bulk.dataset.count);
      confirmed(
        "Accept all " + count + " image" + (count === 1 ? "" : "s") + " in this selection?",
        "/api/bulk",
        { id: randomId(), count: count, query: JSON.parse(main.dataset.query || "{}") }
      );
    });
  }

  // -- the certified review -------------------------------------------------------
  const drawForm = document.getElementById("draw-form");
  if (drawForm) {
    drawForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      const body = {
        max_defect_rate: Number(drawForm.elements.max_defect_rate.value),
        confidence: Number(drawForm.elements.confidence.value),
        seed: Number(drawForm.elements.seed.value),
      };
      try {
        await post("/api/certify/draw", body);
        location.reload();
      } catch (error) {
        say("no sample drawn: " + error.message, "error");
      }
    });
  }
  const grow = document.getElementById("grow-sample");
  if (grow) {
    grow.addEventListener("click", () => {
      const more = Number(main.dataset.more);
      const needed = Number(main.dataset.needed);
      confirmed(
        "Draw " + more + " more images into the audit sample (" + needed + " in all)?",
        "/api/certify/grow",
        { size: needed }
      );
    });
  }
  const certifyButton = document.getElementById("accept-certified");
  if (certifyButton) {
    certifyButton.addEventListener("click", () => {
      const count = Number(main.dataset.toCertify);
      confirmed(
        "Accept " + count + " unsampled verifier-passed images as " +
          "\"accepted by verifier, certified by sample\"?",
        "/api/certify/accept",
        { id: randomId(), count: count }
      );
    });
  }

  // -- the queue ------------------------------------------------------------------
  function queueKeys(event) {
    const cards = Array.from(document.querySelectorAll(".card"));
    let at = cards.findIndex((c) => c.classList.contains("selected"));
    const select = (i) => {
      cards.forEach((c) => c.classList.remove("selected"));
      if (cards[i]) {
        cards[i].classList.add("selected");
        cards[i].scrollIntoView({ block: "nearest" });
      }
    };
    switch (event.key) {
      case "ArrowDown":
      case "j":
        select(Math.min(cards.length - 1, at + 1));
        return true;
      case "ArrowUp":
      case "k":
        select(Math.max(0, at - 1));
        return true;
      case "Enter":
        if (at >= 0) location.assign(cards[at].dataset.link);
        else if (main.dataset.resume) location.assign(main.dataset.resume);
        return true;
      case "ArrowRight":
        if (main.dataset.nextPage) location.assign(main.dataset.nextPage);
        return true;
      case "ArrowLeft":
        if (main.dataset.prevPage) location.assign(main.dataset.prevPage);
        return true;
      case "u":
        undo();
        return true;
    }
    return false;
  }

  // -- one item -------------------------------------------------------------------
  const query = page === "item" ? JSON.parse(main.dataset.query || "{}") : {};
  const stage = document.getElementById("stage");
  const canvas = document.getElementById("canvas");
  const image = document.getElementById("image");
  const boxes = document.getElementById("boxes");
  const showBoxes = document.getElementById("show-boxes");
  const zoomLabel = document.getElementById("zoom-level");
  let zoom = null; // null: fit the stage's width

  function naturalWidth() {
    return Number(canvas.dataset.width) || image.naturalWidth || 1;
  }

  function naturalHeight() {
    return Number(canvas.dataset.height) || image.naturalHeight || 1;
  }

  function fitScale() {
    // The whole image in view, never enlarged.
    const across = (stage.clientWidth - 6) / naturalWidth();
    const down = (stage.clientHeight - 6) / naturalHeight();
    return Math.min(1, across, down);
  }

  function applyZoom() {
    if (!canvas) return;
    const scale = zoom === null ? fitScale() : zoom;
    canvas.style.width = Math.round(naturalWidth() * scale) + "px";
    if (zoomLabel) zoomLabel.textContent = Math.round(scale * 100) + "%";
  }

  function zoomBy(factor) {
    const current = zoom === null ? fitScale() : zoom;
    zoom = Math.max(0.1, Math.min(8, current * factor));
    applyZoom();
  }

  function setZoom(kind) {
    if (kind === "in") zoomBy(1.25);
    else if (kind === "out") zoomBy(0.8);
    else if (kind === "fit") {
      zoom = null;
      applyZoom();
    } else if (kind === "full") {
      zoom = 1;
      applyZoom();
    }
  }

  function toggleBoxes(on) {
    if (!boxes) return;
    const visible = on === undefined ? boxes.classList.contains("hidden") : on;
    boxes.classList.toggle("hidden", !visible);
    if (showBoxes) showBoxes.checked = visible;
  }

  function decisionBody(action, extra) {
    return Object.assign(
      {
        id: randomId(),
        position: Number(main.dataset.position),
        image: main.dataset.image,
        action: action,
        seconds: (performance.now() - shownAt) / 1000,
        adjudication: main.dataset.adjudicate === "1",
        query: query,
      },
      extra || {}
    );
  }

  async function decide(action, extra) {
    if (busy) return;
    busy = true;
    const body = decisionBody(action, extra);
    say("saving " + action + "…", "pending");
    for (let tries = 0; ; tries++) {
      try {
        const answer = await post("/api/decisions", body);
        say(action + " saved", "done");
        document.body.dataset.saved = body.id;
        location.assign(answer.next);
        return;
      } catch (error) {
        // A network blip: send the same decision (same id) again; the server logs it once.
        if (tries < 2 && error instanceof TypeError) continue;
        say("not saved: " + error.message, "error");
        busy = false;
        return;
      }
    }
  }

  async function regenerate() {
    if (busy) return;
    busy = true;
    say("regenerating… (a new attempt is being made and verified)", "pending");
    document.body.classList.add("regenerating");
    try {
      const answer = await post("/api/regenerate", {
        id: randomId(),
        position: Number(main.dataset.position),
        image: main.dataset.image,
        reason: lastRejectReason(),
      });
      say(
        answer.identical
          ? "the new attempt is identical to the old image"
          : "new image: attempt " + answer.attempt + ", verifier " + answer.verdict,
        "done"
      );
      location.reload();
    } catch (error) {
      say("regeneration failed: " + error.message, "error");
      document.body.classList.remove("regenerating");
      busy = false;
    }
  }

  function lastRejectReason() {
    const checked = document.querySelector('#reject-form input[name="reason"]:checked');
    return checked ? checked.value : "";
  }

  const rejectOverlay = document.getElementById("reject");
  const rejectForm = document.getElementById("reject-form");

  function openReject() {
    openOverlay(rejectOverlay);
    const first = rejectForm.querySelector('input[name="reason"]:checked') ||
      rejectForm.querySelector('input[name="reason"]');
    first.focus();
  }

  function submitReject() {
    const reason = lastRejectReason();
    if (!reason) {
      say("pick a reason (1–9)", "error");
      return;
    }
    const note = rejectForm.elements.note.value.trim();
    decide("reject", { reason: reason, note: note });
  }

  if (rejectForm) {
    rejectForm.addEventListener("submit", (event) => {
      event.preventDefault();
      submitReject();
    });
    rejectForm.addEventListener("keydown", (event) => {
      const inNote = event.target.name === "note";
      if (event.key === "Escape") {
        event.preventDefault();
        closeOverlays();
      } else if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        submitReject();
      } else if (!inNote && /^[1-9]$/.test(event.key)) {
        const radios = rejectForm.querySelectorAll('input[name="reason"]');
        const chosen = radios[Number(event.key) - 1];
        if (chosen) {
          chosen.checked = true;
          chosen.focus();
        }
        event.preventDefault();
      }
      event.stopPropagation();
    });
  }

  function itemKeys(event) {
    switch (event.key) {
      case "a":
        decide("accept");
        return true;
      case "r":
        openReject();
        return true;
      case "f":
        decide("flag");
        return true;
      case "g":
        regenerate();
        return true;
      case "u":
        undo();
        return true;
      case "ArrowRight":
        if (main.dataset.next) location.assign(main.dataset.next);
        return true;
      case "ArrowLeft":
        if (main.dataset.prev) location.assign(main.dataset.prev);
        return true;
      case "ArrowDown":
        stage.scrollBy(0, 120);
        return true;
      case "ArrowUp":
        stage.scrollBy(0, -120);
        return true;
      case "+":
      case "=":
        setZoom("in");
        return true;
      case "-":
        setZoom("out");
        return true;
      case "0":
        setZoom("fit");
        return true;
      case "b":
        toggleBoxes();
        return true;
      case "Escape":
        location.assign(main.dataset.queue);
        return true;
    }
    return false;
  }

  if (page === "item") {
    document.querySelectorAll("[data-zoom]").forEach((b) =>
      b.addEventListener("click", () => setZoom(b.dataset.zoom))
    );
    document.querySelectorAll("[data-action]").forEach((b) =>
      b.addEventListener("click", () => {
        const action = b.dataset.action;
        if (action === "reject") openReject();
        else if (action === "regenerate") regenerate();
        else if (action === "undo") undo();
        else decide(action);
      })
    );
    if (showBoxes) showBoxes.addEventListener("change", () => toggleBoxes(showBoxes.checked));
    stage.addEventListener(
      "wheel",
      (event) => {
        if (!event.ctrlKey) return;
        event.preventDefault();
        zoomBy(event.deltaY < 0 ? 1.1 : 0.9);
      },
      { passive: false }
    );
    window.addEventListener("resize", applyZoom);
    if (image.complete) applyZoom();
    else image.addEventListener("load", applyZoom);
    applyZoom();
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const typing = event.target.closest && event.target.closest("input[type=text], textarea, select");
    if (typing) return;
    if (event.key === "?") {
      help.hidden ? openOverlay(help) : closeOverlays();
      event.preventDefault();
      return;
    }
    if (overlayOpen()) {
      if (event.key === "Escape") {
        closeOverlays();
        event.preventDefault();
      }
      return;
    }
    const handled = page === "item" ? itemKeys(event) : page === "queue" ? queueKeys(event) : false;
    if (handled) event.preventDefault();
  });

  document.body.dataset.ready = "1";
})();
