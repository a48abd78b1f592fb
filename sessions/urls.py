from django.urls import path
from django.views.generic import TemplateView

from . import api, views

SESSION = "<str:session_id>"

urlpatterns = [
    path("", views.board, name="board"),
    path("sessions/start", views.start, name="start"),
    path(f"sessions/{SESSION}/", views.session_page, name="session"),
    path(f"sessions/{SESSION}/<slug:slug>", views.act, name="act"),
    path("api/sessions", api.sessions, name="api-sessions"),
    path(f"api/sessions/{SESSION}", api.session_detail, name="api-session"),
    path(f"api/sessions/{SESSION}/events", api.session_events, name="api-events"),
    path(f"api/sessions/{SESSION}/events.jsonl", api.session_log, name="api-log"),
    path("api/openapi.json", api.openapi_schema, name="api-schema"),
    path("api/", TemplateView.as_view(template_name="api_docs.html"), name="api-docs"),
]
