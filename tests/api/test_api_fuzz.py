"""Hypothesis throws arbitrary requests at the API over real HTTP: never a 5xx."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions.domain.vocabulary import EVENT_TYPES, START
from sessions.rules.append import append_event

pytestmark = pytest.mark.django_db(transaction=True)

FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=50),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=10,
)
event_bodies = (
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(EVENT_TYPES) | st.text(max_size=20),
            "reason": st.text(max_size=60) | json_values,
            "note": st.text(max_size=60) | json_values,
            "title": st.text(max_size=60),
            "expected_seq": st.integers(-5, 50) | json_values,
            "id": st.text(max_size=70),
        },
    )
    | json_values
)
paths = st.sampled_from(["/api/sessions", "/api/sessions/fuzz/events"]) | st.text(
    st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="#?%"), max_size=30
).map(lambda tail: "/api/sessions/" + tail)


@pytest.fixture
def fuzz_target(api, alice, token_for):
    append_event("fuzz", START, {"title": "fuzzed"}, user=alice)
    return token_for(alice)


@FUZZ
@given(
    body=event_bodies,
    path=paths,
    method=st.sampled_from(["GET", "POST", "PUT"]),
    key=st.none() | st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=300),
)
def test_no_request_makes_the_api_answer_5xx(api, fuzz_target, body, path, method, key):
    headers = {"Idempotency-Key": key} if key is not None else {}
    raw = json.dumps(body).encode()
    response = api(
        method,
        path,
        raw,
        token=fuzz_target,
        headers={"Content-Type": "application/json", **headers},
    )
    assert response.status < 500, (response.status, response.body[:300])
    if response.headers.get("Content-Type") == "application/json" and response.status >= 400:
        assert set(response.json()) >= {"error", "detail"}


@FUZZ
@given(
    raw=st.binary(max_size=200),
    content_type=st.sampled_from(["application/json", "text/plain", ""]),
)
def test_no_body_bytes_make_the_api_answer_5xx(api, fuzz_target, raw, content_type):
    headers = {"Content-Type": content_type} if content_type else {}
    response = api("POST", "/api/sessions/fuzz/events", raw, token=fuzz_target, headers=headers)
    assert response.status < 500, (response.status, response.body[:300])
