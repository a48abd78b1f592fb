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
