// At a phone's width the navigation folds behind a Menu button (the stylesheet hides it
// only when this script runs: without it, the navigation wraps and stays on screen).
document.documentElement.classList.add("with-menu");
document.addEventListener("click", (event) => {
  const toggle = event.target.closest(".menu-toggle");
  if (!toggle) return;
  const nav = document.getElementById(toggle.getAttribute("aria-controls"));
  const open = !nav.classList.contains("open");
  nav.classList.toggle("open", open);
  toggle.setAttribute("aria-expanded", String(open));
  if (open) { const first = nav.querySelector("a, button"); if (first) first.focus(); }
});

// Live refresh pauses while the tab is hidden and while someone is writing in a form,
// so a poll never throws away what they typed. A poll is a request with no triggering
// event; it is cancelled here rather than by an hx-trigger filter, which htmx would have
// to eval (the page's policy allows no eval, and htmx's config says so: such a filter
// was silently always true).
function towerMayRefresh() {
  if (document.visibilityState !== "visible") return false;
  const active = document.activeElement;
  if (active && active.closest("form") && active.closest("#board, #session-main, #plan-main, #plans")) return false;
  return !document.querySelector("#board details.act[open], #plan-main details.amend[open]");
}

document.addEventListener("htmx:beforeRequest", (event) => {
  const request = event.detail.requestConfig;
  if (request && !request.triggeringEvent && request.verb === "get" && !towerMayRefresh()) {
    event.preventDefault();
  }
});

// A live page whose refresh cannot reach the tower says so at once (the first refresh
// that fails: within two polls), keeps its last good state greyed, and clears both when
// the tower answers again.
function towerIsRefresh(event) {
  const request = event.detail.requestConfig;
  return Boolean(request && !request.triggeringEvent && request.verb === "get");
}
function towerReached(reached, element) {
  const notice = document.getElementById("tower-reach");
  const text = reached ? "" : "Can't reach the tower, retrying…";
  if (notice && notice.textContent !== text) notice.textContent = text;
  document.querySelectorAll(".out-of-touch").forEach((e) => e.classList.remove("out-of-touch"));
  if (!reached && element) element.classList.add("out-of-touch");
}
document.addEventListener("htmx:sendError", (event) => {
  if (towerIsRefresh(event)) towerReached(false, event.detail.elt);
});
document.addEventListener("htmx:responseError", (event) => {
  if (towerIsRefresh(event) && event.detail.xhr.status >= 500) towerReached(false, event.detail.elt);
});
document.addEventListener("htmx:afterRequest", (event) => {
  if (event.detail.successful) towerReached(true, null);
});

// A refresh re-renders the board: keep the Closed column unfolded if it was.
let towerClosedOpen = false;
document.addEventListener("htmx:beforeSwap", () => {
  towerClosedOpen = Boolean(document.querySelector("#board .closed-column[open]"));
});
document.addEventListener("htmx:afterSwap", () => {
  const closed = document.querySelector("#board .closed-column");
  if (closed && towerClosedOpen) closed.open = true;
});

// Escape folds the open action (or form) the focus is in, else the one open, and gives
// focus back to its summary, where the hand was.
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  const active = document.activeElement;
  const open = (active && active.closest("details[open]")) ||
    document.querySelector("details.act[open], details.amend[open]");
  if (!open) return;
  open.open = false;
  const summary = open.querySelector("summary");
  if (summary) summary.focus();
});

// A Copy button copies the text of the element its data-copy names, and says so.
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const source = document.querySelector(button.dataset.copy);
  if (!source || !navigator.clipboard) return;
  await navigator.clipboard.writeText(source.textContent.trim());
  const label = button.textContent;
  button.textContent = "Copied";
  setTimeout(() => { button.textContent = label; }, 1500);
});

// After an action on a card, the hand stays there: focus goes to the fresh card's field
// in error, else to the card itself (it was replaced whole, and may have moved column
// when the board refreshed right after).
let towerActedOn = null;
document.addEventListener("htmx:beforeRequest", (event) => {
  const card = event.target.closest && event.target.closest(".card");
  if (card && event.target.matches("form")) towerActedOn = { id: card.id, at: Date.now() };
});
// What the card acted on was told (a conflict, a refusal) outlives the board's refresh
// that follows it, which re-renders every card without it.
let towerCardMessage = null;
const towerActedCard = () =>
  towerActedOn && Date.now() - towerActedOn.at <= 5000 && document.getElementById(towerActedOn.id);
document.addEventListener("htmx:beforeSwap", () => {
  const card = towerActedCard();
  const said = card && card.querySelector(":scope > .message");
  if (said) towerCardMessage = said.cloneNode(true);
});
document.addEventListener("htmx:afterSwap", () => {
  const card = towerActedCard();
  if (!card || !towerCardMessage) return;
  if (!card.querySelector(":scope > .message")) card.querySelector(":scope > header").after(towerCardMessage);
  towerCardMessage = null;
});
// The eye stays there too: the card is scrolled into view with the least movement when
// it is not (it moved column, the Closed one included; htmx gives the new card the focus
// without scrolling).
document.addEventListener("htmx:afterSettle", () => {
  if (!towerActedOn || Date.now() - towerActedOn.at > 5000) return;
  const card = document.getElementById(towerActedOn.id);
  if (!card) return;
  // A card just closed stays in view with its outcome: its folded column opens.
  const fold = card.closest("details.closed-column");
  if (fold && !fold.open) fold.open = true;
  const active = document.activeElement;
  if (!(active && active !== document.body && card.contains(active))) {
    const field = card.querySelector("details[open] .error") && card.querySelector("details[open] textarea");
    (field || card).focus({ preventScroll: true });
  }
  const box = card.getBoundingClientRect();
  if (box.top < 0 || box.bottom > window.innerHeight) card.scrollIntoView({ block: "nearest" });
});

// "Notify me in this browser": once allowed, the board asks the tower what needs this
// person since the last time (a feed cursor kept in the browser) and shows each thing
// once, as a notification; nothing while they are looking at the board (the cursor
// still moves on, so it is not shown later either).
(function towerNotifications() {
  const button = document.getElementById("notify-opt-in");
  if (!button || !("Notification" in window)) return;
  const CURSOR = "towerNotifyAfter", SEEN = "towerNotified", ON = "towerNotify";
  const isOn = () => localStorage.getItem(ON) === "on" && Notification.permission === "granted";
  const show = () => {
    button.hidden = false;
    button.textContent = isOn() ? "Notifications on (turn off)" : "Notify me in this browser";
    button.setAttribute("aria-pressed", String(isOn()));
  };
  async function poll() {
    if (!isOn()) return;
    const after = localStorage.getItem(CURSOR);
    const answer = await fetch(button.dataset.url + (after ? "?after=" + after : ""),
      { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (!answer.ok) return;
    const found = await answer.json();
    const seen = new Set(JSON.parse(localStorage.getItem(SEEN) || "[]"));
    const looking = document.visibilityState === "visible" && document.hasFocus();
    for (const item of found.items) {
      if (seen.has(item.key)) continue;
      seen.add(item.key);
      if (looking) continue;
      const note = new Notification(item.title, { body: item.body, tag: item.key });
      note.onclick = () => { window.focus(); window.location.href = item.url; };
    }
    localStorage.setItem(SEEN, JSON.stringify([...seen].slice(-500)));
    localStorage.setItem(CURSOR, String(found.next_after));
  }
  button.addEventListener("click", async () => {
    if (isOn()) {
      localStorage.removeItem(ON);
    } else if ((await Notification.requestPermission()) === "granted") {
      localStorage.setItem(ON, "on");
      await poll();
    }
    show();
  });
  show();
  poll();
  setInterval(poll, 1000 * Number(button.dataset.pollSeconds || 5));
})();

// The plan's graph fits its frame's width (never beyond its full size), and zooms and
// pans: the buttons; + − and 0 on the focused frame (the arrow keys scroll it); dragging.
// The zoom and the view are kept across live refreshes. A node's full title and state
// show under the graph on hover and focus.
// It opens at a readable size (at least half size: on a phone, fitting a 40-node plan
// made it a quarter size), panning from there, with Fit one tap away; a person's choice
// (Fit, or a zoom) is kept per plan in this browser.
(function towerGraph() {
  const MIN = 0.1, MAX = 2, STEP = 1.25, READABLE = 0.5;
  let zoom, view = null;  // zoom: null (fitted) or a scale; undefined until the first draw
  const choiceKey = (graph) => "towerGraphZoom:" + graph.dataset.plan;
  function chosen(graph) {
    const kept = localStorage.getItem(choiceKey(graph));
    if (kept === "fit") return null;
    if (kept && Number(kept) > 0) return Math.min(MAX, Math.max(MIN, Number(kept)));
    const whole = Math.min(1, graph.clientWidth / Number(graph.dataset.width));
    return whole < READABLE ? READABLE : null;
  }
  const frame = () => document.getElementById("plan-graph");
  // Fitted, the stylesheet sizes the graph (max-width: 100%), so that nothing is laid
  // out twice (a 500-node graph's second layout cost Chromium 250 ms); a scale is set
  // only when zoomed.
  function show(graph) {
    const svg = graph.querySelector("svg"), natural = Number(graph.dataset.width);
    const whole = Math.min(1, graph.clientWidth / natural);
    const scale = zoom == null ? whole : zoom;
    const sized = scale === whole ? "" : natural * scale + "px";
    if (svg.style.width !== sized) {
      svg.style.width = sized;
      svg.style.height = sized && Number(graph.dataset.height) * scale + "px";
      svg.style.maxWidth = sized && "none";
    }
    graph.dataset.scale = scale.toFixed(3);
    graph.classList.toggle("zoomable", scale > whole || graph.scrollHeight > graph.clientHeight);
    const level = document.querySelector(".graph-tools .zoom-level");
    if (level) level.textContent = Math.round(scale * 100) + "%";
  }
  function setUp() {
    const graph = frame();
    if (!graph || graph.dataset.scale) return;
    graph.previousElementSibling.hidden = false;
    if (zoom === undefined) zoom = chosen(graph);
    show(graph);
    if (view) { graph.scrollLeft = view.left; graph.scrollTop = view.top; }
  }
  function zoomBy(how) {
    const graph = frame();
    if (!graph) return;
    const now = Number(graph.dataset.scale);
    if (how === "fit") zoom = null;
    else if (how === "actual") zoom = 1;
    else zoom = Math.min(MAX, Math.max(MIN, how === "in" ? now * STEP : now / STEP));
    localStorage.setItem(choiceKey(graph), zoom === null ? "fit" : String(zoom));
    show(graph);
  }
  document.addEventListener("DOMContentLoaded", setUp);
  document.addEventListener("htmx:beforeSwap", () => {
    const graph = frame();
    if (graph) view = { left: graph.scrollLeft, top: graph.scrollTop };
  });
  document.addEventListener("htmx:afterSettle", setUp);
  window.addEventListener("resize", () => { const graph = frame(); if (graph) show(graph); });
  document.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-zoom]");
    if (button) zoomBy(button.dataset.zoom);
  });
  document.addEventListener("keydown", (event) => {
    if (event.target !== frame() || event.ctrlKey || event.metaKey || event.altKey) return;
    const how = { "+": "in", "=": "in", "-": "out", "0": "fit" }[event.key];
    if (!how) return;
    event.preventDefault();
    zoomBy(how);
  });
  let drag = null;
  document.addEventListener("pointerdown", (event) => {
    const graph = frame();
    if (!graph || !graph.contains(event.target) || event.target.closest("a") || event.button !== 0) return;
    drag = { x: event.clientX, y: event.clientY, left: graph.scrollLeft, top: graph.scrollTop };
    graph.classList.add("panning");
  });
  document.addEventListener("pointermove", (event) => {
    const graph = frame();
    if (!drag || !graph) return;
    graph.scrollLeft = drag.left - (event.clientX - drag.x);
    graph.scrollTop = drag.top - (event.clientY - drag.y);
  });
  document.addEventListener("pointerup", () => {
    drag = null;
    const graph = frame();
    if (graph) graph.classList.remove("panning");
  });
  const detail = (event) => {
    const node = event.target.closest && event.target.closest(".graph g.node > a");
    const line = document.getElementById("plan-graph-detail");
    if (node && line) line.textContent = node.querySelector("title").textContent;
  };
  document.addEventListener("mouseover", detail);
  document.addEventListener("focusin", detail);
})();
