"""Execution policies, through real turns over the API: what a user would notice."""

import time
import uuid

import httpx
import pytest
from asgiref.sync import async_to_sync
from google.adk.tools import FunctionTool

from tests.toolsets import policed
from tests.toolsets.conftest import tool
from toolsets import grants, policies
from toolsets.admin import ToolAdminForm
from toolsets.governance import execution
from toolsets.governance import policies as enforcement
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

POLICED_AGENTS = [
    f"tests.toolsets.policed.{name}"
    for name in (
        "alarmist",
        "fetcher",
        "breaker",
        "resetter",
        "booker",
        "searcher",
        "reporter",
        "renderer",
    )
]


@pytest.fixture(autouse=True)
def _fresh(toolcrib_settings, monkeypatch):
    # Counters, cached results and slots of another test (or run) are not ours.
    fresh = uuid.uuid4().hex
    monkeypatch.setattr(enforcement, "RATE_KEY", f"test:rate:{fresh}")
    monkeypatch.setattr(enforcement, "RESULT_KEY", f"test:result:{fresh}")
    monkeypatch.setattr(execution, "SLOT_KEY", f"test:slot:{fresh}")
    toolcrib_settings.TOOLCRIB_AGENTS = [
        *toolcrib_settings.TOOLCRIB_AGENTS,
        *POLICED_AGENTS,
    ]
    toolcrib_settings.TOOLCRIB_TOOL_POLICIES = {}
    policed.ALARMS.clear()
    policed.FETCHES.clear()
    policed.HEARD.clear()
    policed.FAILURES_LEFT["count"] = 0
    policed.RUNNING.update(now=0, peak=0)
    policed.RELEASE.clear()
    yield
    policed.RELEASE.set()


def responses_in(frames: list[dict], name: str) -> list[dict]:
    return [
        r for f in frames for r in f["event"]["function_responses"] if r["name"] == name
    ]


def audit_of(name: str) -> list[tuple[str, int]]:
    calls = ToolCall.objects.filter(tool_name=name).order_by("started_at", "id")
    return list(calls.values_list("status", "attempts"))


# Argument validation.


def test_bad_arguments_do_not_run_the_tool_and_the_model_corrects_itself(
    catalog, alice, start_session, say, events_of, api_for
):
    session = start_session(alice, "alarmist")

    run = say(alice, session, "wake me at seven")

    assert run["status"] == "succeeded"
    assert policed.ALARMS == [(7, "wake up")]  # only the corrected call ran
    feedback = policed.HEARD[1][-1]  # what the model read before its next step
    assert feedback["outcome"] == "invalid_args"
    assert set(feedback["errors"]) == {"hour", "label"}
    assert "did not run" in feedback["error_message"]
    assert "label: missing" in feedback["error_message"]
    first, second = responses_in(events_of(alice, session), "set_alarm")
    assert first["status"] == "error"
    assert second["status"] == "ok"
    assert audit_of("set_alarm") == [("invalid_args", 0), ("ok", 1)]
    listed = api_for(alice).get("/api/tool-calls/?status=invalid_args").json()
    assert [(c["tool_name"], c["attempts"]) for c in listed] == [("set_alarm", 0)]


def test_validation_can_be_switched_off_by_an_override(
    catalog, alice, start_session, say, toolcrib_settings
):
    toolcrib_settings.TOOLCRIB_TOOL_POLICIES = {
        "alarmist.set_alarm": {"validate_args": False}
    }

    say(alice, start_session(alice, "alarmist"), "wake me at seven")

    # ADK still refuses a missing argument itself; the audit no longer says why.
    assert audit_of("set_alarm") == [("error", 1), ("ok", 1)]


# Retries.


def test_a_retryable_error_is_retried_until_it_succeeds(
    catalog, alice, start_session, say, events_of
):
    policed.FAILURES_LEFT["count"] = 2
    session = start_session(alice, "fetcher")

    run = say(alice, session, "fetch it")

    assert run["status"] == "succeeded"
    assert len(policed.FETCHES) == 3
    [response] = responses_in(events_of(alice, session), "fetch_page")
    assert response["response"]["body"] == "hello"
    assert response["response"]["attempts"] == 3
    assert audit_of("fetch_page") == [("ok", 3)]


@pytest.mark.parametrize(
    ("agent", "name"),
    [("resetter", "fetch_page"), ("booker", "reserve_seat")],
    ids=["a retry_on type, sync tool", "Retryable, async tool"],
)
def test_errors_marked_retryable_in_code_are_retried(
    catalog, alice, start_session, say, agent, name
):
    policed.FAILURES_LEFT["count"] = 1

    run = say(alice, start_session(alice, agent), "go")

    assert run["status"] == "succeeded"
    assert audit_of(name) == [("ok", 2)]


def test_retries_give_up_after_the_limit_and_the_model_is_told(
    catalog, alice, start_session, say
):
    policed.FAILURES_LEFT["count"] = 100
    session = start_session(alice, "fetcher")

    run = say(alice, session, "fetch it")

    assert run["status"] == "succeeded"  # the model reads the failure and goes on
    assert len(policed.FETCHES) == 4  # one try and three retries
    feedback = policed.HEARD[1][-1]
    assert "failed after 4 attempts" in feedback["error_message"]
    assert "server busy" in feedback["error_message"]
    assert audit_of("fetch_page") == [("error", 4)]


def test_an_error_not_marked_retryable_is_not_retried(
    catalog, alice, start_session, say
):
    run = say(alice, start_session(alice, "breaker"), "fetch it")

    assert run["status"] == "succeeded"  # the model reads the error and goes on
    assert len(policed.FETCHES) == 1
    assert policed.HEARD[1][-1]["error"] == (
        "fetch_page failed: ValueError: no such page"
    )
    assert audit_of("fetch_page") == [("error", 1)]


# Timeouts.


def test_a_slow_async_tool_is_cut_off_at_its_timeout(
    catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "searcher")

    started = time.monotonic()
    run = say(alice, session, "search")
    elapsed = time.monotonic() - started

    assert run["status"] == "succeeded"
    assert elapsed < 10  # the tool alone would take 30 s
    [response] = responses_in(events_of(alice, session), "slow_search")
    assert response["status"] == "error"
    assert response["response"]["outcome"] == "timeout"
    assert "within 0.3 seconds" in policed.HEARD[1][-1]["error_message"]
    assert audit_of("slow_search") == [("timeout", 1)]


def test_a_slow_sync_tool_is_abandoned_at_its_timeout(
    catalog, alice, start_session, say
):
    started = time.monotonic()
    run = say(alice, start_session(alice, "reporter"), "report")
    elapsed = time.monotonic() - started

    assert run["status"] == "succeeded"
    assert elapsed < 8  # the tool's thread waits 10 s
    assert policed.HEARD[1][-1]["outcome"] == "timeout"
    assert audit_of("slow_report") == [("timeout", 1)]


# Concurrency.


def test_calls_over_the_concurrency_limit_wait_for_a_slot(
    catalog, alice, start_session, say
):
    run = say(alice, start_session(alice, "renderer"), "render")

    assert run["status"] == "succeeded"
    assert policed.RUNNING["peak"] == 1
    assert audit_of("render_video") == [("ok", 1)] * 3


def test_a_call_that_cannot_get_a_slot_in_time_is_refused_as_busy(
    catalog, alice, start_session, say, toolcrib_settings
):
    toolcrib_settings.TOOLCRIB_TOOL_POLICIES = {
        "renderer.render_video": {"queue_wait": 0}
    }

    say(alice, start_session(alice, "renderer"), "render")

    assert policed.RUNNING["peak"] == 1
    assert sorted(audit_of("render_video")) == [("busy", 0), ("busy", 0), ("ok", 1)]
    busy = [r for r in policed.HEARD[1] if r.get("outcome") == "busy"]
    assert len(busy) == 2
    assert "Try again later" in busy[0]["error_message"]


# Admin overrides.


def test_an_override_through_the_api_applies_on_the_next_call(
    catalog, alice, staff, start_session, say, api_for
):
    session = start_session(alice, "fetcher")
    say(alice, session, "fetch")

    response = api_for(staff).patch(
        "/api/tools/fetcher.fetch_page/",
        {"policy": {"rate_limit": [1, 3600]}},
        format="json",
    )
    say(alice, session, "again")
    say(alice, session, "and again")
    api_for(staff).patch(
        "/api/tools/fetcher.fetch_page/", {"policy": {}}, format="json"
    )
    say(alice, session, "once more")

    assert response.status_code == 200, response.content
    assert response.json()["policy"] == {"rate_limit": [1, 3600]}
    assert audit_of("fetch_page") == [
        ("ok", 1),
        ("ok", 1),
        ("rate_limited", 0),
        ("ok", 1),  # the override is gone: the code's policy again
    ]
    assert len(policed.FETCHES) == 3


def test_a_bad_override_is_a_400_with_field_errors(catalog, alice, staff, api_for):
    url = "/api/tools/fetcher.fetch_page/"

    bad = api_for(staff).patch(
        url,
        {"policy": {"timeout": -1, "rate_limit": [0, 10], "colour": "red"}},
        format="json",
    )
    not_an_object = api_for(staff).patch(url, {"policy": "fast"}, format="json")
    not_staff = api_for(alice).patch(url, {"policy": {"retries": 1}}, format="json")

    assert bad.status_code == 400
    assert set(bad.json()["policy"]) == {"timeout", "rate_limit", "colour"}
    assert not_an_object.status_code == 400
    assert "policy" in not_an_object.json()
    assert not_staff.status_code == 403
    assert tool("fetcher.fetch_page").policy == {}


def test_an_override_cannot_widen_access(
    catalog, alice, staff, start_session, say, events_of, api_for
):
    session = start_session(alice, "fetcher")
    api_for(staff).patch(
        "/api/tools/fetcher.fetch_page/",
        {"policy": {"cache_ttl": 3600, "validate_args": False}},
        format="json",
    )
    say(alice, session, "fetch")  # allowed: runs and fills the cache
    grants.grant_tool(target=tool("fetcher.fetch_page"), effect="deny", user=alice)

    say(alice, session, "again")

    assert len(policed.FETCHES) == 1
    denied = responses_in(events_of(alice, session), "fetch_page")[-1]["response"]
    assert "served_from_cache" not in denied
    assert "not available to you" in denied["error_message"]
    assert audit_of("fetch_page") == [("ok", 1), ("denied", 0)]


# The retry policy, set by an admin (the GoAgent RetryPolicy: MaxRetries,
# InitialDelay, MaxDelay, Multiplier, RetryableErrors).


CODE_FETCH_POLICY = {
    "validate_args": True,
    "timeout": None,
    "retries": 3,
    "backoff": 0.01,
    "backoff_max": 0.05,
    "multiplier": 2.0,
    "retry_on": ["ConnectionError"],
    "max_concurrent": None,
    "queue_wait": 10.0,
    "rate_limit": None,
    "cache_ttl": None,
}


def test_a_tool_shows_its_effective_policy_merged_from_code_settings_and_admin(
    catalog, alice, staff, api_for, toolcrib_settings
):
    url = "/api/tools/breaker.fetch_page/"
    from_code = api_for(alice).get(url).json()
    toolcrib_settings.TOOLCRIB_TOOL_POLICIES = {"breaker.fetch_page": {"timeout": 9}}

    patched = api_for(staff).patch(
        url,
        {
            "policy": {
                "retries": 2,
                "backoff": 0.1,
                "backoff_max": 5,
                "multiplier": 3,
                "retry_on": ["ValueError", "httpx.ConnectError"],
            }
        },
        format="json",
    )

    assert from_code["policy"] == {}
    assert from_code["effective_policy"] == CODE_FETCH_POLICY
    assert patched.status_code == 200, patched.content
    assert patched.json()["effective_policy"] == {
        **CODE_FETCH_POLICY,
        "timeout": 9.0,  # settings
        "retries": 2,
        "backoff": 0.1,
        "backoff_max": 5.0,
        "multiplier": 3.0,
        "retry_on": ["ValueError", "httpx.ConnectError"],  # replaces the code's
    }
    listed = api_for(alice).get("/api/tools/?toolset=breaker").json()
    assert "effective_policy" not in listed[0]  # one tool's page only


def test_an_admin_makes_an_error_retryable_by_its_name(
    catalog, alice, staff, start_session, say, api_for
):
    api_for(staff).patch(
        "/api/tools/breaker.fetch_page/",
        {"policy": {"retries": 2, "multiplier": 1, "retry_on": ["ValueError"]}},
        format="json",
    )

    run = say(alice, start_session(alice, "breaker"), "fetch it")

    assert run["status"] == "succeeded"
    assert len(policed.FETCHES) == 3  # ValueError is retried now: one try, two retries
    assert "failed after 3 attempts" in policed.HEARD[1][-1]["error_message"]
    assert audit_of("fetch_page") == [("error", 3)]


def test_an_admins_retry_on_replaces_the_codes(
    catalog, alice, staff, start_session, say, api_for
):
    policed.FAILURES_LEFT["count"] = 1
    api_for(staff).patch(
        "/api/tools/resetter.fetch_page/",
        {"policy": {"retry_on": ["TimeoutError"]}},
        format="json",
    )

    say(alice, start_session(alice, "resetter"), "go")

    # ConnectionError was the code's; the admin's list no longer has it.
    assert audit_of("fetch_page") == [("error", 1)]


def test_retry_waits_grow_by_the_multiplier_up_to_the_longest_wait():
    seed = policies.ToolPolicy(retries=3, backoff=0.1, backoff_max=5, multiplier=2)
    steep = policies.ToolPolicy(backoff=0.1, backoff_max=1, multiplier=3)

    assert [seed.delay(n) for n in (1, 2, 3)] == pytest.approx([0.1, 0.2, 0.4])
    assert [steep.delay(n) for n in (1, 2, 3, 4)] == pytest.approx([0.1, 0.3, 0.9, 1])


def test_retry_on_matches_an_error_by_its_class_or_a_base_class_name():
    by_name = policies.ToolPolicy(retry_on=("OSError", "httpx.TransportError"))

    assert by_name.is_retryable(ConnectionResetError("reset"))  # an OSError
    assert by_name.is_retryable(httpx.ConnectError("refused"))
    assert not by_name.is_retryable(ValueError("no"))
    assert policies.ToolPolicy().is_retryable(policies.Retryable("marked"))


def test_a_bad_retry_policy_is_a_400_naming_the_fields(catalog, staff, api_for):
    bad = api_for(staff).patch(
        "/api/tools/breaker.fetch_page/",
        {"policy": {"multiplier": 0.5, "retry_on": ["not a name!"]}},
        format="json",
    )

    assert bad.status_code == 400
    assert set(bad.json()["policy"]) == {"multiplier", "retry_on"}


def test_the_admin_form_refuses_a_bad_override(catalog):
    form = ToolAdminForm(
        data={"policy": '{"retries": 99}'}, instance=tool("fetcher.fetch_page")
    )

    assert not form.is_valid()
    assert "retries" in str(form.errors["policy"])


# Where a policy comes from.


def test_code_defaults_then_settings_then_the_admin_override(catalog, settings):
    fetch = FunctionTool(policed.fetch_page)
    apolicy = async_to_sync(policies.apolicy_for)

    from_code = apolicy("fetcher.fetch_page", fetch)
    settings.TOOLCRIB_TOOL_POLICIES = {
        "fetcher.fetch_page": {"retries": 1, "timeout": 9, "rate_limit": (2, 60)}
    }
    from_settings = apolicy("fetcher.fetch_page", fetch)
    policies.set_policy(
        tool=tool("fetcher.fetch_page"), policy={"timeout": None, "rate_limit": None}
    )
    from_admin = apolicy("fetcher.fetch_page", fetch)

    assert (from_code.retries, from_code.timeout) == (3, None)
    assert from_code.retry_on == (ConnectionError,)
    assert (from_settings.retries, from_settings.timeout) == (1, 9)
    assert from_settings.rate_limit == (2, 60)
    assert (from_admin.retries, from_admin.timeout) == (1, None)  # null: off
    assert from_admin.rate_limit is None


def test_a_policy_in_code_with_an_unknown_or_bad_field_fails_at_import():
    with pytest.raises(TypeError):
        policies.policy(timout=5)
    with pytest.raises(ValueError):
        policies.policy(retries="many")


def test_backoff_doubles_up_to_its_cap():
    policy = policies.ToolPolicy(retries=5, backoff=0.5, backoff_max=3)

    assert [policy.delay(n) for n in range(1, 6)] == [0.5, 1, 2, 3, 3]
