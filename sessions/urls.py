from django.urls import path

from sessions.api import mcp as mcp_tools
from sessions.api import routes as api
from sessions.web import views

SESSION = "<str:session_id>"
PLAN = "<str:plan_id>"

urlpatterns = [
    # The agents' surfaces first: they take most requests, and each pattern tried costs.
    path("api/", api.urls()),
    path(mcp_tools.PATH.lstrip("/"), mcp_tools.endpoint, name="mcp"),
    path("", views.board, name="board"),
    path("sessions/start", views.start, name="start"),
    path(f"sessions/{SESSION}/", views.session_page, name="session"),
    path(f"sessions/{SESSION}/<slug:slug>", views.act, name="act"),
    path("plans/", views.plan_list, name="plans"),
    path("plans/new", views.plan_create, name="plan_create"),
    path(f"plans/{PLAN}/", views.plan_page, name="plan"),
    path(f"plans/{PLAN}/amend", views.plan_amend, name="plan_amend"),
    path(f"plans/{PLAN}/start/<str:node>", views.plan_start, name="plan_start"),
    path(f"plans/{PLAN}/release/<str:node>", views.plan_release, name="plan_release"),
    path("metrics/", views.metrics_page, name="metrics"),
    path("notifications/", views.notifications, name="notifications"),
    path("tokens/", views.token_list, name="tokens"),
    path("tokens/<int:token_id>/revoke", views.token_revoke, name="token_revoke"),
    path("webhooks/", views.webhook_list, name="webhooks"),
    path("webhooks/<int:subscription_id>/ping", views.webhook_ping, name="webhook_ping"),
    path("webhooks/<int:subscription_id>/remove", views.webhook_remove, name="webhook_remove"),
]
