"""/api/reservations: the paths running nodes hold in a repository (docs/rules.md, "Space")."""

from django.http import HttpRequest, JsonResponse
from ninja import Query, Router

from sessions.api import answer_fields
from sessions.api.common import READ_ERRORS
from sessions.api.request_fields import ReservationQuery
from sessions.readmodels import reservations as reservation_model

router = Router(tags=["space"])


@router.get(
    "/reservations",
    response={200: answer_fields.Reservations, **READ_ERRORS},
    summary="What the running nodes of the plans on a repository hold: their path patterns",
    description="A node holds its `paths` while its session runs (not once it lapsed or "
    "closed). With `path`, only the reservations whose patterns cover that path.",
)
def reservations(request: HttpRequest, query: Query[ReservationQuery]):
    found = reservation_model.reservations(query.repo, query.path)
    return JsonResponse({"items": [answer_fields.reservation_json(item) for item in found]})
