"""GET /api/retention/: staff read what retention keeps and what its next run
would remove; nobody else reads it; reading it removes nothing."""

import pytest
from rest_framework.test import APIClient

from agents.models import Session
from tests.agents.retention.helpers import session_of

pytestmark = pytest.mark.django_db
URL = "/api/retention/"


@pytest.fixture
def staff(make_user):
    return make_user("staff", is_staff=True)


def test_staff_read_what_the_next_run_would_remove(
    settings, staff, alice, api_for, demo_agents
):
    settings.TOOLCRIB_RETENTION_DAYS = 30
    old = session_of(alice, demo_agents["weather_sentiment"], days_idle=40, events=2)
    session_of(alice, demo_agents["bank"], days_idle=40)

    response = api_for(staff).get(URL, {"agent": "weather_sentiment"})

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["sessions_days"] == 30 and body["audit_days"] == 0
    sessions = [row for row in body["would_remove"] if row["kind"] == "sessions"]
    assert sessions == [
        {
            "kind": "sessions",
            "agent": "weather_sentiment",
            "rows": 1,
            "oldest": old.updated_at.isoformat().replace("+00:00", "Z"),
        }
    ]
    assert Session.objects.count() == 2


def test_an_unknown_agent_is_400_with_a_field_error(staff, api_for, demo_agents):
    response = api_for(staff).get(URL, {"agent": "nobody"})

    assert response.status_code == 400
    assert "agent" in response.json()


def test_nobody_but_staff_reads_it(alice, api_for):
    assert api_for(alice).get(URL).status_code == 403
    assert APIClient().get(URL).status_code == 401
