"""URLs as a grant's condition judges them (toolsets.urls): one spelling for one
destination, and nothing judged that has more than one."""

import pytest

from toolsets.urls import NotNormalizable, is_within, normalize_url, url_prefix

pytestmark = pytest.mark.django_db  # tests/toolsets/conftest.py needs the db


@pytest.mark.parametrize(
    ("written", "normalized"),
    [
        ("http://host/ok", "http://host/ok"),
        ("HTTP://Host.Example:80/ok", "http://host.example/ok"),
        ("https://host:443", "https://host/"),
        ("http://host:8080/ok", "http://host:8080/ok"),
        ("http://host/ok/../page", "http://host/page"),
        ("http://host/ok/%2e%2E/page", "http://host/page"),
        ("http://host/ok/./x/.", "http://host/ok/x/"),
        ("http://host/%7e%41/%c3%a4", "http://host/~A/%C3%A4"),
        ("http://host/ok?to=/../x#frag", "http://host/ok?to=/../x"),
        ("http://ｌｏｃａｌｈｏｓｔ/ok", "http://localhost/ok"),
        ("http://bücher.example/", "http://xn--bcher-kva.example/"),
        ("http://0x7f.1/", "http://127.0.0.1/"),
        ("http://[::1]:80/x", "http://[::1]/x"),
        ("http://host/ok@evil/", "http://host/ok@evil/"),
    ],
)
def test_one_destination_has_one_spelling(written, normalized):
    assert normalize_url(written) == normalized


@pytest.mark.parametrize(
    ("written", "why"),
    [
        ("http://host/ok\n", "white space"),
        (" http://host/ok", "white space"),
        ("http://host/ok\u00a0", "white space"),
        ("http://host/ok\\..\\page", "backslash"),
        ("http://host\\evil/ok", "backslash"),
        ("http://host@evil/ok", "user info"),
        ("http://host/ok//../page", "empty path segment"),
        ("http://host/ok/..%2fpage", "encoded /"),
        ("http://host/ok/..%5Cpage", "encoded /"),
        ("http://host/ok/%00", "control character"),
        ("http://host/ok/..;/page", "dot segment with parameters"),
        ("http://host/ok/%2e%2e%3b/page", "dot segment with parameters"),
        ("http://host/100%", "% that starts no escape"),
        ("ftp://host/ok", "not an http"),
        ("/ok", "not an http"),
        ("http:host/ok", "no host"),
        ("http:///ok", "no host"),
        ("http://[::1/", "cannot be parsed"),
        ("http://evil＠host/", "cannot be parsed"),
    ],
)
def test_a_url_with_no_one_spelling_is_refused(written, why):
    with pytest.raises(NotNormalizable, match=why):
        normalize_url(written)


@pytest.mark.parametrize(
    ("url", "prefix", "within"),
    [
        ("http://host/ok", "http://host/ok", True),
        ("http://host/ok/x", "http://host/ok", True),
        ("http://host/ok?q=1", "http://host/ok", True),
        ("http://host/okay", "http://host/ok", False),
        ("http://host/ok", "http://host/ok/", False),
        ("https://corp.example/x", "https://corp.example/", True),
        ("https://corp.example.evil/x", "https://corp.example/", False),
        ("http://host/search?q=cats", "http://host/search?q=", True),
        ("https://any/x", "https://", True),
    ],
)
def test_a_prefix_ends_on_a_path_segment_boundary(url, prefix, within):
    assert is_within(url, prefix) is within


def test_a_prefix_is_normalized_as_a_url_is():
    assert url_prefix("HTTPS://Corp.Example") == "https://corp.example/"
    assert url_prefix("Https://") == "https://"
