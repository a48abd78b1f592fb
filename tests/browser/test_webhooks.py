"""Webhooks in a real browser: add one with filters, ping a real receiver and see the
answer in the delivery log, be told what is wrong with a bad URL, remove one."""

import pytest
from playwright.sync_api import expect

from sessions.models import Subscription
from tests.support.receiver import Receiver

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def receiver():
    endpoint = Receiver()
    yield endpoint
    endpoint.close()


def test_a_person_adds_a_webhook_pings_it_and_removes_it(page_as, alice, receiver, deliverer):
    deliverer()  # the worker sends the ping; the page shows its answer when it comes
    page = page_as(alice, "/webhooks/")
    expect(page.locator("p.empty")).to_have_text("No webhooks yet.")
    page.get_by_label("URL").fill(receiver.url)
    page.get_by_label("Only events of the type").select_option("session_block")
    page.get_by_role("button", name="Add the webhook").click()
    hook = page.locator(".webhook")
    expect(hook).to_contain_text(receiver.url)
    expect(hook).to_contain_text("only session_block")
    hook.get_by_role("button", name="Send a ping").click()
    expect(hook.locator(".delivery.delivered")).to_contain_text("(ping)")
    expect(hook.locator(".delivery .status")).to_have_text("204")
    secret = Subscription.objects.get().secret
    assert receiver.received[0].signed_by(secret)
    hook.get_by_role("button", name=f"Remove the webhook to {receiver.url}").click()
    expect(page.locator(".webhook")).to_have_count(0)


def test_a_bad_url_is_refused_on_the_page(page_as, alice):
    page = page_as(alice, "/webhooks/")
    page.locator("#id_url").evaluate("input => input.type = 'text'")
    page.get_by_label("URL").fill("ftp://files.example/x")
    page.get_by_role("button", name="Add the webhook").click()
    expect(page.locator(".webhook-form .error")).to_have_text("Enter a valid URL.")
    expect(page.get_by_label("URL")).to_have_value("ftp://files.example/x")


def test_a_loopback_receiver_is_refused_with_how_to_allow_it(page_as, alice, settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = []  # as under `make run`
    page = page_as(alice, "/webhooks/")
    page.get_by_label("URL").fill("http://127.0.0.1:9000/hook")
    page.get_by_role("button", name="Add the webhook").click()
    refusal = page.locator(".webhook-form .error")
    expect(refusal).to_contain_text("127.0.0.1 is loopback")
    expect(refusal).to_contain_text("WEBHOOK_ALLOWED_NETWORKS=127.0.0.1/32 make run")
