"""Control Tower's own settings, read in one place, and checked when Django starts.

`controltower/settings.py` reads them from the environment; every layer asks `current()`
for them (read once, and again when a setting changes, so a test's override holds).
`manage.py check` refuses values no board could work with, naming the setting.
"""

import functools
import ipaddress
import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver

from sessions.domain import price_list, spend, vocabulary


@dataclass(frozen=True)
class TowerSettings:
    stale_after_minutes: int  # active and quiet this long: stale
    blocked_attention_minutes: int  # blocked this long: needs attention
    review_attention_minutes: int  # in review this long: needs attention
    attention_lines: int  # the board's Needs attention strip shows this many
    visit_gap_minutes: int  # board loads closer together are one visit
    poll_seconds: int  # the board's refresh interval
    recently_closed_hours: int  # how long a closed session stays in the Closed column
    board_column_limit: int  # cards per board column, a page at a time
    webhooks_per_user: int  # the most webhooks one person may have
    webhook_timeout_seconds: int  # the worker's connect and read timeout, per POST
    webhook_ping_timeout_seconds: int  # the same, per ping
    lease_minutes: int  # the lease written into a new plan that names none
    max_attempts: int  # the cap on attempts written into a new plan that names none
    feed_wait_seconds: int  # the most a feed request waits for an event here (0: never)
    shared_branches: tuple[str, ...]  # branches many work on at once: never duplicate work
    github_actor: str  # the user the forge integration appends as
    github_webhook_secret: str  # the forge's webhook secret; none: no integration (404)
    webhook_allowed_networks: tuple[str, ...]  # CIDRs a webhook may point into after all
    prices_file: str  # a price table of one's own; none: the shipped one
    content_security_policy: str  # the header every answer carries
    permissions_policy: str  # likewise
    request_body_limit: int  # Django's DATA_UPLOAD_MAX_MEMORY_SIZE: the most a body holds


# Where a setting's Django name is not its field's, upper-cased.
_DJANGO_NAMES = {"request_body_limit": "DATA_UPLOAD_MAX_MEMORY_SIZE"}


@functools.cache
def current() -> TowerSettings:
    """The settings in force now: read once (every request asks; reading them through
    Django's lazy settings cost a fiftieth of an append), and again after a change
    (`override_settings`, a test's `settings`). The one door to Django's settings: the
    layers contract refuses a read of them anywhere else."""
    return TowerSettings(**{f.name: _setting(f.name) for f in fields(TowerSettings)})


def _setting(name: str) -> Any:
    value = getattr(settings, _DJANGO_NAMES.get(name, name.upper()))
    return tuple(value) if isinstance(value, list) else value


@receiver(setting_changed)
def _read_again(setting: str, **kwargs: object) -> None:
    if setting in _SETTING_NAMES:
        current.cache_clear()


_SETTING_NAMES = {_DJANGO_NAMES.get(f.name, f.name.upper()) for f in fields(TowerSettings)}
# The counts `manage.py check` bounds: every whole-number setting of our own.
_COUNTS = [f for f in fields(TowerSettings) if f.type is int and f.name not in _DJANGO_NAMES]


# The plan defaults go into plan events, whose fields have their own ranges; a feed's
# wait is at most what the API allows, and may be 0 (answer at once: no long polls).
_HIGHEST = {
    "lease_minutes": vocabulary.INTEGER_RANGES["lease"][1],
    "max_attempts": vocabulary.INTEGER_RANGES["max_attempts"][1],
    "feed_wait_seconds": vocabulary.MAX_FEED_WAIT_SECONDS,
}
_LOWEST = {"feed_wait_seconds": 0}


@checks.register(checks.Tags.compatibility)
def check_tower_settings(app_configs: object = None, **kwargs: object) -> list[checks.CheckMessage]:
    """Each of Control Tower's settings is a whole number of at least 1, or 0 where it
    may be (and within what the events or the API allow, where they bound it)."""
    problems: list[checks.CheckMessage] = []
    for field in _COUNTS:
        name = field.name.upper()
        value = getattr(settings, name, None)
        highest, lowest = _HIGHEST.get(field.name), _LOWEST.get(field.name, 1)
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or value < lowest
            or (highest is not None and value > highest)
        ):
            within = f" and at most {highest}" if highest is not None else ""
            problems.append(
                checks.Error(
                    f"{name} must be a whole number of at least {lowest}{within}, not {value!r}.",
                    hint=f"Set {name} in the environment, or leave it out for its default.",
                    id="tower.E001",
                )
            )
    return problems


@checks.register(checks.Tags.compatibility)
def check_webhook_networks(
    app_configs: object = None, **kwargs: object
) -> list[checks.CheckMessage]:
    """Each of WEBHOOK_ALLOWED_NETWORKS is a network in CIDR form (10.1.0.0/16, fd00::/8)."""
    problems: list[checks.CheckMessage] = []
    for cidr in current().webhook_allowed_networks:
        try:
            ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            problems.append(
                checks.Error(
                    f"WEBHOOK_ALLOWED_NETWORKS holds {cidr!r}, which is not a network.",
                    hint="Give CIDRs separated by commas, e.g. 10.1.0.0/16,fd00::/8.",
                    id="tower.E002",
                )
            )
    return problems


def prices() -> spend.PriceTable:
    """The price table in force: `PRICES_FILE`'s, else the one the project ships
    (`domain.price_list`). A file that cannot be read, or is not a price table, is
    `ImproperlyConfigured` naming it and what is wrong (raised when the app starts)."""
    return _price_table(current().prices_file)


@functools.lru_cache(maxsize=4)
def _price_table(path: str) -> spend.PriceTable:
    if not path:
        return spend.price_table(price_list.PRICES)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as problem:
        raise ImproperlyConfigured(
            f"PRICES_FILE {path} cannot be read as JSON: {problem}"
        ) from None
    try:
        return spend.price_table(data)
    except spend.PriceTableError as problem:
        raise ImproperlyConfigured(f"PRICES_FILE {path} is not a price table: {problem}") from None
