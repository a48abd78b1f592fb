"""Where a webhook may point (issue 26): the address rules over every form a host can
take, refused when a subscription is saved and again on the address each delivery and
ping connects to (DNS rebinding), with WEBHOOK_ALLOWED_NETWORKS letting an operator in."""

import ipaddress
import socket

import pytest

from sessions.models import Subscription
from sessions.rules import addresses, subscriptions
from sessions.webhooks import transport
from tests.support.receiver import Receiver

pytestmark = pytest.mark.django_db


@pytest.fixture
def nothing_allowed(settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = []


@pytest.mark.parametrize(
    "address, kind",
    [
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("::1", "loopback"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("10.0.0.8", "private"),
        ("172.16.4.1", "private"),
        ("192.168.1.1", "private"),
        ("fd12:3456::1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("100.64.0.1", "carrier-grade NAT"),
        ("224.0.0.251", "multicast"),
        ("ff02::1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped IPv6 reaches the IPv4 address
        ("::ffff:169.254.169.254", "link-local"),
        ("192.0.2.10", "private"),  # documentation: Python counts it private
        # Issue 52: IPv6 forms that carry an internal IPv4 address to it.
        ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
        ("2002:a9fe:a9fe::", "link-local"),  # 6to4 of 169.254.169.254
        ("64:ff9b::a9fe:a9fe", "link-local"),  # NAT64 of 169.254.169.254
        ("64:ff9b::7f00:1", "loopback"),  # NAT64 of 127.0.0.1
    ],
)
def test_an_internal_address_is_refused_saying_why(address, kind):
    why = addresses.refusal(ipaddress.ip_address(address))
    assert why is not None and kind in why


def test_an_address_that_carries_another_says_which():
    why = addresses.refusal(ipaddress.ip_address("2002:7f00:1::"))
    assert why == "2002:7f00:1:: is loopback (it carries 127.0.0.1)"


@pytest.mark.parametrize(
    "address",
    ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "2002:5db8:d70e::"],
)
def test_a_public_address_may_be_reached(address):
    assert addresses.refusal(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    "host, kind",
    [
        ("2130706433", "loopback"),  # decimal 127.0.0.1
        ("0177.0.0.1", "loopback"),  # octal
        ("0x7f.0.0.1", "loopback"),  # hexadecimal
        ("127.1", "loopback"),  # short form
        ("[::ffff:7f00:1]", "loopback"),
        ("localhost", "loopback"),  # a name
        ("[::]", "unspecified"),
        ("[2002:7f00:1::]", "loopback"),
        ("[2002:a9fe:a9fe::]", "link-local"),
    ],
)
def test_every_host_form_is_read_as_the_address_it_stands_for(host, kind, nothing_allowed):
    why = addresses.url_refusal(f"http://{host}:8080/hook")
    assert why is not None and kind in why
    assert "WEBHOOK_ALLOWED_NETWORKS" in why


def test_a_name_that_does_not_resolve_yet_is_saved_and_judged_at_delivery(alice, nothing_allowed):
    hook = subscriptions.subscribe(alice, "http://no-such-host.invalid/hook", "event")
    answer = transport.send(hook, b"{}", "d-1", "ping", timeout=2)
    assert answer.status is None and "does not resolve" in answer.error


def test_an_allowed_network_lets_an_internal_receiver_in(settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["10.1.0.0/16"]
    assert addresses.refusal(ipaddress.ip_address("10.1.2.3"), addresses.allowed_networks()) is None
    assert addresses.refusal(ipaddress.ip_address("10.2.0.1"), addresses.allowed_networks())


def test_saving_a_webhook_at_an_internal_address_is_refused_and_saves_nothing(
    alice, nothing_allowed
):
    with pytest.raises(subscriptions.UnsafeWebhookUrl) as refused:
        subscriptions.subscribe(alice, "http://169.254.169.254/latest/meta-data", "event")
    assert "169.254.169.254 is link-local" in refused.value.detail
    assert not Subscription.objects.exists()


def test_the_webhooks_page_re_shows_the_form_saying_which_address_and_why(
    alice_client, nothing_allowed
):
    answer = alice_client.post("/webhooks/", {"url": "http://127.0.0.1:5432/", "payload": "event"})
    assert answer.status_code == 400
    assert "127.0.0.1 is loopback" in answer.content.decode()
    assert not Subscription.objects.exists()


def test_a_6to4_form_of_the_metadata_address_is_refused_at_delivery(alice, monkeypatch, settings):
    real = socket.getaddrinfo

    def rebinding(host, port, *args, **kwargs):
        if host == "hooks.example.com":
            return real("2002:a9fe:a9fe::", port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    settings.WEBHOOK_ALLOWED_NETWORKS = []
    hook = subscriptions.subscribe(alice, "http://hooks.example.com/hook", "event")
    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    answer = transport.send(hook, b"{}", "d-1", "ping", timeout=2)
    assert answer.status is None
    assert "refused to connect: 2002:a9fe:a9fe:: is link-local" in answer.error


def test_a_name_rebound_to_an_internal_address_after_saving_is_caught_at_delivery(
    alice, monkeypatch, settings
):
    """The name resolved to a public address when saved; at delivery it resolves to
    loopback: the request is refused on the address it would have connected to."""
    real = socket.getaddrinfo
    answers = iter(["93.184.215.14", "127.0.0.1"])

    def rebinding(host, port, *args, **kwargs):
        if host == "hooks.example.com":
            return real(next(answers), port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    hook = subscriptions.subscribe(alice, "http://hooks.example.com/hook", "event")
    answer = transport.send(hook, b"{}", "d-1", "ping", timeout=2)
    assert answer.status is None
    assert "refused to connect: 127.0.0.1 is loopback" in answer.error


@pytest.fixture
def receiver():
    endpoint = Receiver()
    yield endpoint
    endpoint.close()


def test_a_delivery_reaches_an_allowed_receiver(alice, receiver):
    hook = subscriptions.subscribe(alice, receiver.url, "event")
    assert transport.send(hook, b"{}", "d-1", "ping", timeout=5).delivered


def test_a_delivery_to_loopback_without_the_allowance_is_refused(alice, settings, receiver):
    hook = subscriptions.subscribe(alice, receiver.url, "event")
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    answer = transport.send(hook, b"{}", "d-1", "ping", timeout=5)
    assert answer.status is None and "loopback" in answer.error
    assert receiver.received == []
