import pytest
from tests.support.logs import import_demo_moved_to_now

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_explore(page_as, alice):
    import_demo_moved_to_now()
    page = page_as(alice, "/plans/payments-v2/")
    page.locator(".legend").first.screenshot(path="/tmp/explore/legend.png")
    page = page_as(alice, "/plans/payments-v2/", width=390)
    page.screenshot(path="/tmp/explore/plan390.png")
    page = page_as(alice, "/", width=390)
    page.screenshot(path="/tmp/explore/board390.png")
