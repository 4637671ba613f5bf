"""Forced first call, progressive exposure and gates, through real turns over the API."""

import uuid
from types import SimpleNamespace

import pytest
from google.adk.tools import FunctionTool

from demo import records
from tests.toolsets import exposed
from tests.toolsets.conftest import tool
from toolsets import availability, grants
from toolsets.governance import policies
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

EXPOSED_AGENTS = [
    "tests.toolsets.exposed.reader",
    "tests.toolsets.exposed.sneaky",
    "tests.toolsets.exposed.hasty",
    "tests.toolsets.exposed.exposer",
    "tests.toolsets.exposed.loading",
]


@pytest.fixture(autouse=True)
def _fresh_records(toolcrib_settings, monkeypatch):
    # Rate counters and cached results of another test (or run) are not ours.
    fresh = uuid.uuid4().hex
    monkeypatch.setattr(policies, "RATE_KEY", f"test:rate:{fresh}")
    monkeypatch.setattr(policies, "RESULT_KEY", f"test:result:{fresh}")
    toolcrib_settings.TOOLCRIB_AGENTS = [
        *toolcrib_settings.TOOLCRIB_AGENTS,
        *EXPOSED_AGENTS,
    ]
    toolcrib_settings.TOOLCRIB_FORCED_FIRST_TOOL = {
        "records": "get_record",
        "reader": "get_record",
        "sneaky": "get_record",
    }
    saved = {key: dict(value) for key, value in records.RECORDS.items()}
    exposed.SEEN.clear()
    yield
    records.RECORDS.clear()
    records.RECORDS.update(saved)


def responses_in(frames: list[dict]) -> list[dict]:
    return [r for f in frames for r in f["event"]["function_responses"]]


def calls_in(frames: list[dict]) -> list[dict]:
    return [c for f in frames for c in f["event"]["function_calls"]]


# Forced first call.


def test_first_call_is_forced_and_later_calls_are_free(
    catalog, alice, start_session, say
):
    say(alice, start_session(alice, "reader"), "update REC-42")

    first, second, third = exposed.SEEN[:3]
    assert first == (["get_record"], "ANY", ["get_record"])
    assert second == (["get_record", "update_record"], "AUTO", [])
    assert third[1] == "AUTO"
    assert records.RECORDS["REC-42"]["status"] == "done"


def test_the_first_call_is_forced_again_each_turn(catalog, alice, start_session, say):
    session = start_session(alice, "reader")

    say(alice, session, "update REC-42")
    say(alice, session, "again")

    forced = [seen for seen in exposed.SEEN if seen[1] == "ANY"]
    assert forced == [(["get_record"], "ANY", ["get_record"])] * 2


def test_a_forced_tool_without_a_grant_is_not_forced_nor_offered(
    catalog, alice, start_session, say
):
    grants.grant_tool(target=tool("reader.get_record"), effect="deny", user=alice)

    say(alice, start_session(alice, "reader"), "update REC-42")

    assert exposed.SEEN[0] == ([], "AUTO", [])
    assert records.RECORDS["REC-42"]["status"] == "open"
    statuses = list(ToolCall.objects.values_list("tool_name", "status"))
    assert ("get_record", "denied") in statuses
    assert ("update_record", "ok") not in statuses


def test_the_demo_agent_forces_get_record_first(
    catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "records")

    say(alice, session, "hello there")

    assert [c["name"] for c in calls_in(events_of(alice, session))][:1] == [
        "get_record"
    ]


# Progressive exposure: the read-before-write gate.


def test_update_is_offered_only_after_get_and_reset_each_turn(
    catalog, alice, start_session, say
):
    session = start_session(alice, "reader")

    say(alice, session, "update REC-42")
    first_turn = list(exposed.SEEN)
    exposed.SEEN.clear()
    say(alice, session, "again")

    assert "update_record" not in first_turn[0][0]
    assert "update_record" in first_turn[1][0]
    assert exposed.SEEN[0][0] == ["get_record"]  # hidden again, then exposed
    assert "update_record" in exposed.SEEN[1][0]


def test_a_call_in_the_same_batch_as_the_exposure_does_not_run(
    catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "hasty")

    say(alice, session, "update REC-42")

    assert records.RECORDS["REC-42"]["status"] == "open"
    by_name = {
        r["name"]: r["response"] for r in responses_in(events_of(alice, session))
    }
    assert by_name["get_record"]["status"] == "success"
    assert by_name["update_record"]["status"] == "error"
    assert "not available" in by_name["update_record"]["error_message"]
    assert "update_record" in exposed.SEEN[1][0]  # offered from the next step


def test_an_exposed_tool_without_a_grant_is_never_offered_nor_run(
    catalog, alice, start_session, say
):
    grants.grant_tool(target=tool("reader.update_record"), effect="deny", user=alice)

    say(alice, start_session(alice, "reader"), "update REC-42")

    assert all("update_record" not in seen[0] for seen in exposed.SEEN)
    assert records.RECORDS["REC-42"]["status"] == "open"
    audit = dict(ToolCall.objects.values_list("tool_name", "status"))
    assert audit == {"get_record": "ok", "update_record": "denied"}


def test_a_batch_with_a_clash_changes_nothing_and_readding_is_a_no_op(
    catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "exposer")

    say(alice, session, "go")

    offered = [seen[0] for seen in exposed.SEEN]
    base = ["expose_twice", "expose_with_clash", "get_record", "hide_get_record"]
    assert offered[0] == base
    assert offered[1] == base  # the clashing batch exposed nothing
    assert offered[2] == sorted([*base, "update_record"])
    assert offered[3] == sorted(
        ["expose_twice", "expose_with_clash", "hide_get_record", "update_record"]
    )
    by_name = {
        r["name"]: r["response"] for r in responses_in(events_of(alice, session))
    }
    assert (
        "different tool is already named get_record"
        in (by_name["expose_with_clash"]["error_message"])
    )
    assert by_name["expose_twice"]["offered"].count("update_record") == 1
    assert "no_such_tool" not in by_name["hide_get_record"]["offered"]


def test_the_loader_pattern_offers_tools_once_loaded(
    catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "loading")

    say(alice, session, "5!")

    offered = [seen[0] for seen in exposed.SEEN]
    assert offered[0] == ["load_math_tools"]
    assert offered[1] == ["factorial", "fibonacci", "load_math_tools"]
    by_name = {
        r["name"]: r["response"] for r in responses_in(events_of(alice, session))
    }
    assert by_name["factorial"]["result"] == 120


def test_exposure_outside_a_turn_is_an_error():
    with pytest.raises(availability.ExposureError):
        availability.add_tools(SimpleNamespace(invocation_id="gone"), ["get_record"])
    with pytest.raises(availability.ExposureError):
        availability.remove_tools(None, ["get_record"])
    with pytest.raises(availability.ExposureError):
        availability.add_tools(None, [])


# Gating middleware.


def test_a_gate_refuses_with_feedback_and_the_tool_does_not_run(
    catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "sneaky")

    say(alice, session, "update REC-7")

    assert records.RECORDS["REC-7"]["status"] == "open"
    [update] = [
        r
        for r in responses_in(events_of(alice, session))
        if r["name"] == "update_record"
    ]
    assert update["response"]["status"] == "error"
    assert "fetch record 'REC-7'" in update["response"]["error_message"]
    assert "'REC-42'" in update["response"]["error_message"]
    assert update["response"]["outcome"] == "gated"
    audit = ToolCall.objects.get(tool_name="update_record")
    assert (audit.status, audit.attempts) == (ToolCall.Status.GATED, 0)
    assert "fetch record 'REC-7'" in audit.result_summary


# Rate limit per user per tool.


def test_a_rate_limited_tool_refuses_over_the_limit_per_user(
    catalog, alice, bob, start_session, say, events_of, toolcrib_settings
):
    toolcrib_settings.TOOLCRIB_TOOL_POLICIES = {
        "reader.get_record": {"rate_limit": (1, 3600)}
    }
    session = start_session(alice, "reader")

    say(alice, session, "update REC-42")
    say(alice, session, "again")
    say(bob, start_session(bob, "reader"), "update REC-42")

    gets = [
        r["response"]
        for r in responses_in(events_of(alice, session))
        if r["name"] == "get_record"
    ]
    assert [g["status"] for g in gets] == ["success", "error"]
    assert "Rate limited" in gets[1]["error_message"]
    bob_gets = ToolCall.objects.filter(user=bob, tool_name="get_record")
    assert [c.status for c in bob_gets] == ["ok"]
    refused = ToolCall.objects.get(
        user=alice, tool_name="get_record", status="rate_limited"
    )
    assert "Rate limited" in refused.result_summary
    assert gets[1]["outcome"] == "rate_limited"


# Result caching for read-only tools.


def test_a_cached_tool_is_served_from_cache_per_user(
    catalog, alice, bob, start_session, say, events_of, toolcrib_settings
):
    toolcrib_settings.TOOLCRIB_TOOL_POLICIES = {
        "reader.get_record": {"cache_ttl": 3600}
    }
    session = start_session(alice, "reader")

    say(alice, session, "update REC-42")  # fetched while open, then set to done
    say(alice, session, "again")
    bob_session = start_session(bob, "reader")
    say(bob, bob_session, "update REC-42")

    gets = [
        r["response"]
        for r in responses_in(events_of(alice, session))
        if r["name"] == "get_record"
    ]
    assert "served_from_cache" not in gets[0]
    assert gets[1]["served_from_cache"] is True
    assert gets[1]["record"]["status"] == "open"  # the cached result
    [bob_get] = [
        r["response"]
        for r in responses_in(events_of(bob, bob_session))
        if r["name"] == "get_record"
    ]
    assert "served_from_cache" not in bob_get
    assert bob_get["record"]["status"] == "done"
    audit = ToolCall.objects.filter(user=alice, tool_name="get_record")
    assert [c.status for c in audit.order_by("started_at")] == ["ok", "cached"]
    assert [c.attempts for c in audit.order_by("started_at")] == [1, 0]
    assert "served_from_cache" in audit.order_by("started_at").last().result_summary


def test_policy_defaults_come_from_code_and_settings_override_them(settings):
    @availability.rate_limited(5, 60)
    @availability.cached_for(300)
    def quote(symbol: str) -> dict:
        """A quote."""
        return {}

    tool_ = FunctionTool(quote)
    settings.TOOLCRIB_TOOL_POLICIES = {}
    assert availability.rate_limit_of("q.quote", tool_) == (5, 60)
    assert availability.cache_ttl_of("q.quote", tool_) == 300
    settings.TOOLCRIB_TOOL_POLICIES = {
        "q.quote": {"rate_limit": (10, 1), "cache_ttl": 0}
    }
    assert availability.rate_limit_of("q.quote", tool_) == (10, 1)
    assert availability.cache_ttl_of("q.quote", tool_) is None
