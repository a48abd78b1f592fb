"""/api/feed: every event in global order after a cursor."""

from django.http import HttpRequest, JsonResponse
from ninja import Query, Router

from sessions.api import answers, requests
from sessions.api.common import (
    READ_ERRORS,
)
from sessions.readmodels import feed as feed_model
from sessions.readmodels import shapes

router = Router(tags=["feed"])


@router.get(
    "/feed",
    response={200: answers.FeedPage, **READ_ERRORS},
    summary="Every event in global order after a cursor: keep next_after and ask again",
)
def feed(request: HttpRequest, query: Query[requests.FeedQuery]):
    found, next_after = feed_model.feed_waiting(
        query.after,
        query.limit,
        query.wait,
        event_type=query.type,
        stream=query.stream,
        plan=query.plan,
    )
    items = [shapes.feed_item(position, event) for position, event in found]
    return JsonResponse({"items": items, "next_after": next_after})
