"""Toolsets imported from an MCP server and an OpenAPI spec that the tests serve.

Every server binds 127.0.0.1: the MCP server is the `mcp` package's own, over stdio
and streamable HTTP (tests/toolsets/builtin/mcp_server.py); the OpenAPI spec and
its API are served by a loopback HTTP server.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync

from tests.toolsets.builtin import imported, servers
from tests.toolsets.builtin.adk import call_tool
from tests.toolsets.builtin.servers import json_reply
from toolsets.catalog import sync_catalog
from toolsets.imports import (
    ImportFailed,
    McpServer,
    aimport_openapi_spec,
    alist_tools,
    arefresh,
    atoolset_for,
    import_mcp_server,
    import_openapi_spec,
    registration_of,
)
from toolsets.models import Tool, Toolset

pytestmark = pytest.mark.django_db  # tests/toolsets/conftest.py needs the db

MCP_SERVER = Path(__file__).parent / "builtin" / "mcp_server.py"


# Servers.


@pytest.fixture
def tools_file(tmp_path):
    path = tmp_path / "tools.txt"
    path.write_text("add echo")
    return path


@pytest.fixture
def stdio_command(tools_file):
    return [sys.executable, str(MCP_SERVER), "stdio", str(tools_file)]


@pytest.fixture
def mcp_http_url(tools_file, tmp_path):
    """The streamable HTTP endpoint of an MCP server process on 127.0.0.1."""
    log = tmp_path / "mcp_server.log"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, str(MCP_SERVER), "http", str(tools_file)],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    try:
        line = process.stdout.readline()  # the port, once it listens
        assert line.strip().isdigit(), f"no port from the server: {log.read_text()}"
        yield f"http://127.0.0.1:{int(line)}/mcp"
    finally:
        process.kill()
        process.wait(timeout=10)


@pytest.fixture
def web():
    server = servers.serve()
    yield server
    servers.stop(server)


def pet_spec(*, server: str = "/api", with_create: bool = False) -> dict:
    paths: dict = {
        "/pets": {
            "get": {
                "operationId": "listPets",
                "summary": "List the pets.",
                "parameters": [
                    {"name": "limit", "in": "query", "schema": {"type": "integer"}}
                ],
                "responses": {"200": {"description": "The pets."}},
            }
        }
    }
    if with_create:
        paths["/pets"]["post"] = {
            "operationId": "createPet",
            "summary": "Add a pet.",
            "requestBody": {
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "properties": {"name": {"type": "string"}},
                        }
                    }
                }
            },
            "responses": {"201": {"description": "Added."}},
        }
    return {
        "openapi": "3.0.3",
        "info": {"title": "Pets", "version": "1"},
        "servers": [{"url": server}],
        "paths": paths,
    }


@pytest.fixture
def petstore(web):
    """The pet spec at /openapi.json, its API under /api."""
    web.routes["/openapi.json"] = json_reply(pet_spec())
    web.routes["/api/pets"] = lambda h: json_reply(
        {"pets": ["rex", "tom"], "query": h.path.partition("?")[2]}
    )
    return web


async def names(toolset) -> list[str]:
    return [tool.name for tool in await alist_tools(toolset)]


# MCP.


async def test_an_mcp_stdio_server_is_imported_and_called(stdio_command):
    toolset = import_mcp_server(name="calc_mcp", command=stdio_command)
    try:
        assert await names(toolset) == ["calc_mcp_add", "calc_mcp_echo"]
        response = await call_tool([toolset], "calc_mcp_add", a=2, b=3)
    finally:
        await toolset.close()
    assert response["isError"] is False
    assert response["content"][0]["text"] == "5"


async def test_an_mcp_streamable_http_server_is_imported_and_called(mcp_http_url):
    toolset = import_mcp_server(name="remote", url=mcp_http_url)
    try:
        assert await names(toolset) == ["remote_add", "remote_echo"]
        response = await call_tool([toolset], "remote_echo", text="over http")
    finally:
        await toolset.close()
    assert response["content"][0]["text"] == "over http"


async def test_refreshing_an_mcp_import_updates_its_tools(stdio_command, tools_file):
    toolset = import_mcp_server(name="calc_mcp", command=stdio_command, prefix="")
    try:
        assert await names(toolset) == ["add", "echo"]
        tools_file.write_text("add shout")
        fresh, tools = await arefresh(toolset)
        assert [tool.name for tool in tools] == ["add", "shout"]
        assert tools[1].description == "Echo the text back in capitals."
        response = await call_tool([fresh], "shout", text="hi")
    finally:
        await toolset.close()
    assert response["content"][0]["text"] == "HI"


@pytest.mark.parametrize(
    "fields",
    [
        {"name": "both", "command": ["x"], "url": "http://127.0.0.1/mcp"},
        {"name": "neither"},
        {"name": "Bad Name", "command": ["x"]},
        {"name": "ftp", "url": "ftp://127.0.0.1/"},
        {"name": "junk", "url": "http://[::1"},
    ],
)
def test_an_invalid_mcp_registration_is_refused(fields):
    with pytest.raises(ImportFailed):
        import_mcp_server(**fields)


def test_an_mcp_registration_round_trips_as_json_and_shows_no_secrets():
    server = McpServer(
        name="gh",
        url="https://bot:pw@mcp.example/mcp?token=t0ken",
        headers={"Authorization": "Bearer s3cret"},
    )
    assert McpServer.model_validate_json(server.model_dump_json()) == server
    assert server.origin == "https://mcp.example/mcp"
    assert "s3cret" not in repr(server)
    stdio = McpServer(name="fs", command=["server", "--token", "t0ken"])
    assert stdio.origin == "server ..."


# OpenAPI.


async def test_an_openapi_spec_from_a_url_is_imported_and_called(petstore):
    toolset = await aimport_openapi_spec(
        name="pets", url=petstore.url("/openapi.json"), allow_private_network=True
    )
    assert await names(toolset) == ["pets_list_pets"]
    response = await call_tool([toolset], "pets_list_pets", limit=2)
    assert response == {"pets": ["rex", "tom"], "query": "limit=2"}
    assert registration_of(toolset).origin == petstore.url("/openapi.json")


async def test_an_api_on_a_private_network_is_refused_unless_allowed(petstore):
    with pytest.raises(ImportFailed, match="private network"):
        await aimport_openapi_spec(name="pets", url=petstore.url("/openapi.json"))


async def test_refreshing_an_openapi_import_updates_its_tools(petstore):
    toolset = await aimport_openapi_spec(
        name="pets", url=petstore.url("/openapi.json"), allow_private_network=True
    )
    petstore.routes["/openapi.json"] = json_reply(pet_spec(with_create=True))
    fresh, tools = await arefresh(toolset)
    assert [tool.name for tool in tools] == ["pets_list_pets", "pets_create_pet"]
    assert await names(toolset) == ["pets_list_pets"]  # the old one is unchanged
    assert fresh is not toolset


async def test_inline_and_file_specs_are_imported(web, tmp_path):
    spec = json.dumps(pet_spec(server=web.url("/api")))
    (tmp_path / "pets.json").write_text(spec)
    inline = await aimport_openapi_spec(
        name="inline", spec=spec, allow_private_network=True
    )
    from_file = await aimport_openapi_spec(
        name="filed", path=str(tmp_path / "pets.json"), allow_private_network=True
    )
    assert await names(inline) == ["inline_list_pets"]
    assert await names(from_file) == ["filed_list_pets"]


async def test_an_api_answer_over_the_size_limit_is_an_error(petstore, settings):
    settings.TOOLCRIB_IMPORT_MAX_RESPONSE_BYTES = 10
    toolset = await aimport_openapi_spec(
        name="pets", url=petstore.url("/openapi.json"), allow_private_network=True
    )
    response = await call_tool([toolset], "pets_list_pets")
    assert "larger than 10 bytes" in json.dumps(response)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("not: [a spec", "neither JSON nor YAML"),
        ('{"swagger": "2.0", "paths": {}}', "only OpenAPI 3"),
        ('{"openapi": "3.0.0"}', "no paths"),
    ],
)
async def test_a_spec_that_is_not_openapi_3_is_refused(text, reason):
    with pytest.raises(ImportFailed, match=reason):
        await aimport_openapi_spec(name="bad", spec=text)


async def test_a_registration_builds_one_toolset_per_process(petstore):
    first = await aimport_openapi_spec(
        name="pets", url=petstore.url("/openapi.json"), allow_private_network=True
    )
    registration = registration_of(first)
    assert await atoolset_for(registration) is await atoolset_for(registration)


# The catalog: imports registered in settings, the way a deployment can today.


def test_imports_are_catalogued_with_their_source_and_refreshed(
    settings, petstore, stdio_command
):
    imported.pets = import_openapi_spec(
        name="pets", url=petstore.url("/openapi.json"), allow_private_network=True
    )
    imported.calc = import_mcp_server(name="calc_mcp", command=stdio_command)
    settings.TOOLCRIB_TOOLSETS = {
        "pets": "tests.toolsets.builtin.imported.pets",
        "calc_mcp": "tests.toolsets.builtin.imported.calc",
    }
    try:
        sync_catalog()
        sources = dict(Toolset.objects.values_list("name", "source"))
        assert sources == {"pets": "openapi", "calc_mcp": "mcp"}
        petstore.routes["/openapi.json"] = json_reply(
            pet_spec(server="/v2", with_create=True)
        )
        imported.pets, _ = async_to_sync(arefresh)(imported.pets)
        sync_catalog()
    finally:
        async_to_sync(imported.calc.close)()
    tools = dict(Tool.objects.values_list("full_name", "missing"))
    assert tools == {
        "pets.pets_list_pets": False,
        "pets.pets_create_pet": False,
        "calc_mcp.calc_mcp_add": False,
        "calc_mcp.calc_mcp_echo": False,
    }
