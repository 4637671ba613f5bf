"""An agent's model choices are a builder field like the others: saved as a version,
diffed and rolled back; an unknown model is a 400 naming it."""

import pytest

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(make_user, api_for):
    return api_for(make_user("root", is_staff=True))


def test_model_choices_are_versioned_and_rolled_back(admin):
    body = {"name": "helper", "instruction": "Be brief.", "model": "offline/demo"}
    assert admin.post("/api/agents/", body, format="json").status_code == 201

    edited = admin.patch(
        "/api/agents/helper/",
        {"model_choices": ["openai/gpt-4o-mini", "offline/demo", "openai/gpt-4o-mini"]},
        format="json",
    )

    assert edited.status_code == 200, edited.content
    assert edited.json()["model_choices"] == ["openai/gpt-4o-mini", "offline/demo"]
    diff = admin.get("/api/agents/helper/versions/diff/?a=1&b=2").json()
    assert diff["changes"] == [
        {
            "field": "model_choices",
            "before": [],
            "after": ["openai/gpt-4o-mini", "offline/demo"],
        }
    ]
    back = admin.post("/api/agents/helper/rollback/", {"version": 1}, format="json")
    assert back.json()["model_choices"] == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            ["nolab/llama3"],
            "No model connection is named nolab. Staff add connections on the Models page.",
        ),
        (["openai/*"], "Name one model."),
        ("openai/gpt-4o", "A list of at most 20 model names."),
        ([""], "A list of at most 20 model names."),
    ],
)
def test_an_unknown_model_choice_is_a_400_naming_it(admin, value, message):
    body = {"name": "helper", "instruction": "Be brief.", "model_choices": value}

    response = admin.post("/api/agents/", body, format="json")

    assert response.status_code == 400
    assert message in response.json()["model_choices"]
