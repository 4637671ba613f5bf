import json

import pytest

from tests.toolsets.builtin import servers
from tests.toolsets.builtin.adk import call_tool
from tests.toolsets.builtin.servers import Reply, json_reply
from toolsets.builtin.http import http_get, http_post, toolset
from toolsets.refusals import Refusal

pytestmark = pytest.mark.django_db  # tests/toolsets/conftest.py needs the db


@pytest.fixture
def allow_loopback(settings):
    settings.TOOLCRIB_BUILTIN_HTTP_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.TOOLCRIB_BUILTIN_HTTP_MAX_BYTES = 1000
    settings.TOOLCRIB_BUILTIN_HTTP_TIMEOUT = 2
    settings.TOOLCRIB_BUILTIN_HTTP_MAX_REDIRECTS = 3
    return settings


async def test_get_from_an_allowlisted_host(web, allow_loopback):
    web.routes["/hello"] = json_reply({"hello": "world"})
    response = await call_tool([toolset], "http_get", url=web.url("/hello"))
    assert response["status"] == "success"
    assert response["http_status"] == 200
    assert json.loads(response["body"]) == {"hello": "world"}
    assert response["headers"]["content-type"] == "application/json"


async def test_post_sends_json_and_reads_the_answer(web, allow_loopback):
    web.routes["/echo"] = lambda h: json_reply({"got": json.loads(h.body)}, 201)
    response = await call_tool(
        [toolset], "http_post", url=web.url("/echo"), json_body={"n": 1}
    )
    assert response["http_status"] == 201
    assert json.loads(response["body"]) == {"got": {"n": 1}}


async def test_everything_is_refused_until_an_admin_lists_hosts(web, settings):
    settings.TOOLCRIB_BUILTIN_HTTP_ALLOWED_HOSTS = []
    response = await call_tool([toolset], "http_get", url=web.url("/hello"))
    assert response["status"] == "error"
    assert "not on the allowlist" in response["error_message"]
    assert web.seen == []


async def test_a_host_off_the_allowlist_is_refused(web, allow_loopback):
    with pytest.raises(Refusal, match="localhost is not on the allowlist"):
        await http_get(web.url("/hello", host="localhost"))
    assert web.seen == []


async def test_a_redirect_within_the_allowlist_is_followed(web, allow_loopback):
    web.routes["/old"] = Reply(302, headers={"Location": "/new"})
    web.routes["/new"] = json_reply({"at": "new"})
    response = await http_get(web.url("/old"))
    assert json.loads(response["body"]) == {"at": "new"}
    assert response["url"] == web.url("/new")
    assert response["redirects"] == [web.url("/new")]


@pytest.mark.parametrize(
    "location",
    ["http://localhost:{port}/secret", "http://169.254.169.254/latest/meta-data/"],
)
async def test_a_redirect_off_the_allowlist_is_refused(web, allow_loopback, location):
    web.routes["/hop"] = Reply(
        302, headers={"Location": location.format(port=web.port)}
    )
    web.routes["/secret"] = json_reply({"secret": True})
    with pytest.raises(Refusal, match="not on the allowlist"):
        await http_get(web.url("/hop"))
    assert [path for _, path, _ in web.seen] == ["/hop"]


async def test_too_many_redirects_are_refused(web, allow_loopback):
    web.routes["/loop"] = Reply(302, headers={"Location": "/loop"})
    with pytest.raises(Refusal, match="more than 3 redirects"):
        await http_get(web.url("/loop"))


async def test_a_303_after_post_becomes_a_get(web, allow_loopback):
    web.routes["/form"] = Reply(303, headers={"Location": "/done"})
    web.routes["/done"] = lambda h: Reply(200, h.command.encode())
    response = await http_post(web.url("/form"), body="a=1")
    assert response["body"] == "GET"


@pytest.mark.parametrize("chunked", [False, True])
async def test_an_oversized_response_is_refused(web, allow_loopback, chunked):
    web.routes["/big"] = Reply(
        200, b"x" * 5000, {"Content-Type": "text/plain"}, chunked=chunked
    )
    response = await call_tool([toolset], "http_get", url=web.url("/big"))
    assert response == {
        "status": "error",
        "error_message": "the response is larger than 1000 bytes",
    }


async def test_a_slow_answer_times_out(web, allow_loopback):
    allow_loopback.TOOLCRIB_BUILTIN_HTTP_TIMEOUT = 0.3
    web.routes["/slow"] = Reply(200, b"late", delay=1.0)
    with pytest.raises(Refusal, match="within 0.3 seconds"):
        await http_get(web.url("/slow"))


async def test_the_model_cannot_set_the_host_header(web, allow_loopback):
    web.routes["/who"] = lambda h: Reply(200, h.headers["host"].encode())
    response = await http_get(web.url("/who"), headers={"Host": "internal.example"})
    assert response["body"] == f"127.0.0.1:{web.port}"


async def test_a_header_with_a_line_break_is_refused(web, allow_loopback):
    with pytest.raises(Refusal, match="line break"):
        await http_get(web.url("/"), headers={"X-A": "1\r\nX-Injected: 2"})


async def test_binary_bodies_are_described_not_returned(web, allow_loopback):
    web.routes["/img"] = Reply(200, b"\x89PNG....", {"Content-Type": "image/png"})
    response = await http_get(web.url("/img"))
    assert response["body"] is None
    assert "image/png" in response["note"]


# An administrator's API: base URL and fixed headers (the GoAgent APITool).


@pytest.fixture
def api_base(web, settings):
    """The local server as the administrator's API, at /v1, with fixed headers."""
    settings.TOOLCRIB_BUILTIN_HTTP_ALLOWED_HOSTS = []
    settings.TOOLCRIB_BUILTIN_HTTP_BASE_URL = web.url("/v1")
    settings.TOOLCRIB_BUILTIN_HTTP_HEADERS = {"X-Client": "toolcrib", "X-Tenant": "7"}
    settings.TOOLCRIB_BUILTIN_HTTP_CREDENTIAL_HEADER = ""
    settings.TOOLCRIB_BUILTIN_HTTP_TIMEOUT = 2
    return web


async def test_a_path_goes_to_the_base_url_with_the_fixed_headers(api_base):
    api_base.routes["/v1/items"] = json_reply({"items": [1, 2]})

    response = await call_tool(
        [toolset], "http_get", url="/items", headers={"X-Client": "forged", "A": "b"}
    )

    assert response["http_status"] == 200
    assert response["url"] == api_base.url("/v1/items")
    [(method, path, headers)] = api_base.seen
    assert (method, path) == ("GET", "/v1/items")
    assert headers["X-Client"] == "toolcrib"  # the model cannot set it
    assert headers["X-Tenant"] == "7"
    assert headers["A"] == "b"


async def test_a_post_to_the_base_url_carries_them_too(api_base):
    api_base.routes["/v1/items"] = lambda h: json_reply({"got": json.loads(h.body)})

    response = await call_tool([toolset], "http_post", url="items", json_body={"n": 1})

    assert json.loads(response["body"]) == {"got": {"n": 1}}
    assert api_base.seen[0][2]["X-Tenant"] == "7"


async def test_fixed_headers_go_to_the_base_host_only(api_base, settings):
    other = servers.serve()
    settings.TOOLCRIB_BUILTIN_HTTP_ALLOWED_HOSTS = [f"127.0.0.1:{other.port}"]
    other.routes["/x"] = json_reply({})
    api_base.routes["/v1/away"] = Reply(302, headers={"Location": other.url("/x")})
    try:
        direct = await call_tool([toolset], "http_get", url=other.url("/x"))
        redirected = await call_tool([toolset], "http_get", url="/away")
    finally:
        servers.stop(other)

    assert direct["http_status"] == redirected["http_status"] == 200
    assert [seen[1] for seen in other.seen] == ["/x", "/x"]
    for _, _, headers in other.seen:
        assert "X-Client" not in headers and "X-Tenant" not in headers


async def test_a_path_without_a_base_url_is_refused(settings):
    settings.TOOLCRIB_BUILTIN_HTTP_BASE_URL = ""
    settings.TOOLCRIB_BUILTIN_HTTP_HEADERS = {}

    with pytest.raises(Refusal, match="absolute"):
        await http_get("/items")
