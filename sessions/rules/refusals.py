"""Refusals: domain errors with a `code` for programs, a `detail` for people and the
`status` every surface answers them with (the API and the forms alike; MCP, which has no
statuses, says the code). Each kind says its own, once."""


class Refused(Exception):
    """Base of every refusal: `code` names it for programs, `detail` says it to people,
    `status` is the HTTP status it is answered with (invalid input, unless a kind says
    otherwise)."""

    code = "invalid"
    status = 400

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class InvalidEvent(Refused):
    """The input breaks the vocabulary. `errors` maps each field to what is wrong with it."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = errors
        detail = "; ".join(f"{name} {problem}" for name, problem in errors.items())
        super().__init__(f"Invalid event: {detail}.")


class Forbidden(Refused):
    code = "forbidden"
    status = 403


class UnknownSession(Refused):
    code = "not_found"
    status = 404

    def __init__(self, session_id: str) -> None:
        super().__init__(f"There is no session {session_id!r}.")


class UnknownPlan(UnknownSession):
    def __init__(self, plan_id: str) -> None:
        Refused.__init__(self, f"There is no plan {plan_id!r}.")


class Conflict(Refused):
    """Refused because of the stream's current state, which `session_id` names."""

    status = 409

    def __init__(self, code: str, detail: str, session_id: str) -> None:
        super().__init__(detail)
        self.code = code
        self.session_id = session_id


class StreamMismatch(Refused):
    code = "exists_differently"
