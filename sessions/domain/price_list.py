"""The price table the project ships (`PRICES_FILE` names another, in the same JSON form):
US dollars per million tokens, per model id (an entry also prices its dated ids:
`claude-sonnet-4-5` prices `claude-sonnet-4-5-20250929`; the longest entry wins).

Read on 2026-12-03 from Anthropic's published list prices: the pricing page,
https://platform.claude.com/docs/en/about-claude/pricing, and each model's overview page,
https://platform.claude.com/docs/en/models/<model>/overview. `cache_write` is the price
of a five-minute cache write (a one-hour write costs more: set it in a `PRICES_FILE` if
your agents write the hour-long cache). Models whose four prices were not all published
there (Claude Opus 5.5, Haiku 5.5 and Fable 5.2 among them) are left out: their usage is
counted and listed as unpriced, never priced by a guess. Add them with `PRICES_FILE`.
"""

SOURCE = "https://platform.claude.com/docs/en/about-claude/pricing"
READ_ON = "2026-12-03"


def _price(input: str, output: str, cache_read: str, cache_write: str) -> dict[str, str]:
    return {"input": input, "output": output, "cache_read": cache_read, "cache_write": cache_write}


PRICES = {
    "claude-fable-5-1": _price("10", "50", "0.25", "12.50"),
    "claude-fable-5": _price("10", "50", "1", "12.50"),
    "claude-opus-5": _price("5", "25", "0.50", "6.25"),
    "claude-opus-4-8": _price("5", "25", "0.50", "6.25"),
    "claude-opus-4-7": _price("5", "25", "0.50", "6.25"),
    "claude-opus-4-6": _price("5", "25", "0.50", "6.25"),
    "claude-opus-4-5": _price("5", "25", "0.50", "6.25"),
    "claude-opus-4-1": _price("15", "75", "1.50", "18.75"),
    "claude-opus-4": _price("15", "75", "1.50", "18.75"),
    "claude-sonnet-5-5": _price("2", "10", "0.20", "2.50"),
    "claude-sonnet-5": _price("2", "10", "0.20", "2.50"),
    "claude-sonnet-4-6": _price("3", "15", "0.30", "3.75"),
    "claude-sonnet-4-5": _price("3", "15", "0.30", "3.75"),
    "claude-sonnet-4": _price("3", "15", "0.30", "3.75"),
    "claude-3-7-sonnet": _price("3", "15", "0.30", "3.75"),
    "claude-haiku-4-5": _price("1", "5", "0.10", "1.25"),
    "claude-3-5-haiku": _price("0.80", "4", "0.08", "1"),
}
