"""Decide many at once (issue 45, item 4): one comment, each request decided and
audited on its own, the answer saying per id what happened."""

import pytest

from agents.models import Request
from tests.toolsets import tools
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

LAUNCHER = "rocketeer.launch_rocket"


@pytest.fixture
def controlled(catalog, bob, make_group, api_for, staff):
    make_group("launch-control", bob)
    marked = api_for(staff).patch(
        f"/api/tools/{LAUNCHER}/",
        {"requires_approval": True, "approver_group": "launch-control"},
        format="json",
    )
    assert marked.status_code == 200, marked.content


@pytest.fixture
def launches(controlled, start_session, say):
    """Held launches of a user, each in a session of its own."""

    def launch(user, count: int) -> list[Request]:
        held = []
        for _ in range(count):
            session = start_session(user, "rocketeer")
            assert say(user, session, "go")["status"] == "waiting"
            held.append(Request.objects.get(session_id=session, kind="approval"))
        return held

    return launch


def decide(api_for, user, body: dict):
    return api_for(user).post("/api/requests/decide/", body, format="json")


def test_many_are_approved_with_one_comment(launches, alice, bob, api_for):
    held = launches(alice, 3)

    answered = decide(
        api_for,
        bob,
        {"ids": [r.pk for r in held], "approved": True, "comment": "batch ok"},
    )

    assert answered.status_code == 200, answered.content
    assert [(r["id"], r["outcome"], r["status"]) for r in answered.json()] == [
        (r.pk, "decided", "approved") for r in held
    ]
    assert all(r["run"] for r in answered.json())
    assert (
        sorted(Request.objects.values_list("status", "comment", "answered_by"))
        == [("approved", "batch ok", bob.pk)] * 3
    )


def test_each_is_audited_on_its_own(launches, alice, bob, api_for):
    held = launches(alice, 2)

    decide(api_for, bob, {"ids": [r.pk for r in held], "approved": False})

    rows = ToolCall.objects.filter(status="rejected")
    assert sorted(rows.values_list("call_id", flat=True)) == sorted(
        r.tool_call_id for r in held
    )
    assert {row.decided_by_id for row in rows} == {bob.pk}
    assert tools.LAUNCHES == []


def test_mixed_results_say_what_happened_to_each(
    launches, alice, bob, api_for, make_user
):
    carol = make_user("carol")
    first, second = launches(alice, 2)
    # carol's launch, decided by a group bob is not in; and an id nobody has.
    decide(api_for, bob, {"ids": [first.pk], "approved": True})
    [theirs] = launches(carol, 1)
    theirs.answer_group = "another-group"
    theirs.save(update_fields=["answer_group"])

    answered = decide(
        api_for,
        bob,
        {
            "ids": [first.pk, second.pk, theirs.pk, 999999, second.pk],
            "approved": False,
            "comment": "not now",
        },
    )

    assert answered.status_code == 200, answered.content
    outcomes = [(r["id"], r["outcome"], r["code"]) for r in answered.json()]
    assert outcomes == [
        (first.pk, "refused", "already_decided"),
        (second.pk, "decided", None),
        (theirs.pk, "refused", "not_found"),
        (999999, "refused", "not_found"),
    ]
    first.refresh_from_db()
    theirs.refresh_from_db()
    assert (first.status, first.comment) == ("approved", "")
    assert theirs.status == "pending"
    assert tools.LAUNCHES == ["moon"]


def test_the_requester_is_refused_where_a_group_decides(launches, alice, api_for):
    [held] = launches(alice, 1)

    answered = decide(api_for, alice, {"ids": [held.pk], "approved": True})

    assert answered.json()[0]["outcome"] == "refused"
    assert answered.json()[0]["code"] == "forbidden"
    held.refresh_from_db()
    assert held.status == "pending"


@pytest.mark.parametrize(
    "body, field",
    [
        ({"ids": [], "approved": True}, "ids"),
        ({"ids": list(range(1, 102)), "approved": True}, "ids"),
        ({"ids": ["1"], "approved": True}, "ids"),
        ({"ids": [0], "approved": True}, "ids"),
        ({"ids": [1], "approved": "yes"}, "approved"),
        ({"ids": [1]}, "approved"),
        ({"ids": [1], "approved": True, "arguments": {}}, "arguments"),
        ({"ids": [1], "approved": True, "comment": "x" * 2001}, "comment"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    launches, alice, bob, api_for, body, field
):
    [held] = launches(alice, 1)

    refused = decide(api_for, bob, body)

    assert refused.status_code == 400
    assert field in refused.json()
    held.refresh_from_db()
    assert held.status == "pending"


def test_the_inbox_filters_by_tool_and_kind(launches, alice, bob, api_for):
    held = launches(alice, 2)

    by_tool = api_for(bob).get("/api/requests/?tool=launch_rocket").json()
    other = api_for(bob).get("/api/requests/?tool=read_gauge").json()
    calls = api_for(bob).get("/api/requests/?kind=call").json()
    bad = api_for(bob).get("/api/requests/?kind=wish")

    assert sorted(r["id"] for r in by_tool) == sorted(r.pk for r in held)
    assert (other, calls) == ([], [])
    assert bad.status_code == 400
