"""Where a webhook may point (docs/rules.md, "Following along"): never
inside the network the server sits in, unless an operator allows it.

The rules are written once, here, and used twice: when a subscription is saved (every
address its host resolves to), and at every delivery and ping, on the address the
request actually connects to (`guarded_connection`), so a name that resolves elsewhere
later (DNS rebinding) is caught where it matters. Host forms such as `2130706433`,
`0177.0.0.1` or `[::ffff:127.0.0.1]` are read by the system's resolver into the
addresses they stand for, and judged as such."""

import functools
import ipaddress
import socket
import urllib.parse

from sessions import config

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

CGNAT = ipaddress.ip_network("100.64.0.0/10")

# Why an address is refused, most telling first: each with the test that finds it.
_KINDS = (
    ("unspecified", lambda a: a.is_unspecified),
    ("loopback", lambda a: a.is_loopback),
    ("link-local (cloud metadata lives there)", lambda a: a.is_link_local),
    ("carrier-grade NAT", lambda a: a in CGNAT),
    ("multicast", lambda a: a.is_multicast),
    ("reserved", lambda a: a.is_reserved),
    ("private", lambda a: a.is_private),
    ("not a public address", lambda a: not a.is_global),
)


class BlockedAddress(OSError):
    """A webhook's host is, or resolves to, an address it may not point at."""


def allowed_networks() -> tuple[Network, ...]:
    """`WEBHOOK_ALLOWED_NETWORKS`: internal networks an operator lets webhooks into."""
    return _parsed(config.current().webhook_allowed_networks)


@functools.cache
def _parsed(cidrs: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(cidr, strict=False) for cidr in cidrs)


# NAT64's well-known prefix (RFC 6052): 64:ff9b::a.b.c.d is translated to a.b.c.d.
NAT64 = ipaddress.ip_network("64:ff9b::/96")


def carried(address: Address) -> Address:
    """The IPv4 address an IPv6 one stands for on the way there, else itself: mapped
    (::ffff:10.0.0.1), 6to4 (2002:7f00:1:: reaches 127.0.0.1 through a relay), NAT64
    (64:ff9b::a9fe:a9fe) and Teredo's client."""
    if not isinstance(address, ipaddress.IPv6Address):
        return address
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in NAT64:
        return ipaddress.IPv4Address(address.packed[-4:])
    if address.teredo is not None:
        return address.teredo[1]
    return address


def refusal(address: Address, allowed: tuple[Network, ...] = ()) -> str | None:
    """Why a webhook may not reach `address` (e.g. "127.0.0.1 is loopback"), or None. An
    IPv6 address that carries an IPv4 one is judged as that one ("2002:7f00:1:: is
    loopback (it carries 127.0.0.1)")."""
    inner = carried(address)
    if inner != address:
        why = refusal(inner, allowed)
        return f"{address} is {why.split(' is ', 1)[1]} (it carries {inner})" if why else None
    if any(address in network for network in allowed if network.version == address.version):
        return None
    for kind, applies in _KINDS:
        if applies(address):
            return f"{address} is {kind}"
    return None


def resolve(host: str, port: int) -> list[Address]:
    """Every address `host` stands for (a name, or an address in any form the resolver
    reads); `BlockedAddress` when it stands for none."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise BlockedAddress(f"{host} does not resolve ({error})") from None
    addresses = []
    for *_, sockaddr in found:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


def url_refusal(url: str) -> str | None:
    """Why a subscription may not point at `url` (its host is, or resolves to, an
    internal address), or None. A name that does not resolve yet is let through: it is
    judged at every delivery, on the address then connected to."""
    parts = urllib.parse.urlsplit(url)
    if not parts.hostname:
        return "The URL names no host."
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as error:
        return f"The URL's port cannot be used: {error}."
    try:
        addresses = resolve(parts.hostname, port)
    except BlockedAddress:
        return None
    allowed = allowed_networks()
    for address in addresses:
        why = refusal(address, allowed)
        if why:
            network = f"{address}/{address.max_prefixlen}"
            return (
                f"Webhooks may not point inside the server's network: {parts.hostname} → {why}."
                " To allow this receiver, start the tower with WEBHOOK_ALLOWED_NETWORKS set to"
                f" its network, e.g. WEBHOOK_ALLOWED_NETWORKS={network} make run"
                " (several networks: comma-separated CIDRs)."
            )
    return None


def guarded_connection(host: str, port: int, timeout: float) -> socket.socket:
    """A connection to `host` on an address checked as it is connected to (the first of
    its addresses that may be reached and answers); `BlockedAddress` if every one is
    refused, `OSError` if none answers."""
    allowed = allowed_networks()
    refusals, failure = [], None
    for address in resolve(host, port):
        why = refusal(address, allowed)
        if why:
            refusals.append(why)
            continue
        try:
            return socket.create_connection((str(address), port), timeout=timeout)
        except OSError as error:
            failure = error
    if failure is not None:
        raise failure
    raise BlockedAddress(f"refused to connect: {'; '.join(refusals)}")
