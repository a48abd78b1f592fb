from datetime import UTC, timedelta
from html import escape

from django import template
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.timesince import timesince

from sessions.domain import agents, event_lines, spend
from sessions.domain.moments import spoken_length

register = template.Library()


@register.filter
def age(moment, now=None):
    """How long before `now` (default: the clock; on an as-of page, the chosen moment,
    so a card counts from the same moment as the strip) `moment` was, for people: "just
    now" under a minute."""
    if moment is None:
        return ""
    now = now or timezone.now()
    if now - moment < timedelta(minutes=1):
        return "just now"
    return f"{timesince(moment, now)} ago"


@register.simple_tag(takes_context=True)
def ago(context, moment):
    """`age` counted from the page's `now` when it has one (the board's: the chosen
    moment as of a past one), else from the clock."""
    return age(moment, context.get("now"))


@register.simple_tag
def hand(person, agent):
    """Whose hand: "Codex for alice", with the agent's version on hover; else "alice"."""
    said = agents.hand(person, agent)
    return format_html('<span title="{}">{}</span>', agent, said) if agent else said


@register.filter
def said_of(event):
    """What a timeline row says of an event's own facts (`domain.event_lines`)."""
    return event_lines.event_line(event)


@register.filter
def utc_moment(moment):
    """A stored moment (aware, UTC) as a `<time>` element to the microsecond (to the
    second when it has no fraction, as imported moments often do: no `.000000`). One call
    instead of two `date` filters, which cost a timeline page of 25 rows half its time."""
    utc = moment.astimezone(UTC)
    shown = utc.strftime("%Y-%m-%d %H:%M:%S.%f" if utc.microsecond else "%Y-%m-%d %H:%M:%S")
    return mark_safe(f'<time datetime="{utc.isoformat()}">{shown}</time>')


@register.filter
def from_block(moment):
    """Where a next action came from, when it is a block's reason: "from the block at
    Dec 2 14:02" (UTC, the exact moment on hover); "" otherwise."""
    if moment is None:
        return ""
    utc = moment.astimezone(UTC)
    return format_html(
        'from the block at <time datetime="{}" title="{} UTC">{}</time>',
        utc.isoformat(),
        utc.strftime("%Y-%m-%d %H:%M:%S"),
        utc.strftime("%b %-d %H:%M"),
    )


@register.filter
def next_besides_blockers(view):
    """The next action a card shows apart from its blockers: none when it is an open
    block's reason, already said as the blocker (docs/rules.md, "Surfaces": said once)."""
    said_as_blocker = view.next_action_block is not None and any(
        block.reason == view.next_action for block in view.blockers
    )
    return None if said_as_blocker else view.next_action


# One mark per rollup: its shape says it as well as its colour.
_CHECK_MARKS = {"success": "✓", "pending": "●", "failure": "✗"}


@register.filter
def check_mark(state):
    return _CHECK_MARKS.get(state, "?")


@register.filter
def check_runs(checks):
    """Each run's name and state, for the checks mark's hover."""
    return ", ".join(f"{name}: {state}" for name, state in checks.runs.items())


@register.simple_tag
def work_line(work):
    """Where a session's work lands, in a line: its branch (the repo on hover), its pull
    request (number, link, state) and one checks mark (each run on hover). Built with
    `escape` on every text, as `plan_graph` is: a template include of it made a board of
    500 cards a sixth slower (bench/RESULTS.md, §20)."""
    if work is None:
        return ""
    parts = []
    if work.branch:
        parts.append(
            f'<span class="branch" title="{escape(work.repo or "")}">'
            f"<code>{escape(work.branch)}</code></span>"
        )
    if work.pr:
        number = f"PR #{work.pr.number}"
        if work.pr.url:
            link = f'<a class="pr" href="{escape(work.pr.url)}" rel="noopener noreferrer">'
            parts.append(f"{link}{number}</a>")
        else:
            parts.append(f'<span class="pr">{number}</span>')
        if work.pr.state:
            state = escape(work.pr.state)
            parts[-1] += f' <span class="badge pr-{state}">{state}</span>'
    if work.checks:
        state, runs = escape(work.checks.state), escape(check_runs(work.checks))
        parts.append(
            f'<span class="checks checks-{state}" role="img" aria-label="checks {state}:'
            f' {runs}" title="{runs}">{check_mark(work.checks.state)}</span>'
        )
    line = "\n  ".join(parts)
    # every text in it is escaped above
    return mark_safe(f'<p class="work" aria-label="Where the work lands">\n  {line}\n</p>')


@register.simple_tag
def spend_line(usage):
    """What a session spent, in a line: its cost in dollars (cents, half up), with its
    tokens and any unpriced models on hover. Built in Python, as `work_line` is."""
    if usage is None:
        return ""
    tokens = ", ".join(
        f"{count:,} {kind.replace('_', ' ')}" for kind, count in usage.tokens.items()
    )
    unpriced = f"; not priced: {', '.join(usage.unpriced)}" if usage.unpriced else ""
    more = " + unpriced" if usage.unpriced else ""
    title = escape(f"tokens: {tokens}{unpriced}")
    shown = escape(spend.dollars(usage.cost_usd) + more)
    # every text in it is escaped above
    return mark_safe(f'<p class="spend" aria-label="What it spent" title="{title}">{shown}</p>')


@register.filter
def cache_share(part):
    """Of a model's input-side tokens, the share read from the prompt cache, in whole
    percent: cache reads over input, cache reads and cache writes."""
    whole = part.input + part.cache_read + part.cache_write
    return f"{round(100 * part.cache_read / whole)}%" if whole else "—"


@register.filter
def thousands(number):
    """A whole number with thousands separated: 1,234,567."""
    return f"{number:,}"


@register.filter
def usd(amount):
    """Dollars for people (`spend.dollars`); "not priced" for None."""
    return "not priced" if amount is None else spend.dollars(amount)


@register.filter
def words(name):
    """A state's name as words: `upstream_failed` → `upstream failed`."""
    return str(name).replace("_", " ")


@register.filter
def get_item(mapping, key):
    """`mapping[key]`, or None (e.g. a running node's session view)."""
    return mapping.get(key) if mapping and key is not None else None


def _box_texts(box, view):
    """A node box's state line and its full description (tooltip, and the line under
    the graph on hover and focus): the state, the critical path, and for a running node
    its session's status, stale or lapsed, and blockers. The state line is kept short
    enough for the narrowest box: what it leaves out is in the description."""
    sub = [words(box.state)]
    tip = f"{box.title} ({box.key}): {words(box.state)}"
    if box.critical:
        tip += ", on the critical path"
    if view is not None:
        tip += f", {words(view.status)}"
        if view.status != "active":  # a running or lapsed node's session is active
            sub.append(words(view.status))
        quiet = "lapsed" if view.attention and view.attention.kind == "lapsed" else "stale"
        if view.stale or quiet == "lapsed":
            tip += f", {quiet}"
            if quiet != box.state:
                sub.append(quiet)
        tip += "".join(f"; blocked on {block.reason}" for block in view.blockers)
    return " · ".join(sub), tip


_ARROW = (
    '<path d="{}" class="need{}" marker-end="url(#head{})" data-need="{}" data-node="{}">'
    "<title>{} needs {}</title></path>"
)
_BOX = (
    '<g class="node state-{}{}" data-node="{}" data-state="{}" transform="translate({},{})">'
    '<a href="{}"><title>{}</title>'
    '<rect width="{}" height="{}" rx="6"></rect>'
    '<text class="title" clip-path="url(#box-text)">{}</text>'
    '<text x="{}" y="{}" class="sub" clip-path="url(#box-text)">{}</text></a></g>'
)
_LINE = '<tspan x="{}" y="{}">{}</tspan>'


def _session_links():
    """A function from a session's id to its page's address, escaped: one `reverse` for
    a whole drawing, not one per box."""
    pattern = reverse("session", args=["SESSION"])
    return lambda session_id: pattern.replace("SESSION", escape(session_id), 1)


@register.simple_tag
def plan_graph(drawing, sessions):
    """The plan's DAG as SVG elements. Built here with the standard library's `escape`
    on every text (keys, titles, reasons, ids), not in a template loop or `format_html`,
    whose per-value overhead made a 500-node page slow (bench/RESULTS.md). Every box is
    a link: to its session, else to its entry in the node list under the graph."""
    session_link = _session_links()
    parts = []
    for a in drawing.arrows:
        marks = (" critical", "-critical") if a.critical else ("", "")
        need, node = escape(a.need), escape(a.node)
        parts.append(_ARROW.format(a.path, *marks, need, node, node, need))
    for box in drawing.boxes:
        view = sessions.get(box.session) if box.session else None
        sub, tip = _box_texts(box, view)
        key = escape(box.key)
        link = session_link(box.session) if box.session else f"#node-{key}"
        tip = escape(tip)
        title = "".join(
            _LINE.format(drawing.text_x, y, escape(line))
            for y, line in zip(drawing.line_ys, box.lines, strict=False)
        )
        parts.append(
            _BOX.format(
                box.state,
                " critical" if box.critical else "",
                key,
                box.state,
                box.x,
                box.y,
                link,
                tip,
                drawing.box_width,
                drawing.box_height,
                title,
                drawing.text_x,
                drawing.sub_y,
                escape(sub),
            )
        )
    return mark_safe("\n".join(parts))  # every text in it is escaped above


_LISTED = '<li id="node-{}" data-node="{}">{} <code>{}</code> — {}</li>'


@register.simple_tag
def node_list(drawing):
    """The drawing's nodes as list items, in its columns' order: each full title (a link
    to its session when it has one), key, state, the critical path, and its needs. Built
    like `plan_graph`, for the same reason."""
    session_link = _session_links()
    items = []
    for box in drawing.boxes:
        key, title = escape(box.key), escape(box.title)
        if box.session:
            title = f'<a href="{session_link(box.session)}">{title}</a>'
        facts = words(box.state) + (", on the critical path" if box.critical else "")
        if box.needs:
            facts += "; needs " + ", ".join(box.needs)
        items.append(_LISTED.format(key, key, title, key, escape(facts)))
    return mark_safe("\n".join(items))  # every text in it is escaped above


@register.filter
def duration(value):
    """`moments.spoken_length` of seconds or a timedelta: `45 min`, `6 h`, `3 d`."""
    return spoken_length(value.total_seconds() if isinstance(value, timedelta) else value)


ATTENTION_WORDS = {
    "stale": "stale",
    "blocked_long": "blocked",
    "review_long": "in review",
    "lapsed": "lapsed, silent",
    "checks_failed": "in review with red checks",
    "duplicate": "on a branch another session works",
    "over_budget": "over budget",
}


@register.filter
def overdue_for(reason, now=None):
    """An attention reason as people say it: `blocked 6 h`, counted from its `since` to
    `now` (default: the clock)."""
    return f"{ATTENTION_WORDS[reason.kind]} {duration((now or timezone.now()) - reason.since)}"


@register.filter
def time_bar(spent):
    """Each timed status's share of the time spent, in percent, for a bar: (status,
    seconds, percent, where its part begins in percent) of the statuses with any time."""
    total = sum(spent.values())
    parts, offset = [], 0.0
    for status, seconds in spent.items():
        if seconds and total:
            share = 100 * seconds / total
            parts.append((status, seconds, round(share, 1), round(offset, 2)))
            offset += share
    return parts


@register.filter
def split(text):
    return text.split()
