"""Eval runs belong to who may read their set: another user can't start a run on
a set she can't read, nor see or cancel its runs (404); a non-staff can't run as
another user; staff may."""

import pytest
from django.contrib.auth.models import Group

from evals.models import EvalRun
from evals.running import dispatch
from tests.evals.conftest import make_weather_set

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def weather_set(alice):
    return make_weather_set(alice)


@pytest.fixture
def alices_run(alice, weather_set):
    return EvalRun.objects.create(
        eval_set=weather_set,
        agent_name="weather_sentiment",
        as_user=alice,
        status=EvalRun.Status.SUCCEEDED,
    )


def test_another_user_cannot_start_see_or_cancel(
    bob, api_for, demo_agents, weather_set, alices_run
):
    client = api_for(bob)

    started = client.post(
        f"/api/evalsets/{weather_set.pk}/runs/",
        {"agent": "weather_sentiment"},
        format="json",
    )
    history = client.get(f"/api/evalsets/{weather_set.pk}/runs/")
    detail = client.get(f"/api/evalset-runs/{alices_run.pk}/")
    cancel = client.post(f"/api/evalset-runs/{alices_run.pk}/cancel/")

    assert [r.status_code for r in (started, history, detail, cancel)] == [404] * 4
    assert EvalRun.objects.count() == 1


def test_a_group_the_set_is_shared_to_reads_its_runs(
    bob, api_for, weather_set, alices_run
):
    team = Group.objects.create(name="team")
    bob.groups.add(team)
    weather_set.groups.add(team)

    detail = api_for(bob).get(f"/api/evalset-runs/{alices_run.pk}/")

    assert detail.status_code == 200


def test_only_staff_run_as_another_user(
    alice, bob, make_user, api_for, demo_agents, weather_set, monkeypatch
):
    monkeypatch.setattr(dispatch, "submit", lambda **_: None)  # not run here
    url = f"/api/evalsets/{weather_set.pk}/runs/"
    body = {"agent": "weather_sentiment", "as_user": "bob"}

    refused = api_for(alice).post(url, body, format="json")
    staff = make_user(is_staff=True)
    allowed = api_for(staff).post(url, body, format="json")

    assert refused.status_code == 400 and "as_user" in refused.json()
    assert allowed.status_code == 201, allowed.content
    assert allowed.json()["as_user"] == "bob"
    assert EvalRun.objects.get(pk=allowed.json()["id"]).as_user == bob
