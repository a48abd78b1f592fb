"""Control Tower's own settings, read in one place, and checked when Django starts.

`controltower/settings.py` reads them from the environment; every layer asks `current()`
for them (at call time, so a test's override holds). `manage.py check` refuses values
no board could work with, naming the setting.
"""

from dataclasses import dataclass, fields

from django.conf import settings
from django.core import checks


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


def current() -> TowerSettings:
    """The settings in force now."""
    return TowerSettings(
        **{f.name: getattr(settings, f.name.upper()) for f in fields(TowerSettings)}
    )


@checks.register(checks.Tags.compatibility)
def check_tower_settings(app_configs: object = None, **kwargs: object) -> list[checks.CheckMessage]:
    """Each of Control Tower's settings is a whole number of at least 1."""
    problems = []
    for field in fields(TowerSettings):
        name = field.name.upper()
        value = getattr(settings, name, None)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            problems.append(
                checks.Error(
                    f"{name} must be a whole number of at least 1, not {value!r}.",
                    hint=f"Set {name} in the environment, or leave it out for its default.",
                    id="tower.E001",
                )
            )
    return problems
