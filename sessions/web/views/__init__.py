"""The web surface's views, a module per page; importing them declares their URLs
(`pages.page`, `pages.action`), which `urlpatterns` lists for `sessions.urls`."""

from sessions.web.pages import urlpatterns
from sessions.web.views import board, metrics, plans, session, tokens, webhooks

# The page modules, imported for the URLs they declare.
PAGES = (board, session, plans, metrics, tokens, webhooks)

__all__ = ["PAGES", "urlpatterns"]
