"""The board, session page and forms over Django's test client (no JavaScript)."""

import json
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from sessions.domain.vocabulary import BLOCK, CLOSE, START
from sessions.models import Event
from sessions.rules.append import append_event
from sessions.web.pages import page_version

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def bob_client(bob):
    client = Client()
    client.force_login(bob)
    return client


def act(client, slug, session_id="s1", **data):
    return client.post(reverse("act", args=[session_id, slug]), data)


def act_on_card(client, slug, **data):
    """An action posted by htmx from a board card."""
    return client.post(reverse("act", args=["s1", slug]), {"view": "card", **data}, **HTMX)


def count():
    return Event.objects.count()


@pytest.mark.parametrize("url", ["/", "/sessions/s1/"])
def test_pages_need_a_signed_in_user(client, started, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def test_the_board_shows_every_column_with_counts(alice_client, started, alice):
    append_event("s2", START, {"title": "Other"}, user=alice)
    append_event("s2", BLOCK, {"reason": "waiting on infra"}, user=alice)
    page = alice_client.get("/").content.decode()
    for label in ("Active", "Blocked", "In review", "Closed"):
        assert f'>{label} <span class="count">' in page
    assert 'id="col-blocked">Blocked <span class="count">1</span>' in page
    assert "waiting on infra" in page


def test_the_mine_filter_shows_only_the_viewers_sessions(alice_client, started, bob):
    append_event("bobs", START, {"title": "Bob's work"}, user=bob)
    page = alice_client.get("/", {"mine": "1"}).content.decode()
    assert "Ship it" in page and "Bob&#x27;s work" not in page


def test_the_owner_filter_narrows_to_one_owner(alice_client, started, bob):
    append_event("bobs", START, {"title": "Bob's work"}, user=bob)
    page = alice_client.get("/", {"owner": "bob"}).content.decode()
    assert "Ship it" not in page and "Bob&#x27;s work" in page


def test_the_search_matches_titles_and_ids(alice_client, started, alice):
    append_event("deploy-42", START, {"title": "Roll out"}, user=alice)
    assert "Roll out" not in alice_client.get("/", {"q": "ship"}).content.decode()
    assert "Ship it" not in alice_client.get("/", {"q": "deploy-4"}).content.decode()


@pytest.fixture
def one_minute(monkeypatch):
    """The clock held still: a page's version moves with the minute too, which may turn
    between taking the version and polling with it."""
    moment = timezone.now()
    monkeypatch.setattr(timezone, "now", lambda: moment)


def test_an_unchanged_poll_is_answered_204_after_one_query(
    alice_client, started, django_assert_num_queries, one_minute
):
    version = page_version()
    alice_client.get("/")  # the session and user are loaded once per request, then cached
    with django_assert_num_queries(3):  # session row, user row, and the version
        response = alice_client.get("/", {"since": version}, **HTMX)
    assert response.status_code == 204
    assert response.content == b""


def test_a_poll_after_a_change_re_renders_the_columns(alice_client, started, alice):
    version = page_version()
    append_event("s1", BLOCK, {"reason": "new blocker"}, user=alice)
    response = alice_client.get("/", {"since": version}, **HTMX)
    assert response.status_code == 200
    assert "new blocker" in response.content.decode()
    assert "<html" not in response.content.decode()


def test_the_session_page_poll_is_204_when_unchanged(alice_client, started, one_minute):
    response = alice_client.get("/sessions/s1/", {"since": page_version()}, **HTMX)
    assert response.status_code == 204


def test_the_session_page_shows_the_timeline_and_log_link(alice_client, started, alice):
    append_event("s1", BLOCK, {"reason": "why not"}, user=alice)
    page = alice_client.get("/sessions/s1/").content.decode()
    assert page.index("session_start") < page.index("session_block")
    assert reverse("api:session_log", args=["s1"]) in page


def test_an_unknown_session_page_is_404(alice_client):
    assert alice_client.get("/sessions/nope/").status_code == 404


def test_a_page_not_found_is_the_tower_s_own_page_saying_what_is_missing(alice_client):
    page = alice_client.get("/plans/nope/")
    assert page.status_code == 404
    html = page.content.decode()
    assert '<main id="main"' in html and "<h1>Not found</h1>" in html
    assert "There is no plan &#x27;nope&#x27;." in html


def test_starting_a_session_without_javascript_redirects_to_the_board(alice_client):
    response = alice_client.post(reverse("start"), {"title": "New work", "note": ""})
    assert response.status_code == 302
    event = Event.objects.get()
    assert (event.title, event.note, event.actor) == ("New work", None, "alice")


def test_starting_without_a_title_re_shows_the_form_with_the_error(alice_client):
    response = alice_client.post(reverse("start"), {"title": ""})
    assert response.status_code == 400
    assert "This field is required." in response.content.decode()
    assert count() == 0


def test_blocking_without_javascript_appends_and_redirects(alice_client, started):
    response = act(alice_client, "block", reason="waiting", next="/?mine=1")
    assert response.status_code == 302
    assert response.url == "/?mine=1"
    assert Event.objects.get(seq=2).reason == "waiting"


def test_the_redirect_never_leaves_the_site(alice_client, started):
    response = act(alice_client, "close", next="https://evil.example/")
    assert response.url == reverse("session", args=["s1"])


def test_a_blank_reason_is_refused_with_the_form_re_shown(alice_client, started):
    response = act(alice_client, "block", reason="  ")
    assert response.status_code == 400
    assert "required" in response.content.decode()
    assert count() == 1


def test_an_htmx_action_answers_with_the_fresh_card(alice_client, started, alice):
    append_event("s1", BLOCK, {"reason": "on hold"}, user=alice)
    response = act_on_card(alice_client, "unblock", note="")
    assert response.status_code == 200
    body = response.content.decode()
    assert body.lstrip().startswith('<article class="card status-active"')
    assert json.loads(response["HX-Trigger"]) == {"sessions-changed": {}}


def test_an_htmx_validation_error_re_shows_the_card_form_with_the_message(alice_client, started):
    response = act_on_card(alice_client, "block", reason="")
    assert response.status_code == 400
    assert "This field is required." in response.content.decode()
    assert count() == 1


def test_a_stale_form_is_a_conflict_showing_the_current_state(alice_client, started, alice):
    append_event("s1", BLOCK, {"reason": "first"}, user=alice)
    response = act(alice_client, "review", expected_seq="1")
    assert response.status_code == 409
    assert "someone else acted first" in response.content.decode()
    assert count() == 2


def test_a_transition_the_table_refuses_is_a_conflict(alice_client, started, alice):
    append_event("s1", CLOSE, {}, user=alice)
    assert act(alice_client, "block", reason="late").status_code == 409
    assert count() == 2


def test_someone_else_gets_403_and_appends_nothing(bob_client, started):
    assert act(bob_client, "block", reason="forged").status_code == 403
    assert count() == 1


def test_someone_else_sees_no_action_forms(bob_client, started):
    page = bob_client.get("/").content.decode()
    assert "Ship it" in page and reverse("act", args=["s1", "block"]) not in page


def test_the_owner_sees_only_the_actions_the_table_allows(alice_client, started, alice):
    append_event("s1", BLOCK, {"reason": "r"}, user=alice)
    page = alice_client.get("/sessions/s1/").content.decode()
    assert reverse("act", args=["s1", "unblock"]) in page
    assert reverse("act", args=["s1", "review"]) not in page


def test_a_lead_may_act_on_any_session(started, lead):
    client = Client()
    client.force_login(lead)
    assert act(client, "close", note="done by lead").status_code == 302
    assert Event.objects.get(seq=2).actor == "lead"


@pytest.mark.parametrize("address", ["/sessions/nope/block", "/sessions/s1/explode"])
def test_an_unknown_session_or_action_is_404(alice_client, started, address):
    assert alice_client.post(address, {"reason": "r"}).status_code == 404
    assert count() == 1


def test_posts_without_a_csrf_token_are_refused(started, alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert act(client, "block", reason="no token").status_code == 403
    assert client.post(reverse("start"), {"title": "t"}).status_code == 403
    assert count() == 1


def test_every_form_carries_a_csrf_token(alice_client, started):
    page = alice_client.get("/").content.decode()
    get_forms = page.count('method="get"')  # the filters and the as-of control
    assert get_forms == 2
    assert page.count("<form") == page.count("csrfmiddlewaretoken") + get_forms


def test_notes_are_escaped(alice_client, started, alice):
    append_event("s1", BLOCK, {"reason": "<script>alert(1)</script>"}, user=alice)
    for url in ("/", "/sessions/s1/"):
        page = alice_client.get(url).content.decode()
        assert "<script>alert(1)</script>" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def three_sessions(user):
    """Sessions s0, s1 and s2, titled "Session number n", the newest last."""
    for n in range(3):
        append_event(f"s{n}", START, {"title": f"Session number {n}"}, user=user)


def test_a_column_shows_its_newest_cards_up_to_the_limit_with_the_full_count(
    alice_client, alice, settings
):
    settings.BOARD_COLUMN_LIMIT = 2
    three_sessions(alice)
    page = alice_client.get("/").content.decode()
    assert 'id="col-active">Active <span class="count">3</span>' in page
    assert "Session number 2" in page and "Session number 0" not in page
    assert "Showing 1–2 of 3, newest first." in page


def test_a_column_pages_through_its_cards_a_limit_at_a_time(alice_client, alice, settings):
    settings.BOARD_COLUMN_LIMIT = 1
    three_sessions(alice)
    page = alice_client.get("/", {"active_page": "2"}).content.decode()
    assert "Session number 1" in page
    assert "Session number 2" not in page and "Session number 0" not in page
    assert "Showing 2–2 of 3, newest first." in page
    assert 'href="/?active_page=3" rel="next">Older' in page
    assert 'href="/?" rel="prev">Newer' in page


def test_a_column_page_past_the_end_shows_the_last_page(alice_client, alice, settings):
    settings.BOARD_COLUMN_LIMIT = 2
    three_sessions(alice)
    page = alice_client.get("/", {"active_page": "99"}).content.decode()
    assert "Session number 0" in page and "Session number 2" not in page


def test_sessions_closed_long_ago_leave_the_board(alice_client, started, alice, settings):
    settings.RECENTLY_CLOSED_HOURS = 1
    two_hours_ago = timezone.now() - timedelta(hours=2)
    append_event("old", START, {"title": "Old work"}, user=alice, now=two_hours_ago)
    append_event("old", CLOSE, {}, user=alice, now=two_hours_ago)
    append_event("new", START, {"title": "New work"}, user=alice)
    append_event("new", CLOSE, {}, user=alice)
    page = alice_client.get("/").content.decode()
    assert "New work" in page and "Old work" not in page


def test_an_htmx_conflict_answers_the_card_and_a_notice_that_outlives_refreshes(
    alice_client, started, alice
):
    append_event("s1", BLOCK, {"reason": "first"}, user=alice)
    response = act_on_card(alice_client, "review", expected_seq="1")
    assert response.status_code == 409
    body = response.content.decode()
    assert body.lstrip().startswith('<article class="card status-blocked"')
    assert 'id="notice"' in body and 'hx-swap-oob="true"' in body
    assert "someone else acted first" in body
    assert count() == 2


def bare_unblock(alice, at):
    append_event("s1", BLOCK, {"reason": "needs the CI secrets"}, user=alice, now=at)
    append_event("s1", "session_unblock", {}, user=alice, now=at + timedelta(minutes=5))


def test_a_next_action_kept_by_a_bare_unblock_says_which_block_it_came_from(alice_client, alice):
    # Yesterday at 14:02: in the past whatever the hour the test runs at.
    at = (timezone.now() - timedelta(days=1)).replace(hour=14, minute=2, second=0, microsecond=0)
    append_event("s1", START, {"title": "Ship it"}, user=alice, now=at - timedelta(hours=1))
    bare_unblock(alice, at)
    for page in ("/", "/sessions/s1/"):
        content = alice_client.get(page).content.decode()
        assert "from the block at <time" in content
        assert ":02</time>" in content
        assert "needs the CI secrets" in content


def test_a_next_action_of_its_own_names_no_block(alice_client, started, alice):
    append_event("s1", BLOCK, {"reason": "keys"}, user=alice)
    append_event("s1", "session_unblock", {"note": "use staging"}, user=alice)
    assert "from the block at" not in alice_client.get("/").content.decode()


def test_the_attention_strip_says_where_a_stale_sessions_next_action_came_from(alice_client, alice):
    then = timezone.now() - timedelta(hours=3)
    append_event("s1", START, {"title": "Quiet"}, user=alice, now=then - timedelta(hours=1))
    bare_unblock(alice, then)
    strip = alice_client.get("/").content.decode().split('class="attention"')[1]
    assert "next, from the block at" in strip.split("</section>")[0]


def test_as_of_a_past_moment_a_card_counts_its_age_from_that_moment(alice_client, alice):
    then = timezone.now() - timedelta(days=3)
    append_event("s1", START, {"title": "Long ago"}, user=alice, now=then)
    at = (then + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M")
    content = alice_client.get(f"/?at={at}").content.decode()
    shown = content.split('title="Last activity')[1].split("</time>")[0]
    assert "hour" in shown and "day" not in shown  # from the moment, not from the clock
