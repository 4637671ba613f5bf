"""Grants with conditions on the call's arguments (toolsets.grant_conditions): saved
only when they fit the tool, checked at every call, shown in the matrix and audit."""

import pytest

from agents.models import Request
from tests.toolsets import guarded
from tests.toolsets.conftest import tool
from toolsets import grants
from toolsets.grant_conditions import url_arguments
from toolsets.models import Grant, ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

CORP = r"https://([a-z0-9-]+\.)*corp\.example(/.*)?"
NO_PARENT = r"(?!(.*/)?\.\.(/|$)).*"  # no `..` step out of the folder


@pytest.fixture
def grant(api_for, staff):
    """Staff grants over the API; the response's JSON."""

    def post(expect: int = 201, **body):
        response = api_for(staff).post("/api/grants/", body, format="json")
        assert response.status_code == expect, response.content
        return response.json()

    return post


@pytest.fixture
def invoke(api_for):
    def call(user, tool: str, **args):
        return api_for(user).post(
            f"/api/tools/{tool}/invoke/", {"args": args}, format="json"
        )

    return call


def ran() -> list[tuple[str, dict]]:
    return list(guarded.RAN)


def last_call() -> ToolCall:
    return ToolCall.objects.order_by("-started_at", "-id").first()


def test_http_only_to_corporate_hosts_for_group_support(
    guarded_catalog, alice, make_group, grant, invoke
):
    make_group("support", alice)
    shown = grant(
        group="support",
        tool="guard.fetch",
        effect="allow",
        condition={"url": {"pattern": CORP}},
    )

    outside = invoke(alice, "guard.fetch", url="https://evil.example/corp.example")
    denied = last_call()
    inside = invoke(alice, "guard.fetch", url="https://wiki.corp.example/page")

    assert shown["condition"] == {"url": {"pattern": CORP}}
    assert shown["otherwise"] == "deny"
    assert shown["condition_text"] == f"url must match {CORP}"
    assert outside.status_code == 403
    assert f"url must match {CORP}" in outside.json()["detail"]
    assert denied.status == ToolCall.Status.DENIED
    assert denied.access_rule.startswith(f"denied: url must match {CORP}")
    assert "group support on tool guard.fetch" in denied.access_rule
    assert inside.status_code == 200, inside.content
    assert ran() == [("fetch", {"url": "https://wiki.corp.example/page"})]


def test_files_only_under_reports_for_a_user(
    guarded_catalog, alice, bob, grant, invoke
):
    grant(
        user="alice",
        tool="guard.read_file",
        effect="allow",
        condition={"path": {"prefix": "reports/", "pattern": NO_PARENT}},
    )

    mine = invoke(alice, "guard.read_file", path="reports/q1.csv")
    secret = invoke(alice, "guard.read_file", path="secrets/keys.txt")
    escaping = invoke(alice, "guard.read_file", path="reports/../secrets/keys.txt")
    others = invoke(bob, "guard.read_file", path="secrets/keys.txt")

    assert mine.status_code == 200
    assert secret.status_code == 403
    assert "path must start with 'reports/'" in secret.json()["detail"]
    assert escaping.status_code == 403
    # The grant is alice's: bob has the toolset's open policy, unconditioned.
    assert others.status_code == 200
    assert ran() == [
        ("read_file", {"path": "reports/q1.csv"}),
        ("read_file", {"path": "secrets/keys.txt"}),
    ]


def test_sql_only_on_the_orders_and_customers_tables(
    guarded_catalog, alice, make_group, grant, invoke
):
    make_group("analysts", alice)
    grant(
        group="analysts",
        tool="guard.query_table",
        effect="allow",
        condition={"table": {"enum": ["orders", "customers"]}},
    )

    orders = invoke(alice, "guard.query_table", table="orders")
    users = invoke(alice, "guard.query_table", table="users")

    assert orders.status_code == 200
    assert users.status_code == 403
    assert "table must be one of 'orders', 'customers'" in users.json()["detail"]


def test_a_condition_written_in_urls_judges_where_the_url_goes(
    guarded_catalog, alice, grant, invoke
):
    grant(
        user="alice",
        tool="guard.fetch",
        effect="allow",
        condition={"url": {"prefix": "https://wiki.corp.example/team"}},
    )

    up = invoke(alice, "guard.fetch", url="https://wiki.corp.example/team/../admin")
    beside = invoke(alice, "guard.fetch", url="https://wiki.corp.example/teamwork")
    same = invoke(alice, "guard.fetch", url="HTTPS://Wiki.Corp.Example:443/team/a")

    assert up.status_code == 403
    assert "(as a URL: https://wiki.corp.example/admin)" in up.json()["detail"]
    assert beside.status_code == 403
    assert same.status_code == 200, same.content
    assert ran() == [("fetch", {"url": "HTTPS://Wiki.Corp.Example:443/team/a"})]


def test_a_tool_declares_its_url_arguments_by_format_or_metadata():
    schema = {
        "properties": {
            "link": {"type": "string", "format": "uri"},
            "maybe": {"anyOf": [{"type": "string", "format": "URL"}, {"type": "null"}]},
            "target": {"type": "string"},
            "name": {"type": "string"},
        }
    }

    found = url_arguments(schema, {"url_arguments": ["target"]})

    assert found == {"link", "maybe", "target"}


def test_an_argument_left_out_is_outside_its_condition(
    guarded_catalog, alice, grant, invoke
):
    grant(
        user="alice",
        tool="guard.fetch",
        effect="allow",
        condition={"method": {"enum": ["GET"]}},
    )

    left_out = invoke(alice, "guard.fetch", url="https://a.corp.example/")

    assert left_out.status_code == 403
    assert "method must be given" in left_out.json()["detail"]
    assert ran() == []


def test_wire_money_below_an_amount_runs_above_it_waits_for_approval(
    guarded_catalog, alice, bob, make_group, grant, invoke, api_for, start_session, say
):
    managers = make_group("managers", bob)
    make_group("tellers", alice)
    grant(
        group="tellers",
        tool="teller.wire_money",
        effect="allow",
        condition={"amount": {"maximum": 1000}},
        otherwise="approval",
    )
    grants.update_tool(tool=tool("teller.wire_money"), approver_group=managers)

    small = invoke(alice, "teller.wire_money", amount=500, to="acme")
    session = start_session(alice, "teller")
    run = say(alice, session, "pay acme")
    approval = Request.objects.get(kind=Request.Kind.APPROVAL, session_id=session)
    held = last_call()
    decided = api_for(bob).post(
        f"/api/approvals/{approval.id}/decide/?wait=1",
        {"approved": True},
        format="json",
    )

    assert small.status_code == 200
    assert run["status"] == "waiting"
    assert "amount must be at most 1000" in approval.hint
    assert approval.answer_group == "managers"
    assert held.status == ToolCall.Status.AWAITING_APPROVAL
    assert "amount must be at most 1000" in held.access_rule
    assert decided.status_code == 200, decided.content
    assert ran() == [
        ("wire_money", {"amount": 500, "to": "acme"}),
        ("wire_money", {"amount": 5000, "to": "acme"}),
    ]


def test_the_model_is_told_the_condition_and_calls_again_within_it(
    guarded_catalog, alice, make_group, grant, start_session, say, events_of
):
    make_group("support", alice)
    grant(
        group="support",
        tool="guard.fetch",
        effect="allow",
        condition={"url": {"pattern": CORP}},
    )
    session = start_session(alice, "guard")

    run = say(alice, session, "read the wiki")

    responses = [
        r["response"]
        for frame in events_of(alice, session)
        for r in frame["event"]["function_responses"]
    ]
    assert run["status"] == "succeeded"
    assert f"only if url must match {CORP}" in responses[0]["error_message"]
    assert responses[1]["url"] == "https://wiki.corp.example/page"
    assert ran() == [("fetch", {"url": "https://wiki.corp.example/page"})]
    statuses = ToolCall.objects.order_by("started_at", "id").values_list(
        "status", flat=True
    )
    assert list(statuses) == [ToolCall.Status.DENIED, ToolCall.Status.OK]


def test_a_changed_condition_holds_from_the_next_call(
    guarded_catalog, alice, grant, invoke
):
    grant(
        user="alice",
        tool="guard.read_file",
        effect="allow",
        condition={"path": {"prefix": "reports/"}},
    )
    before = invoke(alice, "guard.read_file", path="notes/todo.txt")
    grant(
        expect=200,
        user="alice",
        tool="guard.read_file",
        effect="allow",
        condition={"path": {"prefix": "notes/"}},
    )

    after = invoke(alice, "guard.read_file", path="notes/todo.txt")

    assert (before.status_code, after.status_code) == (403, 200)
    assert Grant.objects.get().condition == {"path": {"prefix": "notes/"}}


def test_the_matrix_and_the_audit_export_show_the_condition(
    guarded_catalog, alice, staff, grant, invoke, api_for
):
    grant(
        user="alice",
        tool="guard.query_table",
        effect="allow",
        condition={"table": {"enum": ["orders"]}},
    )
    invoke(alice, "guard.query_table", table="users")

    matrix = api_for(staff).get(f"/api/access/?user={alice.pk}").json()
    exported = api_for(staff).get("/api/tool-calls/?format=csv").getvalue().decode()

    [row] = [row for row in matrix["toolsets"] if row["name"] == "guard"]
    cells = {cell["full_name"]: cell for cell in row["tools"]}
    assert cells["guard.query_table"]["condition"] == {"table": {"enum": ["orders"]}}
    assert cells["guard.query_table"]["otherwise"] == "deny"
    assert cells["guard.query_table"]["condition_text"] == (
        "table must be one of 'orders'"
    )
    assert cells["guard.fetch"]["condition"] is None
    assert "table must be one of 'orders'" in exported
    assert "denied" in exported


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (
            {"tool": "guard.fetch", "condition": {"host": {"prefix": "a"}}},
            "host: no such argument of guard.fetch (its arguments: url, method).",
        ),
        (
            {"tool": "teller.wire_money", "condition": {"amount": {"prefix": "1"}}},
            "amount: prefix fits a string argument; amount is number.",
        ),
        (
            {"tool": "guard.fetch", "condition": {"url": {"maximum": 3}}},
            "url: maximum fits a number argument; url is string.",
        ),
        (
            {"tool": "guard.fetch", "condition": {"url": {"pattern": "("}}},
            "url: pattern: Not a valid regular expression",
        ),
        (
            {"tool": "guard.fetch", "condition": {"url": {"pattern": "(?u)x"}}},
            "url: pattern: not a valid regular expression (ASCII and UNICODE",
        ),
        (
            {"tool": "guard.fetch", "condition": {"url": {"prefix": "https://a//b"}}},
            "url: prefix: 'https://a//b' is not a URL (it has an empty path segment",
        ),
        (
            {"tool": "guard.fetch", "condition": {"url": {"enum": ["http://u@h/"]}}},
            "url: enum: 'http://u@h/' is not a URL (it has user info",
        ),
        (
            {"tool": "guard.fetch", "condition": {"url": {"glob": "*"}}},
            "url: glob: Extra inputs are not permitted",
        ),
        (
            {"tool": "guard.fetch", "condition": {"url": {}}},
            "url: Give at least one of enum, pattern, prefix, minimum, maximum",
        ),
        (
            {"toolset": "guard", "condition": {"url": {"prefix": "https://"}}},
            "A condition names a tool's arguments",
        ),
        (
            {
                "tool": "guard.fetch",
                "effect": "deny",
                "condition": {"url": {"prefix": "https://"}},
            },
            "Only an allow carries a condition.",
        ),
    ],
)
def test_a_condition_that_does_not_fit_its_tool_is_refused(
    guarded_catalog, grant, body, problem
):
    refused = grant(expect=400, **{"user": "root", "effect": "allow", **body})

    assert any(problem in text for text in refused["condition"]), refused
    assert not Grant.objects.exists()
