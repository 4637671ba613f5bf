"""The governance pipeline's contract: each check that refuses a call writes one
audit row for it, with that check's own status.

The checks run in this order on every call (toolsets.governance.checks.CHECKS):
access, activation, availability (not offered at that step, then the tool's gates),
the catalog's approval gate, policy (validation, the rate limit and the cache before
the run; timeout, slots and retries around it). A call the first refusing check
stops leaves exactly one ToolCall row, whatever comes after it. A call that does not
run though no check refused it says why too: ADK's own confirmation gate holds it
(`awaiting_approval`), or the agent's own before_tool_callback answers it
(`refused`); neither is an `error`. Each case drives a real turn over the API with a
scripted offline model, then reads the refused call's id from the stored events.
"""

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from demo import inventory, records
from tests.toolsets import policed, tools
from tests.toolsets.conftest import tool, toolset
from toolsets import grants
from toolsets.governance import execution, policies
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

PIPELINE_AGENTS = [
    "tests.toolsets.activated.retirer",
    "tests.toolsets.exposed.hasty",
    "tests.toolsets.exposed.reader",
    "tests.toolsets.exposed.sneaky",
    "tests.toolsets.policed.alarmist",
    "tests.toolsets.policed.fetcher",
    "tests.toolsets.policed.searcher",
    "tests.toolsets.policed.renderer",
    "tests.toolsets.scripted.confirmer",
    "tests.toolsets.scripted.guarded",
]


@dataclass(frozen=True)
class Refusal:
    """A scenario: who sets what up, which agent is driven, what the audit says."""

    agent: str
    tool_name: str
    status: str
    refused_calls: int = 1
    attempts: int = 0
    turns: int = 1
    arrange: Callable[..., None] = field(default=lambda user, settings: None)


def deny_launch(user, settings) -> None:
    grants.grant_tool(target=tool("rocketeer.launch_rocket"), effect="deny", user=user)


def grant_only(user, settings) -> None:
    grants.update_toolset(toolset=toolset("rocketeer"), default_policy="granted_only")


def switch_off(user, settings) -> None:
    grants.grant_tool(target=tool("rocketeer.launch_rocket"), effect="allow", user=user)
    grants.update_toolset(toolset=toolset("rocketeer"), enabled=False)


def force_read_gauge(user, settings) -> None:
    settings.TOOLCRIB_FORCED_FIRST_TOOL = {"rocketeer": "read_gauge"}


def mark_launch_for_approval(user, settings) -> None:
    grants.update_tool(tool=tool("rocketeer.launch_rocket"), requires_approval=True)


def limit_get_record(user, settings) -> None:
    settings.TOOLCRIB_TOOL_POLICIES = {"reader.get_record": {"rate_limit": (1, 3600)}}


def no_queue_for_renders(user, settings) -> None:
    settings.TOOLCRIB_TOOL_POLICIES = {"renderer.render_video": {"queue_wait": 0}}


def fail_every_fetch(user, settings) -> None:
    policed.FAILURES_LEFT["count"] = 100


REFUSALS = {
    "access: a deny grant": Refusal(
        "rocketeer", "launch_rocket", "denied", arrange=deny_launch
    ),
    "access: granted_only without a grant": Refusal(
        "rocketeer", "launch_rocket", "denied", arrange=grant_only
    ),
    "access: toolset switched off (kill switch)": Refusal(
        "rocketeer", "launch_rocket", "denied", arrange=switch_off
    ),
    "activation: toolset deactivated in the session": Refusal(
        "retirer", "find_item", "inactive"
    ),
    "availability: not offered while hidden (progressive exposure)": Refusal(
        "hasty", "update_record", "not_offered"
    ),
    "availability: not the forced first call": Refusal(
        "rocketeer", "launch_rocket", "not_offered", arrange=force_read_gauge
    ),
    "availability: a gate": Refusal("sneaky", "update_record", "gated"),
    "approval gate: the catalog marks the tool": Refusal(
        "rocketeer",
        "launch_rocket",
        "awaiting_approval",
        arrange=mark_launch_for_approval,
    ),
    "policy: the rate limit": Refusal(
        "reader", "get_record", "rate_limited", turns=2, arrange=limit_get_record
    ),
    "policy: invalid arguments": Refusal("alarmist", "set_alarm", "invalid_args"),
    "policy: the timeout": Refusal("searcher", "slow_search", "timeout", attempts=1),
    "policy: no concurrency slot in time": Refusal(
        "renderer",
        "render_video",
        "busy",
        refused_calls=2,
        arrange=no_queue_for_renders,
    ),
    "policy: retries run out": Refusal(
        "fetcher", "fetch_page", "error", attempts=4, arrange=fail_every_fetch
    ),
    "not run: ADK's confirmation gate holds it": Refusal(
        "confirmer", "launch_rocket", "awaiting_approval"
    ),
    "not run: the agent's own before_tool_callback": Refusal(
        "guarded", "launch_rocket", "refused"
    ),
}


@pytest.fixture(autouse=True)
def _fresh(toolcrib_settings, monkeypatch):
    # Counters, cached results and slots of another test (or run) are not ours.
    fresh = uuid.uuid4().hex
    monkeypatch.setattr(policies, "RATE_KEY", f"test:rate:{fresh}")
    monkeypatch.setattr(policies, "RESULT_KEY", f"test:result:{fresh}")
    monkeypatch.setattr(execution, "SLOT_KEY", f"test:slot:{fresh}")
    toolcrib_settings.TOOLCRIB_AGENTS = [
        *toolcrib_settings.TOOLCRIB_AGENTS,
        *PIPELINE_AGENTS,
    ]
    toolcrib_settings.TOOLCRIB_TOOL_POLICIES = {}
    toolcrib_settings.TOOLCRIB_FORCED_FIRST_TOOL = {}
    policed.FAILURES_LEFT["count"] = 0
    saved_records = {key: dict(value) for key, value in records.RECORDS.items()}
    saved_stock = dict(inventory.STOCK)
    yield
    records.RECORDS.clear()
    records.RECORDS.update(saved_records)
    inventory.STOCK.clear()
    inventory.STOCK.update(saved_stock)
    policed.RUNNING.update(now=0, peak=0)


def refused_call_ids(frames: list[dict], name: str) -> list[str]:
    """The ids of the calls of `name` the model was answered with an error."""
    return [
        response["id"]
        for frame in frames
        for response in frame["event"]["function_responses"]
        if response["name"] == name and response["status"] == "error"
    ]


@pytest.mark.parametrize("case", REFUSALS.values(), ids=REFUSALS.keys())
def test_each_refusing_check_writes_one_audit_row_with_its_status(
    case, catalog, alice, toolcrib_settings, start_session, say, events_of
):
    case.arrange(alice, toolcrib_settings)
    session = start_session(alice, case.agent)

    for _ in range(case.turns):
        say(alice, session, "go")

    refused = refused_call_ids(events_of(alice, session), case.tool_name)
    assert len(refused) == case.refused_calls
    audit = {
        call_id: list(
            ToolCall.objects.filter(call_id=call_id).values_list("status", "attempts")
        )
        for call_id in refused
    }
    assert audit == {call_id: [(case.status, case.attempts)] for call_id in refused}


@pytest.mark.parametrize(
    ("approved", "audited", "launches"),
    [
        (True, [("approved", 0, "alice"), ("ok", 1, "alice")], ["moon"]),
        (False, [("rejected", 0, "alice")], []),
    ],
    ids=["approved", "rejected"],
)
def test_a_held_call_is_audited_as_its_decision_then_as_it_ran(
    approved, audited, launches, catalog, alice, api_for, start_session, say, events_of
):
    mark_launch_for_approval(alice, None)
    session = start_session(alice, "rocketeer")
    say(alice, session, "go")
    client = api_for(alice)
    [pending] = client.get("/api/approvals/?status=pending").json()

    decided = client.post(
        f"/api/approvals/{pending['id']}/decide/?wait=1",
        {"approved": approved},
        format="json",
    )

    assert decided.status_code == 200, decided.content
    assert tools.LAUNCHES == launches
    [call_id] = set(refused_call_ids(events_of(alice, session), "launch_rocket"))
    audit = ToolCall.objects.filter(call_id=call_id).order_by("started_at", "id")
    assert (
        list(audit.values_list("status", "attempts", "decided_by__username")) == audited
    )
