// Live refresh pauses while the tab is hidden and while someone is writing in a form,
// so a poll never throws away what they typed.
function towerMayRefresh() {
  if (document.visibilityState !== "visible") return false;
  const active = document.activeElement;
  if (active && active.closest("form") && active.closest("#board, #session-main, #plan-main, #plans")) return false;
  return !document.querySelector("#board details.act[open], #plan-main details.amend[open]");
}

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
document.addEventListener("htmx:afterSettle", () => {
  if (!towerActedOn || Date.now() - towerActedOn.at > 5000) return;
  const card = document.getElementById(towerActedOn.id);
  const active = document.activeElement;
  if (!card || (active && active !== document.body && card.contains(active))) return;
  const field = card.querySelector("details[open] .error") && card.querySelector("details[open] textarea");
  (field || card).focus();
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
