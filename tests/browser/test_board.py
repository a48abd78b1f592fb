"""The board and session page in a real browser: sign in, act, live refresh, permissions."""

import re

import pytest
from playwright.sync_api import expect

from sessions.domain.vocabulary import BLOCK, REVIEW, START
from sessions.models import Event
from sessions.rules.append import append_event
from tests.browser.conftest import ARTIFACTS, act_on_card, card, column, open_action
from tests.support.logs import import_demo_moved_to_now

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def alices_session(alice):
    append_event("s1", START, {"title": "Ship the export", "note": "write tests"}, user=alice)
    return "Ship the export"


def test_signing_in_with_the_form_shows_the_board(anonymous_page, live_server, alice):
    page = anonymous_page
    page.goto(live_server.url + "/")
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill("pw-alice")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name=re.compile("^Active"))).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(re.compile(r"/accounts/login/"))


def test_starting_a_session_puts_it_in_active(page_as, alice):
    page = page_as(alice)
    page.get_by_text("Start a session").click()
    page.get_by_label("Title").fill("Write the release notes")
    page.get_by_label("First next action").fill("collect merged PRs")
    page.get_by_role("button", name="Start session").click()
    new_card = card(column(page, "active"), "Write the release notes")
    expect(new_card).to_contain_text("collect merged PRs")
    expect(new_card).to_contain_text("alice")


def test_blocking_with_a_reason_moves_the_card_to_blocked(page_as, alice, alices_session):
    page = page_as(alice)
    act_on_card(page, alices_session, "Block", Reason="waiting for the staging DB")
    blocked = card(column(page, "blocked"), alices_session)
    expect(blocked).to_contain_text("waiting for the staging DB")
    expect(column(page, "active").locator(".card")).to_have_count(0)
    ARTIFACTS.mkdir(exist_ok=True)
    append_event("s2", START, {"title": "Triage flaky tests", "note": "rerun CI"}, user=alice)
    append_event("s3", START, {"title": "Review the API docs"}, user=alice)
    append_event("s3", REVIEW, {"note": "PR 51"}, user=alice)
    expect(column(page, "in_review").locator(".card")).to_have_count(1)
    page.screenshot(path=ARTIFACTS / "board.png", full_page=True)


def test_a_block_without_a_reason_is_refused_next_to_the_field(page_as, alice, alices_session):
    page = page_as(alice)
    act_on_card(page, alices_session, "Block", Reason="   ")
    expect(card(page, alices_session).locator(".error")).to_contain_text("required")
    assert Event.objects.count() == 1


def test_unblocking_without_a_note_keeps_the_reason_as_next_action(page_as, alice, alices_session):
    append_event("s1", BLOCK, {"reason": "needs the CI secrets"}, user=alice)
    page = page_as(alice)
    act_on_card(page, alices_session, "Unblock")
    active = card(column(page, "active"), alices_session)
    expect(active.locator(".next")).to_contain_text("needs the CI secrets")
    expect(active.locator(".next .label")).to_contain_text("Next, from the block at")
    expect(active.locator(".blockers")).to_have_count(0)


def test_sending_to_review_moves_the_card_to_in_review(page_as, alice, alices_session):
    page = page_as(alice)
    act_on_card(page, alices_session, "Send to review", Note="PR 42 is up")
    expect(card(column(page, "in_review"), alices_session)).to_contain_text("PR 42 is up")


def test_a_card_closed_stays_in_view_with_its_outcome(page_as, alice, alices_session):
    page = page_as(alice)
    act_on_card(page, alices_session, "Close", Note="merged")
    closed = column(page, "closed")
    expect(closed.locator(".count")).to_have_text("1")
    closed_card = card(closed, alices_session)
    expect(closed_card).to_be_visible()  # its folded column opened for it
    expect(closed_card).to_contain_text("merged")
    expect(closed_card.locator(".outcome")).to_have_text("done")
    assert page.evaluate("(c) => c.getBoundingClientRect().top >= 0", closed_card.element_handle())


def test_without_javascript_a_card_closed_is_shown_where_it_went(page_as, alice, alices_session):
    page = page_as(alice, javascript=False)
    act_on_card(page, alices_session, "Close", Note="merged")
    assert page.url.endswith(f"#card-{Event.objects.get(type='session_start').session}")
    expect(card(column(page, "closed"), alices_session)).to_be_visible()


def test_the_session_page_acts_and_shows_the_timeline(page_as, alice, alices_session):
    page = page_as(alice, "/sessions/s1/")
    page.get_by_label("Reason").fill("design review")
    page.get_by_role("button", name="Block the session", exact=True).click()
    expect(page.locator(".timeline tbody tr")).to_have_count(2)
    expect(page.locator(".timeline")).to_contain_text("design review")
    expect(page.locator(".session-head .badge")).to_have_text("Blocked")


def test_an_event_appended_elsewhere_appears_without_a_reload(page_as, alice, lead, alices_session):
    page = page_as(alice)
    expect(card(column(page, "active"), alices_session)).to_be_visible()
    append_event("s1", BLOCK, {"reason": "lead says wait"}, user=lead)
    expect(card(column(page, "blocked"), alices_session)).to_contain_text("lead says wait")


def test_a_conflict_shows_a_message_and_the_current_state(page_as, alice, lead, alices_session):
    page = page_as(alice)
    action = open_action(page, alices_session, "Send to review")
    append_event("s1", BLOCK, {"reason": "stop"}, user=lead)  # someone acts first
    action.get_by_role("button", name="Send it to review", exact=True).click()
    expect(page.locator("#notice")).to_contain_text("someone else acted first")
    expect(card(column(page, "blocked"), alices_session)).to_be_visible()
    assert Event.objects.filter(type=REVIEW).count() == 0


def test_someone_else_sees_no_action_buttons(page_as, bob, alices_session):
    page = page_as(bob)
    target = card(page, alices_session)
    expect(target).to_be_visible()
    expect(target.locator("form")).to_have_count(0)
    expect(target.get_by_role("button")).to_have_count(0)


def test_a_forged_post_from_someone_else_gets_403_and_appends_nothing(
    page_as, live_server, bob, alices_session
):
    page = page_as(bob)
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    response = page.request.post(
        live_server.url + "/sessions/s1/block",
        form={"csrfmiddlewaretoken": token, "reason": "forged", "view": "card"},
    )
    assert response.status == 403
    assert Event.objects.count() == 1


def test_a_note_holding_a_script_tag_shows_as_text(page_as, alice, alices_session):
    note = "<script>window.pwned = 1</script><b>bold?</b>"
    append_event("s1", BLOCK, {"reason": note}, user=alice)
    page = page_as(alice)
    expect(card(page, alices_session).locator(".blockers")).to_have_text(note)
    assert page.evaluate("window.pwned") is None
    page.goto(page.url + "sessions/s1/")
    expect(page.locator(".timeline")).to_contain_text(note)
    assert page.evaluate("window.pwned") is None


def test_the_closed_column_stays_unfolded_across_a_refresh(page_as, alice, lead, alices_session):
    append_event("done", START, {"title": "Finished work"}, user=alice)
    append_event("done", "session_close", {"note": "shipped"}, user=alice)
    page = page_as(alice)
    closed = column(page, "closed")
    closed.locator("summary").click()
    append_event("s1", BLOCK, {"reason": "refresh now"}, user=lead)
    expect(card(column(page, "blocked"), alices_session)).to_be_visible()
    expect(card(column(page, "closed"), "Finished work")).to_be_visible()


def test_escape_folds_an_open_action_and_gives_focus_back_to_it(page_as, alice, alices_session):
    page = page_as(alice)
    action = open_action(page, alices_session, "Block")
    action.get_by_label("Reason").fill("half-typed")
    page.keyboard.press("Escape")
    expect(action).not_to_have_attribute("open", "")
    expect(action.locator("summary")).to_be_focused()


def test_the_first_tab_offers_a_skip_to_the_content(page_as, alice, alices_session):
    page = page_as(alice)
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to the content")
    expect(skip).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("main")).to_be_focused()


def test_an_open_action_has_no_two_buttons_of_one_name(page_as, alice, alices_session):
    page = page_as(alice)
    action = open_action(page, alices_session, "Close")
    expect(action.get_by_role("button", name="Close the session")).to_have_count(1)
    expect(
        card(page, alices_session).get_by_role("button", name="Close", exact=True)
    ).to_have_count(0)


def test_a_blocked_cards_unblock_asks_for_the_answer(page_as, alice, alices_session):
    append_event("s1", BLOCK, {"reason": "which database?"}, user=alice)
    page = page_as(alice)
    action = open_action(page, alices_session, "Unblock")
    expect(action.get_by_label("Answer (the waiting agent receives it)")).to_be_visible()


def test_after_an_action_the_focus_stays_on_its_card(page_as, alice, alices_session):
    page = page_as(alice)
    act_on_card(page, alices_session, "Block", Reason="waiting for the staging DB")
    blocked = card(column(page, "blocked"), alices_session)
    expect(blocked).to_be_focused()


def test_a_conflict_shows_on_the_card_where_the_hand_is(page_as, alice, lead, alices_session):
    page = page_as(alice)
    action = open_action(page, alices_session, "Close")
    append_event("s1", BLOCK, {"reason": "someone else first"}, user=lead)
    action.locator("button[type=submit]").click()
    # The board's refresh that follows a conflict moves the card to Blocked: the message
    # goes with it (it once raced the refresh, and lost when the refresh came first).
    moved = card(column(page, "blocked"), alices_session)
    expect(moved).to_be_visible()
    expect(moved.locator(".message")).to_contain_text("someone else acted first")


def test_the_board_waits_while_someone_writes_in_a_form_and_refreshes_after(
    page_as, alice, alices_session
):
    page = page_as(alice)
    action = open_action(page, alices_session, "Block")
    action.get_by_label("Reason").fill("half a thought")
    append_event("meanwhile", START, {"title": "Arrived meanwhile"}, user=alice)
    page.wait_for_timeout(2500)  # two and a half polls (POLL_SECONDS is 1 here)
    expect(card(page, "Arrived meanwhile")).to_have_count(0)
    expect(action.get_by_label("Reason")).to_have_value("half a thought")
    page.keyboard.press("Escape")
    expect(card(page, "Arrived meanwhile")).to_have_count(1)


def test_under_make_runs_debug_a_refused_form_stays_on_the_card_and_the_page_stays(
    page_as, alice, alices_session, settings
):
    # `make run` serves with DEBUG on: the page must behave as in production, where a
    # refusal (a 400 carrying the form with its error) swaps into the card.
    settings.DEBUG = True
    page = page_as(alice)
    act_on_card(page, alices_session, "Block", Reason="   ")
    expect(card(page, alices_session).locator(".error")).to_contain_text("required")
    expect(page).to_have_title("Board · Control Tower")
    expect(page.get_by_role("heading", name=re.compile("^Active"))).to_be_visible()


def test_a_blocked_card_says_its_reason_once(page_as, alice, alices_session):
    append_event("s1", BLOCK, {"reason": "waiting for the staging DB"}, user=alice)
    page = page_as(alice)
    blocked = card(column(page, "blocked"), alices_session)
    expect(blocked.locator(".blockers")).to_contain_text("waiting for the staging DB")
    expect(blocked.get_by_text("waiting for the staging DB")).to_have_count(1)
    expect(blocked.locator(".next")).to_have_count(0)


def test_a_board_that_cannot_reach_the_tower_says_so_and_clears_when_it_can(
    page_as, alice, alices_session
):
    page = page_as(alice)
    notice = page.locator("#tower-reach")
    expect(notice).to_be_hidden()
    # The tower goes away: every refresh's connection is refused.
    page.route("**/?*since=*", lambda route: route.abort("connectionrefused"))
    expect(notice).to_have_text("Can't reach the tower, retrying…", timeout=2500)  # two polls
    expect(notice).to_have_attribute("role", "status")
    expect(page.locator("#board.out-of-touch")).to_have_count(1)
    expect(card(page, alices_session)).to_be_visible()  # the last good board stays
    page.unroute("**/?*since=*")
    expect(notice).to_be_hidden(timeout=2500)
    expect(page.locator(".out-of-touch")).to_have_count(0)


def test_a_tower_answering_503_is_said_to_be_out_of_reach_too(page_as, alice, alices_session):
    page = page_as(alice)
    page.route(
        "**/?*since=*",
        lambda route: route.fulfill(status=503, body="database away", content_type="text/plain"),
    )
    expect(page.locator("#tower-reach")).to_have_text("Can't reach the tower, retrying…")


def in_view(page, locator):
    box = locator.bounding_box()
    return (
        box is not None
        and box["y"] >= 0
        and box["y"] + box["height"] <= page.viewport_size["height"]
    )


@pytest.mark.parametrize("width", [390, 1280])
def test_after_an_action_the_card_stays_in_view_even_when_it_moves_column(
    page_as, make_user, width
):
    import_demo_moved_to_now(verbosity=0)
    page = page_as(make_user("lead", act_on_any=True), "/", width=width)
    blocked = page.locator(".column.status-blocked .card").first
    session = blocked.get_attribute("data-session")
    blocked.scroll_into_view_if_needed()
    blocked.locator("summary", has_text=re.compile("^Unblock$")).click()
    blocked.locator("details[open] button[type=submit]").click()
    moved = page.locator(f'.column.status-active .card[data-session="{session}"]')
    expect(moved).to_be_visible()
    page.wait_for_timeout(1500)  # the board's refresh after the action, and a poll
    assert in_view(page, moved), (page.evaluate("scrollY"), moved.bounding_box())
