"""The OpenAPI 3.1 description of the agent API, served at /api/openapi.json."""

from . import vocabulary

TIMESTAMP = {"type": "string", "format": "date-time", "example": "2026-11-29T09:00:00.000000Z"}
NULLABLE_TIMESTAMP = {**TIMESTAMP, "type": ["string", "null"]}
SESSION_ID = {
    "type": "string",
    "minLength": 1,
    "maxLength": vocabulary.SESSION_ID_MAX,
    "pattern": f"^{vocabulary.SESSION_ID_PATTERN.pattern}$",
}


def text(max_length):
    return {"type": "string", "minLength": 1, "maxLength": max_length}


def ref(name):
    return {"$ref": f"#/components/schemas/{name}"}


def json_content(schema):
    return {"application/json": {"schema": schema}}


def error(description):
    return {"description": description, "content": json_content(ref("Error"))}


ERRORS = {
    "400": error("Invalid input; `fields` names each offending field."),
    "401": error("No token, or an unknown or revoked one."),
    "403": error("Only the owner, or a holder of 'act on any session', may append."),
    "404": error("No such session."),
    "409": error("Transition not allowed now, or `expected_seq` stale; includes `session`."),
    "413": error("The body is too large."),
    "415": error("The body is not sent as application/json."),
}
SESSION_ID_PARAM = {"name": "session_id", "in": "path", "required": True, "schema": SESSION_ID}
STALE_AFTER_PARAM = {
    "name": "stale_after",
    "in": "query",
    "description": "Staleness threshold in minutes (default: the server's setting).",
    "schema": {"type": "integer", "minimum": 0, "maximum": 10**6},
}
IDEMPOTENCY_KEY_PARAM = {
    "name": "Idempotency-Key",
    "in": "header",
    "description": "A repeated key on the same session returns the first event, appending nothing.",
    "schema": {"type": "string", "minLength": 1, "maxLength": 255},
}


def pick(*codes):
    return {code: ERRORS[code] for code in codes}


def schema():
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Control Tower agent API",
            "version": "1",
            "description": "Append-only session streams. Authenticate with "
            "`Authorization: Bearer <token>` (tokens: `manage.py create_token`).",
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": {
                    "type": "object",
                    "required": ["error", "detail"],
                    "properties": {
                        "error": {"type": "string"},
                        "detail": {"type": "string"},
                        "fields": {"type": "object", "additionalProperties": {"type": "string"}},
                        "session": {"oneOf": [ref("Session"), {"type": "null"}]},
                    },
                },
                "Blocker": {
                    "type": "object",
                    "properties": {
                        "reason": {"type": "string"},
                        "timestamp": TIMESTAMP,
                        "actor": {"type": "string"},
                        "seq": {"type": "integer"},
                    },
                },
                "Session": {
                    "type": "object",
                    "properties": {
                        "id": SESSION_ID,
                        "title": {"type": ["string", "null"]},
                        "owner": {"type": ["string", "null"]},
                        "status": {"enum": [*vocabulary.STATUSES, None]},
                        "stale": {"type": "boolean"},
                        "blockers": {"type": "array", "items": ref("Blocker")},
                        "next_action": {"type": ["string", "null"]},
                        "opened_at": NULLABLE_TIMESTAMP,
                        "last_event_at": NULLABLE_TIMESTAMP,
                        "closed_at": NULLABLE_TIMESTAMP,
                        "seq": {"type": "integer"},
                    },
                },
                "Event": {
                    "type": "object",
                    "required": ["session", "seq", "type", "timestamp", "actor"],
                    "properties": {
                        "session": SESSION_ID,
                        "seq": {"type": "integer", "minimum": 1},
                        "type": {"enum": list(vocabulary.EVENT_TYPES)},
                        "timestamp": TIMESTAMP,
                        "actor": {"type": "string"},
                        **{name: text(limit) for name, limit in vocabulary.MAX_LENGTH.items()},
                    },
                },
                "StartSession": {
                    "type": "object",
                    "required": ["title"],
                    "additionalProperties": False,
                    "properties": {
                        "id": SESSION_ID,
                        "title": text(vocabulary.MAX_LENGTH["title"]),
                        "note": text(vocabulary.MAX_LENGTH["note"]),
                    },
                },
                "AppendEvent": {
                    "type": "object",
                    "required": ["type"],
                    "additionalProperties": False,
                    "properties": {
                        "type": {"enum": list(vocabulary.EVENT_TYPES)},
                        "reason": text(vocabulary.MAX_LENGTH["reason"]),
                        "note": text(vocabulary.MAX_LENGTH["note"]),
                        "title": text(vocabulary.MAX_LENGTH["title"]),
                        "expected_seq": {"type": "integer", "minimum": 0},
                    },
                },
                "Appended": {
                    "type": "object",
                    "properties": {"event": ref("Event"), "session": ref("Session")},
                },
            },
        },
        "security": [{"bearer": []}],
        "paths": {
            "/api/sessions": {
                "post": {
                    "summary": "Start a session",
                    "parameters": [IDEMPOTENCY_KEY_PARAM],
                    "requestBody": {"required": True, "content": json_content(ref("StartSession"))},
                    "responses": {
                        "201": {"description": "Started", "content": json_content(ref("Session"))},
                        "200": {"description": "Repeated Idempotency-Key"},
                        **pick("400", "401", "409", "413", "415"),
                    },
                },
                "get": {
                    "summary": "List sessions, newest activity first",
                    "parameters": [
                        {
                            "name": "status",
                            "in": "query",
                            "schema": {"enum": list(vocabulary.STATUSES)},
                        },
                        {"name": "owner", "in": "query", "schema": {"type": "string"}},
                        {"name": "stale", "in": "query", "schema": {"enum": ["true", "false"]}},
                        {
                            "name": "q",
                            "in": "query",
                            "description": "Text in title or id",
                            "schema": {"type": "string"},
                        },
                        {
                            "name": "page",
                            "in": "query",
                            "schema": {"type": "integer", "minimum": 1},
                        },
                        {
                            "name": "page_size",
                            "in": "query",
                            "schema": {"type": "integer", "minimum": 1, "maximum": 200},
                        },
                        STALE_AFTER_PARAM,
                    ],
                    "responses": {
                        "200": {
                            "description": "A page of session views",
                            "content": json_content(
                                {
                                    "type": "object",
                                    "properties": {
                                        "items": {"type": "array", "items": ref("Session")},
                                        "next": {"type": ["string", "null"]},
                                    },
                                }
                            ),
                        },
                        **pick("400", "401"),
                    },
                },
            },
            "/api/sessions/{session_id}": {
                "get": {
                    "summary": "A session's view",
                    "parameters": [SESSION_ID_PARAM, STALE_AFTER_PARAM],
                    "responses": {
                        "200": {"description": "The view", "content": json_content(ref("Session"))},
                        **pick("400", "401", "404"),
                    },
                }
            },
            "/api/sessions/{session_id}/events": {
                "post": {
                    "summary": "Append an event",
                    "parameters": [SESSION_ID_PARAM, IDEMPOTENCY_KEY_PARAM],
                    "requestBody": {"required": True, "content": json_content(ref("AppendEvent"))},
                    "responses": {
                        "201": {
                            "description": "Appended",
                            "content": json_content(ref("Appended")),
                        },
                        "200": {
                            "description": "Repeated Idempotency-Key: the first event",
                            "content": json_content(ref("Appended")),
                        },
                        **pick("400", "401", "403", "404", "409", "413", "415"),
                    },
                },
                "get": {
                    "summary": "A session's events, oldest first",
                    "parameters": [SESSION_ID_PARAM],
                    "responses": {
                        "200": {
                            "description": "The events",
                            "content": json_content(
                                {
                                    "type": "object",
                                    "properties": {
                                        "items": {"type": "array", "items": ref("Event")},
                                        "next": {"type": "null"},
                                    },
                                }
                            ),
                        },
                        **pick("401", "404"),
                    },
                },
            },
            "/api/sessions/{session_id}/events.jsonl": {
                "get": {
                    "summary": "The session's log in the JSONL form of DESIGN.md",
                    "parameters": [SESSION_ID_PARAM],
                    "responses": {
                        "200": {
                            "description": "One JSON object per line",
                            "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
                        },
                        **pick("401", "404"),
                    },
                }
            },
        },
    }
