import ipaddress

import httpx
import pytest

from toolsets import net
from toolsets.net import Allowlist, HostRefused, check_url

pytestmark = pytest.mark.django_db  # tests/toolsets/conftest.py needs the db


def test_allowlist_matches_names_wildcards_ports_and_networks():
    allow = Allowlist.parse(
        [
            "api.example.com",
            "*.corp.example",
            "db.example:5000",
            "10.1.0.0/16",
            "[::1]:8080",
        ]
    )
    assert allow.allows_name("api.example.com", 443)
    assert allow.allows_name("x.corp.example", 80)
    assert not allow.allows_name("corp.example", 80)  # wildcards are subdomains only
    assert not allow.allows_name("evil-api.example.com", 443)
    assert allow.allows_name("db.example", 5000)
    assert not allow.allows_name("db.example", 5001)
    assert allow.allows_address(ipaddress.ip_address("10.1.2.3"), 22)
    assert not allow.allows_address(ipaddress.ip_address("10.2.0.1"), 22)
    assert allow.allows_address(ipaddress.ip_address("::1"), 8080)
    assert not allow.allows_address(ipaddress.ip_address("::1"), 8081)


@pytest.mark.parametrize(
    "entry", ["http://x.example/", "a*.example", "10.0.0.0/99", "u@h"]
)
def test_a_malformed_allowlist_entry_is_an_error(entry):
    with pytest.raises(ValueError, match="allowlist entry"):
        Allowlist.parse([entry])


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://api.example.org/",
        "http://169.254.169.254/latest/meta-data/",  # cloud metadata
        "http://[::ffff:127.0.0.1]/",  # loopback in IPv6 clothing
        "http://10.0.0.1/",
        "http://example.com/",
        "http://api.example.org.evil.example/",
    ],
)
async def test_urls_off_the_allowlist_are_refused_before_any_lookup(url):
    with pytest.raises(HostRefused):
        await check_url(httpx.URL(url), Allowlist.parse(["api.example.org"]))


async def test_an_allowlisted_name_that_resolves_to_loopback_is_refused():
    with pytest.raises(HostRefused, match="non-public address"):
        await check_url(httpx.URL("http://localhost/"), Allowlist.parse(["localhost"]))


async def test_a_private_address_is_reached_when_listed_explicitly():
    target = await check_url(
        httpx.URL("http://localhost:8000/"),
        Allowlist.parse(["localhost", "127.0.0.0/8"]),
    )
    assert ipaddress.ip_address("127.0.0.1") in target.addresses


async def test_the_connection_goes_to_the_checked_address_with_the_original_host(
    web, monkeypatch
):
    """The name is resolved once, by the check; httpx never resolves it again."""
    web.routes["/who"] = lambda handler: net_reply(handler.headers["host"])

    async def resolve(host, port):
        assert host == "intranet.test"
        return (ipaddress.ip_address("127.0.0.1"),)

    monkeypatch.setattr(net, "resolve", resolve)
    fetched = await net.fetch(
        method="GET",
        url=f"http://intranet.test:{web.port}/who",
        allowlist=Allowlist.parse(["intranet.test", "127.0.0.1"]),
        limits=net.Limits(max_bytes=1000, timeout=5, max_redirects=0),
    )
    assert fetched.body == f"intranet.test:{web.port}".encode()


def net_reply(text: str):
    from tests.toolsets.builtin.servers import Reply

    return Reply(200, text.encode(), {"Content-Type": "text/plain"})
