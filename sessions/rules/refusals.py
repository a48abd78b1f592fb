"""Refusals: domain errors with a `code` for programs and a `detail` for people. Each
surface (API, forms, commands, MCP) says them its own way, with the status `status_of`
picks for the refusal's class."""


class Refused(Exception):
    """Base of every refusal: `code` names it for programs, `detail` says it to people."""

    code = "invalid"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def status_of(refusal: Refused, statuses: dict[type, int]) -> int:
    """The status a surface gives a refusal: that of its nearest class in `statuses`."""
    return next((statuses[cls] for cls in type(refusal).__mro__ if cls in statuses), 400)


class InvalidEvent(Refused):
    """The input breaks the vocabulary. `errors` maps each field to what is wrong with it."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = errors
        detail = "; ".join(f"{name} {problem}" for name, problem in errors.items())
        super().__init__(f"Invalid event: {detail}.")


class Forbidden(Refused):
    code = "forbidden"


class UnknownSession(Refused):
    code = "not_found"

    def __init__(self, session_id: str) -> None:
        super().__init__(f"There is no session {session_id!r}.")


class UnknownPlan(UnknownSession):
    def __init__(self, plan_id: str) -> None:
        Refused.__init__(self, f"There is no plan {plan_id!r}.")


class Conflict(Refused):
    """Refused because of the stream's current state, which `session_id` names."""

    def __init__(self, code: str, detail: str, session_id: str) -> None:
        super().__init__(detail)
        self.code = code
        self.session_id = session_id


class StreamMismatch(Refused):
    code = "exists_differently"
