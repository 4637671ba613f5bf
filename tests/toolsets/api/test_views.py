"""The toolsets API: who may read and change what, bad input, exports."""

import csv
import io
import json
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient
from django.utils import timezone

from tests.agents.secret_agents import SECRETS
from tests.toolsets.conftest import tool, toolset
from toolsets import access, grants
from toolsets.api import exports, views
from toolsets.models import Grant, ToolCall

pytestmark = pytest.mark.django_db


# Toolsets and tools


def test_everyone_reads_the_catalog(catalog, alice, api_for):
    client = api_for(alice)

    toolsets = client.get("/api/toolsets/").json()
    tools = client.get("/api/tools/?toolset=weather_sentiment").json()
    one = client.get("/api/tools/weather_sentiment.get_weather_report/")

    assert "weather_sentiment" in [t["name"] for t in toolsets]
    assert {t["full_name"] for t in tools} == {
        "weather_sentiment.get_weather_report",
        "weather_sentiment.analyze_sentiment",
    }
    assert one.status_code == 200
    assert one.json()["parameters"]["required"] == ["city"]
    assert one.json()["toolset"] == "weather_sentiment"


def test_unknown_tool_is_404(catalog, alice, api_for):
    assert api_for(alice).get("/api/tools/nope.nothing/").status_code == 404


def test_anonymous_reads_nothing(catalog, client):
    assert client.get("/api/toolsets/").status_code in {401, 403}


def test_only_staff_change_toolsets_and_tools(catalog, alice, api_for):
    client = api_for(alice)

    assert (
        client.patch(
            "/api/toolsets/rockets/", {"enabled": False}, format="json"
        ).status_code
        == 403
    )
    assert (
        client.patch(
            "/api/tools/rockets.read_gauge/", {"risk": "read"}, format="json"
        ).status_code
        == 403
    )
    assert toolset("rockets").enabled


def test_staff_sets_policy_and_kill_switch(catalog, staff, alice, api_for):
    client = api_for(staff)

    policy = client.patch(
        "/api/toolsets/rockets/", {"default_policy": "granted_only"}, format="json"
    )
    killed = client.patch(
        "/api/tools/rockets.read_gauge/",
        {"enabled": False, "risk": "read"},
        format="json",
    )

    assert (
        policy.status_code == 200 and policy.json()["default_policy"] == "granted_only"
    )
    assert killed.status_code == 200 and killed.json()["enabled"] is False
    assert (
        access.explain(user_id=alice.pk, tool="rockets.launch_rocket").reason
        == "policy"
    )
    assert (
        access.explain(user_id=alice.pk, tool="rockets.read_gauge").reason == "disabled"
    )


def test_catalog_fields_from_code_cannot_be_changed(catalog, staff, api_for):
    response = api_for(staff).patch(
        "/api/tools/rockets.read_gauge/",
        {"name": "other", "full_name": "x.y"},
        format="json",
    )

    assert response.status_code == 200
    assert tool("rockets.read_gauge").name == "read_gauge"


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        ("/api/toolsets/rockets/", {"default_policy": "sometimes"}, "default_policy"),
        ("/api/toolsets/rockets/", {"enabled": "maybe"}, "enabled"),
        ("/api/tools/rockets.read_gauge/", {"risk": "spicy"}, "risk"),
    ],
)
def test_bad_catalog_changes_are_400(catalog, staff, api_for, url, body, field):
    response = api_for(staff).patch(url, body, format="json")

    assert response.status_code == 400
    assert field in response.json()


def test_toolsets_cannot_be_created_over_the_api(catalog, staff, api_for):
    response = api_for(staff).post("/api/toolsets/", {"name": "x"}, format="json")

    assert response.status_code == 405


# Grants


def test_non_staff_cannot_read_or_change_grants(catalog, alice, api_for):
    client = api_for(alice)
    grant, _ = grants.grant_tool(target=toolset("rockets"), effect="deny", user=alice)
    body = {"user": "alice", "toolset": "rockets", "effect": "allow"}

    assert client.get("/api/grants/").status_code == 403
    assert client.get(f"/api/grants/{grant.pk}/").status_code == 403
    assert client.post("/api/grants/", body, format="json").status_code == 403
    assert client.delete(f"/api/grants/{grant.pk}/").status_code == 403
    assert Grant.objects.get().effect == "deny"


def test_staff_grants_a_tool_to_a_user(catalog, staff, alice, api_for):
    expires = (timezone.now() + timedelta(days=1)).isoformat()
    response = api_for(staff).post(
        "/api/grants/",
        {
            "user": "alice",
            "tool": "rockets.launch_rocket",
            "effect": "deny",
            "expires_at": expires,
        },
        format="json",
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["user"] == "alice" and body["group"] is None
    assert body["tool"] == "rockets.launch_rocket" and body["toolset"] is None
    assert body["effect"] == "deny" and body["active"] is True
    assert body["created_by"] == "root"
    assert not access.is_allowed(user_id=alice.pk, tool="rockets.launch_rocket")


def test_granting_the_same_subject_and_target_again_replaces_it(
    catalog, staff, alice, api_for, make_group
):
    make_group("ops", alice)
    client = api_for(staff)
    first = client.post(
        "/api/grants/",
        {"group": "ops", "toolset": "rockets", "effect": "deny"},
        format="json",
    )

    again = client.post(
        "/api/grants/",
        {"group": "ops", "toolset": "rockets", "effect": "allow"},
        format="json",
    )

    assert first.status_code == 201 and again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    assert Grant.objects.get().effect == "allow"


def test_deleting_a_grant_revokes_it(catalog, staff, alice, api_for):
    grant, _ = grants.grant_tool(target=toolset("rockets"), effect="deny", user=alice)
    assert not access.is_allowed(user_id=alice.pk, tool="rockets.read_gauge")

    response = api_for(staff).delete(f"/api/grants/{grant.pk}/")

    assert response.status_code == 204
    assert access.is_allowed(user_id=alice.pk, tool="rockets.read_gauge")


def test_grants_are_filtered(catalog, staff, alice, bob, api_for):
    grants.grant_tool(target=toolset("rockets"), effect="deny", user=alice)
    grants.grant_tool(target=tool("rockets.read_gauge"), effect="allow", user=bob)

    rows = api_for(staff).get("/api/grants/?user=bob").json()

    assert [(g["user"], g["tool"]) for g in rows] == [("bob", "rockets.read_gauge")]
    assert len(api_for(staff).get("/api/grants/?effect=deny").json()) == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"user": "nobody", "tool": "rockets.read_gauge", "effect": "allow"}, "user"),
        (
            {"group": "nogroup", "tool": "rockets.read_gauge", "effect": "allow"},
            "group",
        ),
        ({"user": "alice", "tool": "rockets.nothing", "effect": "allow"}, "tool"),
        ({"user": "alice", "tool": "read_gauge", "effect": "allow"}, "tool"),
        ({"user": "alice", "toolset": "nothing", "effect": "allow"}, "toolset"),
        (
            {
                "user": "alice",
                "group": "ops",
                "tool": "rockets.read_gauge",
                "effect": "allow",
            },
            "user",
        ),
        ({"tool": "rockets.read_gauge", "effect": "allow"}, "user"),
        ({"user": "alice", "effect": "allow"}, "toolset"),
        (
            {
                "user": "alice",
                "toolset": "rockets",
                "tool": "rockets.read_gauge",
                "effect": "allow",
            },
            "toolset",
        ),
        ({"user": "alice", "toolset": "rockets", "effect": "perhaps"}, "effect"),
        ({"user": "alice", "toolset": "rockets"}, "effect"),
        (
            {
                "user": "alice",
                "toolset": "rockets",
                "effect": "allow",
                "expires_at": "soon",
            },
            "expires_at",
        ),
        (
            {
                "user": "alice",
                "toolset": "rockets",
                "effect": "allow",
                "expires_at": "2001-01-01T00:00:00Z",
            },
            "expires_at",
        ),
        ({"user": ["alice"], "toolset": "rockets", "effect": "allow"}, "user"),
    ],
)
def test_bad_grants_are_400_with_the_field(
    catalog, staff, alice, make_group, api_for, body, field
):
    make_group("ops", alice)

    response = api_for(staff).post("/api/grants/", body, format="json")

    assert response.status_code == 400, response.content
    assert field in response.json()
    assert not Grant.objects.exists()


def test_a_grant_body_that_is_not_an_object_is_400(catalog, staff, api_for):
    response = api_for(staff).post(
        "/api/grants/", "[1, 2]", content_type="application/json"
    )

    assert response.status_code == 400


# Effective access


def test_staff_read_anyones_access_matrix(catalog, staff, alice, api_for):
    grant, _ = grants.grant_tool(
        target=tool("rockets.launch_rocket"), effect="deny", user=alice
    )

    response = api_for(staff).get(f"/api/access/?user={alice.pk}")

    assert response.status_code == 200
    body = response.json()
    assert body["user"] == {"id": alice.pk, "username": "alice"}
    rockets = next(row for row in body["toolsets"] if row["name"] == "rockets")
    assert rockets["allowed"] is True and rockets["reason"] == "policy"
    cells = {cell["full_name"]: cell for cell in rockets["tools"]}
    assert cells["rockets.launch_rocket"] == {
        "full_name": "rockets.launch_rocket",
        "allowed": False,
        "rule": f"denied by grant #{grant.pk}: user alice on tool rockets.launch_rocket",
        "reason": "deny",
        "grant": grant.pk,
        "condition": None,
        "otherwise": None,
        "condition_text": "",
    }
    assert cells["rockets.read_gauge"]["allowed"] is True


def test_users_read_only_their_own_access(catalog, alice, bob, api_for):
    client = api_for(alice)

    assert client.get("/api/access/").json()["user"]["username"] == "alice"
    assert client.get(f"/api/access/?user={alice.pk}").status_code == 200
    assert client.get(f"/api/access/?user={bob.pk}").status_code == 403


@pytest.mark.parametrize("value", ["abc", "-1", "99999"])
def test_bad_access_user_is_400(catalog, staff, api_for, value):
    response = api_for(staff).get(f"/api/access/?user={value}")

    assert response.status_code == 400
    assert "user" in response.json()


# Tools of an agent


def test_agent_tools_lists_what_the_user_may_use_now(catalog, alice, bob, api_for):
    grants.grant_tool(
        target=tool("weather_sentiment.get_weather_report"), effect="deny", user=alice
    )

    mine = api_for(alice).get("/api/agents/weather_sentiment/tools/").json()
    theirs = api_for(bob).get("/api/agents/weather_sentiment/tools/").json()

    assert [t["full_name"] for t in mine] == ["weather_sentiment.analyze_sentiment"]
    assert [t["name"] for t in theirs] == ["get_weather_report", "analyze_sentiment"]
    assert theirs[0]["agent"] == "weather_sentiment_agent"
    assert theirs[0]["rule"] == "toolset weather_sentiment is open to everyone"


def test_agent_tools_include_toolsets_and_sub_agents(catalog, alice, api_for):
    calculator = api_for(alice).get("/api/agents/calculator/tools/").json()

    assert [(t["toolset"], t["name"]) for t in calculator] == [
        ("calculator", "greet_user"),
        ("simple_math_toolset", "calculator_add_numbers"),
        ("simple_math_toolset", "calculator_subtract_numbers"),
    ]


def test_agent_tools_of_a_row_agent(catalog, staff, alice, api_for):
    api_for(staff).post(
        "/api/agents/",
        {"name": "pad", "toolsets": ["launcher", "gauges"]},
        format="json",
    )

    names = [
        t["full_name"] for t in api_for(alice).get("/api/agents/pad/tools/").json()
    ]

    assert names == [
        "launcher.launch_rocket",
        "gauges.gauges_read_gauge",
        "gauges.gauges_audited_read",
    ]


def test_agent_tools_of_an_unknown_agent_is_404(catalog, alice, api_for):
    assert api_for(alice).get("/api/agents/nobody/tools/").status_code == 404


# The audit


def make_call(user, **fields) -> ToolCall:
    now = timezone.now()
    defaults = {
        "session_id": "s1",
        "agent": "rocketeer",
        "adk_agent": "rocketeer_agent",
        "tool_name": "launch_rocket",
        "tool_full_name": "rocketeer.launch_rocket",
        "args": {"target": "moon"},
        "result_summary": '{"status": "launched"}',
        "status": "ok",
        "access_rule": "toolset rocketeer is open to everyone",
        "started_at": now,
        "finished_at": now,
    }
    return ToolCall.objects.create(user=user, **{**defaults, **fields})


def test_users_read_only_their_own_calls(catalog, alice, bob, api_for):
    mine = make_call(alice)
    make_call(bob)

    rows = api_for(alice).get("/api/tool-calls/").json()
    filtered = api_for(alice).get(f"/api/tool-calls/?user={bob.pk}").json()
    other = ToolCall.objects.get(user=bob)

    assert [row["id"] for row in rows] == [mine.pk]
    assert filtered == []
    assert api_for(alice).get(f"/api/tool-calls/{other.pk}/").status_code == 404


def test_staff_read_every_call_and_filter(catalog, staff, alice, bob, api_for):
    old = timezone.now() - timedelta(days=2)
    make_call(alice, status="denied", started_at=old, finished_at=old)
    make_call(
        bob,
        agent="weather_sentiment",
        tool_full_name="weather_sentiment.get_weather_report",
        tool_name="get_weather_report",
    )
    client = api_for(staff)

    assert len(client.get("/api/tool-calls/").json()) == 2
    assert [r["user"] for r in client.get("/api/tool-calls/?user=alice").json()] == [
        "alice"
    ]
    assert [
        r["user"] for r in client.get(f"/api/tool-calls/?user={bob.pk}").json()
    ] == ["bob"]
    assert [
        r["status"] for r in client.get("/api/tool-calls/?status=denied").json()
    ] == ["denied"]
    assert [
        r["agent"]
        for r in client.get("/api/tool-calls/?agent=weather_sentiment").json()
    ] == ["weather_sentiment"]
    assert len(client.get("/api/tool-calls/?tool=get_weather_report").json()) == 1
    assert len(client.get("/api/tool-calls/?tool=rocketeer.launch_rocket").json()) == 1
    since = (timezone.now() - timedelta(days=1)).isoformat()
    assert [
        r["user"] for r in client.get("/api/tool-calls/", {"since": since}).json()
    ] == ["bob"]
    assert [
        r["user"] for r in client.get("/api/tool-calls/", {"until": since}).json()
    ] == ["alice"]
    assert len(client.get("/api/tool-calls/?limit=1").json()) == 1


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("since=yesterday", "since"),
        ("until=2026-13-45", "until"),
        ("status=exploded", "status"),
        ("limit=0", "limit"),
        ("limit=lots", "limit"),
        ("since=yesterday&format=csv", "since"),
    ],
)
def test_bad_audit_filters_are_400_json(catalog, staff, api_for, query, field):
    response = api_for(staff).get(f"/api/tool-calls/?{query}")

    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    assert field in response.json()


def test_audit_exports_as_csv(catalog, staff, alice, api_for):
    make_call(alice, args={"target": "moon", "nested": {"a": 1}})

    response = api_for(staff).get("/api/tool-calls/?format=csv")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert 'filename="tool-calls.csv"' in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.getvalue().decode())))
    assert len(rows) == 1
    assert rows[0]["user"] == "alice"
    assert rows[0]["tool_full_name"] == "rocketeer.launch_rocket"
    assert json.loads(rows[0]["args"]) == {"target": "moon", "nested": {"a": 1}}


def test_audit_exports_as_json_lines(catalog, staff, alice, bob, api_for):
    make_call(alice)
    make_call(bob, status="error")

    response = api_for(staff).get("/api/tool-calls/?format=jsonl")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/jsonl")
    lines = [json.loads(line) for line in response.getvalue().decode().splitlines()]
    assert sorted(line["status"] for line in lines) == ["error", "ok"]


def test_non_staff_export_only_their_own(catalog, alice, bob, api_for):
    make_call(alice)
    make_call(bob)

    response = api_for(alice).get("/api/tool-calls/?format=jsonl")

    lines = response.getvalue().decode().splitlines()
    assert [json.loads(line)["user"] for line in lines] == ["alice"]


def exported(response) -> list[dict]:
    assert response.status_code == 200, response
    assert response.streaming
    return [json.loads(line) for line in response.getvalue().decode().splitlines()]


def test_an_export_has_every_call_past_the_json_lists_cap(
    catalog, staff, alice, api_for, monkeypatch
):
    monkeypatch.setattr(views, "MAX_CALLS", 5)
    monkeypatch.setattr(exports, "CHUNK", 3)
    made = [make_call(alice, call_id=f"c{n}") for n in range(11)]

    listed = api_for(staff).get("/api/tool-calls/?limit=50").json()
    lines = exported(api_for(staff).get("/api/tool-calls/?format=jsonl"))
    rows = csv.DictReader(
        io.StringIO(
            api_for(staff).get("/api/tool-calls/?format=csv").getvalue().decode()
        )
    )

    assert len(listed) == 5
    assert [line["call_id"] for line in lines] == [c.call_id for c in made[::-1]]
    assert len(list(rows)) == 11


def test_an_export_keeps_to_the_audit_pages_filters(
    catalog, staff, alice, bob, api_for
):
    now = timezone.now()
    make_call(alice, status="error", started_at=now - timedelta(hours=2))
    wanted = make_call(alice, status="error", started_at=now - timedelta(minutes=5))
    make_call(alice, status="ok", started_at=now - timedelta(minutes=4))
    make_call(bob, status="error", started_at=now - timedelta(minutes=3))
    make_call(alice, status="error", tool_name="other", tool_full_name="x.other")
    since = (now - timedelta(hours=1)).isoformat()

    lines = exported(
        api_for(staff).get(
            "/api/tool-calls/",
            {
                "format": "jsonl",
                "user": "alice",
                "status": "error",
                "tool": "rocketeer.launch_rocket",
                "agent": "rocketeer",
                "since": since,
            },
        )
    )

    assert [line["id"] for line in lines] == [wanted.id]


def test_an_export_given_a_limit_stops_there(
    catalog, staff, alice, api_for, monkeypatch
):
    monkeypatch.setattr(exports, "CHUNK", 2)
    for n in range(7):
        make_call(alice, call_id=f"c{n}")

    lines = exported(api_for(staff).get("/api/tool-calls/?format=jsonl&limit=5"))

    assert [line["call_id"] for line in lines] == ["c6", "c5", "c4", "c3", "c2"]


def test_a_user_cannot_export_anothers_calls_even_by_filter(
    catalog, alice, bob, api_for
):
    make_call(bob)

    by_name = api_for(alice).get("/api/tool-calls/?format=csv&user=bob")
    by_id = api_for(alice).get(f"/api/tool-calls/?format=jsonl&user={bob.pk}")

    assert list(csv.DictReader(io.StringIO(by_name.getvalue().decode()))) == []
    assert by_id.getvalue() == b""


def test_an_export_reads_a_chunk_of_calls_a_query(
    catalog, staff, alice, api_for, monkeypatch, django_assert_num_queries
):
    monkeypatch.setattr(exports, "CHUNK", 4)
    for n in range(10):
        make_call(alice, call_id=f"c{n}")
    client = api_for(staff)
    client.get("/api/tool-calls/")  # the token's first use is not the export's cost

    response = client.get("/api/tool-calls/?format=jsonl")
    # Nothing is read until the body is: then one query for each chunk of 4.
    parts = iter(response.streaming_content)
    with django_assert_num_queries(1):
        first = next(parts)
    with django_assert_num_queries(2):
        rest = list(parts)

    assert len(first.splitlines()) == 4
    assert [len(part.splitlines()) for part in rest] == [4, 2]


@pytest.mark.django_db(transaction=True)
async def test_under_asgi_an_export_is_an_async_stream(
    catalog, staff, alice, monkeypatch
):
    monkeypatch.setattr(exports, "CHUNK", 2)
    for n in range(5):
        await sync_to_async(make_call)(alice, call_id=f"c{n}")
    client = AsyncClient()
    await sync_to_async(client.force_login)(staff)

    response = await client.get("/api/tool-calls/?format=jsonl")

    assert response.streaming and response.is_async
    parts = [part async for part in response.streaming_content]
    assert [len(part.splitlines()) for part in parts] == [2, 2, 1]


def test_the_schema_documents_the_toolsets_api(catalog, alice, api_for):
    response = api_for(alice).get("/api/schema/?format=json")

    paths = response.json()["paths"]
    for path in [
        "/api/toolsets/",
        "/api/tools/{full_name}/",
        "/api/grants/",
        "/api/access/",
        "/api/tool-calls/",
        "/api/agents/{name}/tools/",
    ]:
        assert path in paths


@pytest.mark.django_db(transaction=True)
def test_the_audit_and_its_exports_show_what_the_model_received_without_secrets(
    vault_keeper, staff, alice, api_for, start_session, say
):
    session = start_session(alice, vault_keeper)
    say(alice, session, "keep and sign me in")
    client = api_for(staff)

    listed = client.get("/api/tool-calls/?tool=sign_in").json()
    exported = client.get("/api/tool-calls/?tool=sign_in&format=csv")
    lines = client.get("/api/tool-calls/?tool=sign_in&format=jsonl").getvalue().decode()

    (row,) = listed
    (csv_row,) = csv.DictReader(io.StringIO(exported.getvalue().decode()))
    (line,) = [json.loads(text) for text in lines.splitlines()]
    received = {"status": "signed in", "note": "checked by the vault keeper"}
    raw = {"status": "signed in", "user": "ada", "session_token": "[redacted]"}
    for shown in (row, line):
        assert shown["args"] == {"username": "ada", "password": "[redacted]"}
        assert json.loads(shown["result_summary"]) == received
        assert json.loads(shown["raw_result_summary"]) == raw
    assert json.loads(csv_row["args"])["password"] == "[redacted]"
    assert json.loads(csv_row["result_summary"]) == received
    assert json.loads(csv_row["raw_result_summary"]) == raw
    shown = json.dumps(listed) + exported.getvalue().decode() + lines
    assert not [secret for secret in SECRETS if secret in shown]
