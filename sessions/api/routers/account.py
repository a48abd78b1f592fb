"""/api/me: who the token acts as."""

from django.http import HttpRequest, JsonResponse
from ninja import Router

from sessions.api import answers
from sessions.api.common import (
    READ_ERRORS,
)

router = Router(tags=["account"])


@router.get("/me", response={200: answers.Me, **READ_ERRORS}, summary="Who the token acts as")
def me(request: HttpRequest):
    return JsonResponse({"username": request.auth.get_username()})
