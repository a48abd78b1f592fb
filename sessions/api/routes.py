"""The agent API under /api/, on django-ninja: one router per resource (`routers`), on
the one `api` of `common`, each request run again after a lost database connection."""

from sessions.api.common import api, retried
from sessions.api.routers import account, feed, metrics, plans, sessions, space

api.add_router("/", sessions.router)
api.add_router("/", plans.router)
api.add_router("/", metrics.router)
api.add_router("/", feed.router)
api.add_router("/", space.router)
api.add_router("/", account.router)


def urls() -> tuple[list, str, str]:
    """The API's URL patterns, each view run by `retried`."""
    patterns, app_name, namespace = api.urls
    for pattern in patterns:
        pattern.callback = retried(pattern.callback)
    return patterns, app_name, namespace
