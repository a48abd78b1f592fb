from django.urls import path

from . import api, views

SESSION = "<str:session_id>"

urlpatterns = [
    path("", views.board, name="board"),
    path("sessions/start", views.start, name="start"),
    path(f"sessions/{SESSION}/", views.session_page, name="session"),
    path(f"sessions/{SESSION}/<slug:slug>", views.act, name="act"),
    path("api/", api.urls()),
]
