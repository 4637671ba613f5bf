"""Budgets in money and per model: a turn is refused once its user's spending
(at the models' prices) reaches the day's limit, or once the model a budget is
for used its tokens; the refusal names the budget."""

from decimal import Decimal

import pytest
from google.adk.agents import LlmAgent

from agents.adk.offline import OfflineLlm
from agents.connections import save_connection, save_model
from agents.model_table import forget
from agents.models import Budget
from tests.agents import fake_openai as fake

pytestmark = pytest.mark.django_db(transaction=True)

MODEL_NAME = f"lab/{fake.MODEL}"


@pytest.fixture
def lab(settings, db):
    """A connection to the local server, its model priced 2 and 8 a million."""
    forget()
    settings.TOOLCRIB_MODEL_RETRIES = 0
    settings.TOOLCRIB_MODEL_TIMEOUT = 5
    settings.TOOLCRIB_PROVIDER_ENV = {}
    settings.TOOLCRIB_DEFAULT_MODEL = MODEL_NAME
    LlmAgent.set_default_model(MODEL_NAME)
    with fake.FakeOpenAI() as server:
        connection = save_connection(
            connection=None,
            fields={"name": "lab", "kind": "openai_compatible", "base_url": server.url},
            key=fake.API_KEY,
        )
        save_model(
            owner=connection,
            model=fake.MODEL,
            input_price=Decimal(2),
            output_price=Decimal(8),
        )
        yield server
    LlmAgent.set_default_model(OfflineLlm(model="offline/demo"))
    forget()


def test_a_money_budget_stops_the_turn_after_the_one_that_spent_it(
    alice, demo_agents, start_session, say, api_for, lab
):
    Budget.objects.create(user=alice, daily_cost=Decimal("0.005"))
    lab.play(fake.say("An answer that costs 0.006.", usage=(1000, 500)))
    session = start_session(alice, "weather_sentiment")

    first = say(alice, session, "hello")
    second = say(alice, session, "hello again")

    assert first["status"] == "succeeded", first["error"]
    assert second["status"] == "failed"
    assert second["error"] == (
        "Your daily spending budget (0.005) is used up: 0.006 spent today. "
        "It renews at midnight; ask an administrator for more."
    )
    assert len(lab.requests) == 1
    (budget,) = api_for(alice).get("/api/budgets/").json()
    assert budget["spent_today"] == "0.006000"
    assert budget["remaining_cost_today"] == "0.000000"


def test_a_budget_for_one_model_holds_only_that_model(
    alice, demo_agents, start_session, say, lab
):
    Budget.objects.create(user=alice, daily_tokens=1, model="lab/another-model")
    Budget.objects.create(user=alice, daily_tokens=100, model=MODEL_NAME)
    lab.play(fake.say("Counted.", usage=(90, 20)))
    session = start_session(alice, "weather_sentiment")

    first = say(alice, session, "hello")
    second = say(alice, session, "hello again")

    assert first["status"] == "succeeded", first["error"]
    assert second["status"] == "failed"
    assert second["error"].startswith(
        f"Your daily token budget for {MODEL_NAME} (100) is used up: 110 tokens"
    )


def test_staff_set_a_money_budget_for_a_group_and_a_model(make_user, api_for, lab):
    from django.contrib.auth.models import Group

    Group.objects.create(name="interns")
    api = api_for(make_user("root", is_staff=True))

    made = api.post(
        "/api/budgets/",
        {"group": "interns", "daily_cost": "5", "model": MODEL_NAME},
        format="json",
    )
    again = api.post(
        "/api/budgets/",
        {"group": "interns", "daily_tokens": 10, "model": MODEL_NAME},
        format="json",
    )
    other_model = api.post(
        "/api/budgets/", {"group": "interns", "daily_tokens": 10}, format="json"
    )
    no_limit = api.post("/api/budgets/", {"group": "interns", "model": "lab/y"})
    negative = api.post(
        "/api/budgets/", {"group": "interns", "daily_cost": "-1", "model": "lab/z"}
    )
    no_connection = api.post(
        "/api/budgets/",
        {"group": "interns", "daily_tokens": 5, "model": "ghost/x"},
        format="json",
    )

    assert made.status_code == 201, made.json()
    assert made.json()["daily_cost"] == "5.000000"
    assert made.json()["daily_tokens"] is None
    assert again.status_code == 400
    assert again.json()["group"] == [
        f"This group already has a budget for {MODEL_NAME}."
    ]
    assert other_model.status_code == 201
    assert no_limit.status_code == 400 and "daily_tokens" in no_limit.json()
    assert negative.status_code == 400 and "daily_cost" in negative.json()
    assert no_connection.status_code == 400
    assert no_connection.json() == {
        "model": [
            "No model connection is named ghost. "
            "Staff add connections on the Models page."
        ]
    }
