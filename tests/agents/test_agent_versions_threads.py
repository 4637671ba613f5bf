"""Saves of one agent at once, as a worker's threads serve them: each is a version
of its own number, none lost, none twice."""

import pytest
from django.db import close_old_connections

from agents import agent_versions
from agents.changes import acting_as
from agents.models import AgentSpec, AgentVersion
from tests.threads import at_once

pytestmark = pytest.mark.django_db(transaction=True)

SAVES = 6


def test_saves_at_once_take_distinct_numbers(make_user):
    staff = make_user("root", is_staff=True)
    agent = AgentSpec.objects.create(name="helper", model="offline/demo")

    def save(index: int) -> int:
        try:
            with acting_as(staff):
                return agent_versions.record_version(
                    agent=agent, user=staff, note=f"save {index}"
                ).number
        finally:
            close_old_connections()

    numbers = at_once(save, threads=SAVES)

    assert sorted(numbers) == list(range(1, SAVES + 1))
    assert AgentVersion.objects.filter(agent=agent).count() == SAVES
