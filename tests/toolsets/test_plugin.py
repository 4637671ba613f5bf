"""Enforcement through real turns over the REST API: exposure, refusal, audit, revocation."""

import json

import pytest

from tests.toolsets import scripted, tools
from tests.toolsets.conftest import tool, toolset
from tests.toolsets.gauges import FlakyToolset
from toolsets import bindings, grants
from toolsets.governance.plugin import GovernancePlugin
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)


def calls_in(frames: list[dict]) -> list[dict]:
    return [c for f in frames for c in f["event"]["function_calls"]]


def responses_in(frames: list[dict]) -> list[dict]:
    return [r for f in frames for r in f["event"]["function_responses"]]


def test_a_denied_tool_is_not_offered_and_so_not_called(
    catalog, alice, bob, start_session, say, events_of
):
    grants.grant_tool(
        target=tool("weather_sentiment.get_weather_report"), effect="deny", user=alice
    )
    denied_session, allowed_session = (
        start_session(alice, "weather_sentiment"),
        start_session(bob, "weather_sentiment"),
    )

    say(alice, denied_session, "weather in london?")
    say(bob, allowed_session, "weather in london?")

    alice_calls = [c["name"] for c in calls_in(events_of(alice, denied_session))]
    assert "get_weather_report" not in alice_calls
    bob_calls = calls_in(events_of(bob, allowed_session))
    assert [c["name"] for c in bob_calls] == ["get_weather_report"]
    assert not ToolCall.objects.filter(user=alice, tool_name="get_weather_report")


def test_an_allowed_call_is_audited_with_its_context(
    catalog, bob, start_session, say, events_of
):
    session = start_session(bob, "weather_sentiment")

    run = say(bob, session, "weather in london?")

    call = ToolCall.objects.get()
    assert call.user == bob
    assert (call.session_id, str(call.run_id)) == (session, run["id"])
    assert (call.agent, call.adk_agent) == (
        "weather_sentiment",
        "weather_sentiment_agent",
    )
    assert call.tool == tool("weather_sentiment.get_weather_report")
    assert call.tool_full_name == "weather_sentiment.get_weather_report"
    assert call.args == {"city": "london"}
    assert call.status == ToolCall.Status.OK
    assert "cloudy" in call.result_summary
    assert call.access_rule == "toolset weather_sentiment is open to everyone"
    assert call.finished_at >= call.started_at and call.duration_ms >= 0
    [frame_call] = calls_in(events_of(bob, session))
    assert call.call_id == frame_call["id"]


def test_a_forced_call_to_a_denied_tool_never_runs_and_is_audited(
    catalog, alice, start_session, say, events_of
):
    grant, _ = grants.grant_tool(
        target=tool("rocketeer.launch_rocket"), effect="deny", user=alice
    )
    session = start_session(alice, "rocketeer")

    run = say(alice, session, "go")

    assert run["status"] == "succeeded"
    assert tools.LAUNCHES == []  # the side effect never happened
    assert "launch_rocket" not in scripted.OFFERED[0]
    assert "read_gauge" in scripted.OFFERED[0]
    [response] = responses_in(events_of(alice, session))
    assert response["name"] == "launch_rocket"
    assert response["status"] == "error"
    assert response["response"]["status"] == "error"
    assert f"grant #{grant.pk}" in response["response"]["error_message"]
    audit = ToolCall.objects.get()
    assert audit.status == ToolCall.Status.DENIED
    assert (
        audit.access_rule
        == f"denied by grant #{grant.pk}: user alice on tool rocketeer.launch_rocket"
    )
    assert audit.args == {"target": "moon"}


def test_granted_only_toolset_refuses_without_a_grant(
    catalog, alice, bob, start_session, say, events_of
):
    grants.update_toolset(toolset=toolset("rocketeer"), default_policy="granted_only")
    grants.grant_tool(target=toolset("rocketeer"), effect="allow", user=bob)

    say(alice, start_session(alice, "rocketeer"), "go")
    say(bob, start_session(bob, "rocketeer"), "go")

    assert tools.LAUNCHES == ["moon"]  # bob's
    statuses = dict(ToolCall.objects.values_list("user__username", "status"))
    assert statuses == {"alice": "denied", "bob": "ok"}
    denied = ToolCall.objects.get(user=alice)
    assert "granted only" in denied.access_rule


def test_kill_switch_refuses_everyone(catalog, alice, start_session, say):
    grants.grant_tool(
        target=tool("rocketeer.launch_rocket"), effect="allow", user=alice
    )
    grants.update_toolset(toolset=toolset("rocketeer"), enabled=False)

    say(alice, start_session(alice, "rocketeer"), "go")

    assert tools.LAUNCHES == []
    assert scripted.OFFERED[0] == ["dash_audited_read", "dash_read_gauge"]
    assert ToolCall.objects.get().access_rule == "toolset rocketeer is disabled"


def test_revoked_tool_is_not_offered_on_next_step(
    catalog, alice, start_session, say, events_of
):
    grants.update_toolset(toolset=toolset("revoker"), default_policy="granted_only")
    grants.grant_tool(target=tool("revoker.launch_rocket"), effect="allow", user=alice)
    grants.grant_tool(
        target=tool("revoker.revoke_launch_access"), effect="allow", user=alice
    )
    session = start_session(alice, "revoker")

    say(alice, session, "go")

    # Step 1 launches, step 2 revokes, step 3's request no longer offers launch_rocket
    # and its forced call is refused.
    assert tools.LAUNCHES == ["moon"]
    assert scripted.OFFERED[:3] == [
        ["launch_rocket", "revoke_launch_access"],
        ["launch_rocket", "revoke_launch_access"],
        ["revoke_launch_access"],
    ]
    audit = list(
        ToolCall.objects.order_by("started_at").values_list("tool_name", "status")
    )
    assert audit == [
        ("launch_rocket", "ok"),
        ("revoke_launch_access", "ok"),
        ("launch_rocket", "denied"),
    ]
    statuses = [r["status"] for r in responses_in(events_of(alice, session))]
    assert statuses == ["ok", "ok", "error"]


def test_adk_transfer_is_never_governed(catalog, alice, start_session, say, events_of):
    grants.update_toolset(toolset=toolset("customer_support"), enabled=False)
    session = start_session(alice, "customer_support")

    say(alice, session, "I need the support handler")

    transfers = [
        f["event"]["transfer"]
        for f in events_of(alice, session)
        if f["event"]["kind"] == "transfer"
    ]
    assert transfers == [{"from": "main_agent", "to": "support_agent"}]
    assert not ToolCall.objects.exists()


def test_secrets_in_arguments_and_results_are_redacted(
    catalog, alice, make_user, api_for, start_session, say, settings
):
    staff = make_user("ops", is_staff=True)
    created = api_for(staff).post(
        "/api/agents/",
        {
            "name": "vault",
            "instruction": "Use login to log in.",
            "toolsets": ["rockets"],
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    session = start_session(alice, "vault")

    say(alice, session, "log in username=ada password=hunter2 api_token=xyz")

    audit = ToolCall.objects.get()
    assert audit.tool_full_name == "rockets.login"
    assert audit.args == {
        "username": "ada",
        "password": "[redacted]",
        "api_token": "[redacted]",
    }
    assert "s3cr3t" not in audit.result_summary
    assert '"session_token": "[redacted]"' in audit.result_summary


def test_a_tool_no_sync_has_seen_is_catalogued_on_first_use(
    db, toolcrib_settings, alice, make_user, api_for, start_session, say
):
    staff = make_user("ops", is_staff=True)
    api_for(staff).post(
        "/api/agents/",
        {
            "name": "launchpad",
            "instruction": "Use launch_rocket.",
            "toolsets": ["launcher"],
        },
        format="json",
    )
    session = start_session(alice, "launchpad")

    say(alice, session, 'launch rocket to target="venus"')

    assert tools.LAUNCHES == ["venus"]
    assert tool("launcher.launch_rocket").toolset.default_policy == "open"
    assert ToolCall.objects.get().tool_full_name == "launcher.launch_rocket"


def test_parallel_calls_are_decided_one_by_one(
    catalog, alice, start_session, say, events_of
):
    grants.grant_tool(target=tool("juggler.launch_rocket"), effect="deny", user=alice)
    session = start_session(alice, "juggler")

    say(alice, session, "go")

    assert tools.LAUNCHES == []
    responses = {r["name"]: r for r in responses_in(events_of(alice, session))}
    assert responses["read_gauge"]["response"] == {"gauge": "oxygen", "value": 42}
    assert responses["launch_rocket"]["status"] == "error"
    assert (
        "not a tool of agent juggler_agent"
        in responses["self_destruct"]["response"]["error_message"]
    )
    audit = dict(ToolCall.objects.values_list("tool_name", "status"))
    assert audit == {
        "launch_rocket": "denied",
        "read_gauge": "ok",
        "self_destruct": "denied",
    }
    assert ToolCall.objects.get(tool_name="self_destruct").tool_full_name == ""


def test_a_tool_that_raises_is_audited_as_error(
    catalog, alice, make_user, api_for, start_session, say
):
    staff = make_user("ops", is_staff=True)
    api_for(staff).post(
        "/api/agents/",
        {
            "name": "engine",
            "instruction": "Use overheat_engine.",
            "toolsets": ["rockets"],
        },
        format="json",
    )
    session = start_session(alice, "engine")

    run = say(alice, session, "overheat the engine")

    assert run["status"] == "succeeded"  # the model reads the error and goes on
    audit = ToolCall.objects.get()
    assert (audit.tool_full_name, audit.status) == ("rockets.overheat_engine", "error")
    assert audit.result_summary == "RuntimeError: engine overheated at 11"


def test_a_call_cut_by_the_turn_timeout_is_audited_as_timeout(
    catalog, alice, start_session, say, settings
):
    settings.TOOLCRIB_TURN_TIMEOUT = 0.5
    session = start_session(alice, "staller")

    run = say(alice, session, "go")

    assert run["status"] == "failed"
    audit = ToolCall.objects.get()
    assert (audit.tool_name, audit.status) == ("stall_forever", "timeout")


def test_a_toolset_that_cannot_list_its_tools_does_not_break_the_turn(
    catalog, alice, make_user, api_for, start_session, say
):
    staff = make_user("ops", is_staff=True)
    api_for(staff).post(
        "/api/agents/",
        {
            "name": "flaky",
            "instruction": "Use read_gauge.",
            "toolsets": ["flaky", "launcher"],
        },
        format="json",
    )
    FlakyToolset.down = True
    session = start_session(alice, "flaky")

    run = say(alice, session, 'launch rocket to target="pluto"')

    assert run["status"] == "succeeded"
    assert tools.LAUNCHES == ["pluto"]


def test_bindings_are_resolved_once_per_model_step_not_per_call(
    catalog, alice, start_session, say, monkeypatch
):
    resolved: list[str] = []
    plain = bindings.abindings_for_invocation

    async def counted(context, *args):
        resolved.append(context.agent_name)
        return await plain(context, *args)

    monkeypatch.setattr(bindings, "abindings_for_invocation", counted)
    session = start_session(alice, "juggler")

    say(alice, session, "go")

    # Two model steps (three calls at once, then the answer), whatever the calls.
    assert len(ToolCall.objects.all()) == 3
    assert resolved == ["juggler_agent", "juggler_agent"]


@pytest.mark.parametrize(
    ("agent", "turn_timeout", "ended"),
    [("weather_sentiment", 60, "succeeded"), ("staller", 0.5, "failed")],
    ids=["a turn that ends", "a turn cut by the turn timeout"],
)
def test_nothing_a_turn_kept_outlives_it(
    agent,
    turn_timeout,
    ended,
    catalog,
    alice,
    start_session,
    say,
    settings,
    monkeypatch,
):
    settings.TOOLCRIB_TURN_TIMEOUT = turn_timeout
    built: list[GovernancePlugin] = []
    plain = GovernancePlugin.for_run.__func__

    def spied(cls, *, run):
        built.append(plain(cls, run=run))
        return built[-1]

    monkeypatch.setattr(GovernancePlugin, "for_run", classmethod(spied))

    run = say(alice, start_session(alice, agent), "weather in london?")

    assert run["status"] == ended
    assert ToolCall.objects.count() == 1
    assert [len(plugin.turns) for plugin in built] == [0]


def test_the_audit_records_what_the_model_received_and_the_tools_own_result(
    vault_keeper, alice, start_session, say
):
    session = start_session(alice, vault_keeper)

    say(alice, session, "keep and sign me in")

    kept, signed_in = ToolCall.objects.order_by("started_at")
    # The agent's after_tool_callback rewrote sign_in's answer: the model read
    # the rewritten one, the tool's own is kept beside it, both redacted.
    assert json.loads(signed_in.result_summary) == {
        "status": "signed in",
        "note": "checked by the vault keeper",
    }
    assert json.loads(signed_in.raw_result_summary) == {
        "status": "signed in",
        "user": "ada",
        "session_token": "[redacted]",
    }
    assert signed_in.args == {"username": "ada", "password": "[redacted]"}
    # Nothing changed keep_preferences' answer: no second copy.
    assert json.loads(kept.result_summary) == {"status": "kept", "theme": "dark"}
    assert kept.raw_result_summary == ""
