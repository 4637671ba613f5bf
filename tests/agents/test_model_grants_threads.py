"""Model grants are decided from many threads at once while staff change them:
each thread decides by whole grants, reads a user's groups once a version, and
after a change decides only by the new grants."""

import pytest
from django.contrib.auth.models import Group
from django.db import connection

from agents import model_grants
from agents.model_grants import explain, grant_model, revoke_grant
from tests.threads import at_once

pytestmark = pytest.mark.django_db(transaction=True)

GPT = "openai/gpt-4o-mini"


@pytest.fixture(autouse=True)
def _fresh():
    model_grants.forget()
    yield
    model_grants.forget()


def test_many_threads_decide_by_the_change_and_never_by_stale_grants(make_user):
    users = [make_user(f"u{i}") for i in range(8)]
    team = Group.objects.create(name="team")
    for user in users[::2]:
        user.groups.add(team)
    deny, _ = grant_model(model=GPT, effect="deny", group=team)

    def allowed(i: int) -> bool:
        try:
            return explain(user_id=users[i].pk, model=GPT).allowed
        finally:
            connection.close()  # each thread's own, back to the pool

    assert at_once(allowed, threads=8) == [i % 2 == 1 for i in range(8)]

    revoke_grant(grant=deny)

    assert at_once(allowed, threads=8) == [True] * 8

    grant_model(model="openai/*", effect="deny", group=team)

    assert at_once(allowed, threads=8) == [i % 2 == 1 for i in range(8)]
    # Each user's groups were read once and kept whole in the one snapshot.
    kept = model_grants._current
    assert set(kept.groups) == {u.pk for u in users}
    assert kept.groups[users[0].pk] == frozenset({team.pk})


def test_many_threads_deciding_while_another_changes_grants_see_a_whole_answer(
    alice,
):
    def decide_or_change(i: int) -> str:
        try:
            return change_or_decide(i)
        finally:
            connection.close()

    def change_or_decide(i: int) -> str:
        if i == 0:
            for _ in range(20):
                grant, _ = grant_model(model=GPT, effect="deny", user=alice)
                revoke_grant(grant=grant)
            return "changed"
        rules = {explain(user_id=alice.pk, model=GPT).rule for _ in range(20)}
        # Either the default or the deny, never a half-loaded snapshot's error.
        assert all(
            rule.startswith(("models are open", "denied by grant #")) for rule in rules
        )
        return "decided"

    assert at_once(decide_or_change, threads=8) == ["changed"] + ["decided"] * 7
    assert explain(user_id=alice.pk, model=GPT).allowed
