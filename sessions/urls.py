from django.urls import path

from sessions.api import mcp as mcp_tools
from sessions.api import routes as api
from sessions.integrations import github
from sessions.web import views

urlpatterns = [
    # The agents' surfaces first: they take most requests, and each pattern tried costs.
    path("api/", api.urls()),
    path(mcp_tools.PATH.lstrip("/"), mcp_tools.endpoint, name="mcp"),
    path("integrations/", github.integrations.urls),
    # The pages, each declared with its view (`sessions.web.pages`).
    *views.urlpatterns(),
]
