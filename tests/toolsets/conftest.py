import pytest
from django.contrib.auth.models import Group

from agents.adk.builder import sync_code_agents
from tests.toolsets import gauges, guarded, scripted, tools
from toolsets.catalog import sync_catalog
from toolsets.models import Tool, Toolset

TEST_TOOLSETS = {
    "rockets": "tests.toolsets.tools",
    "launcher": "tests.toolsets.tools.launch_rocket",
    "gauges": "tests.toolsets.gauges.gauges",
    "flaky": "tests.toolsets.gauges.flaky",
}
TEST_AGENTS = [
    "tests.toolsets.scripted.rocketeer",
    "tests.toolsets.scripted.revoker",
    "tests.toolsets.scripted.juggler",
    "tests.toolsets.scripted.staller",
]


@pytest.fixture(autouse=True)
def _fresh_access():
    """What an earlier test left in this process (its access decisions are forgotten
    for every test: tests/conftest.py)."""
    tools.LAUNCHES.clear()
    scripted.OFFERED.clear()
    gauges.FlakyToolset.down = False
    yield


@pytest.fixture
def toolcrib_settings(settings):
    settings.TOOLCRIB_TOOLSETS = dict(TEST_TOOLSETS)
    settings.TOOLCRIB_AGENTS = [*settings.TOOLCRIB_AGENTS, *TEST_AGENTS]
    return settings


@pytest.fixture
def catalog(db, toolcrib_settings):
    """Demo and test agents as rows, and the catalog synced from them."""
    sync_code_agents()
    sync_catalog()
    return {tool.full_name: tool for tool in Tool.objects.select_related("toolset")}


@pytest.fixture
def guarded_catalog(catalog, toolcrib_settings):
    """The catalog with tests.toolsets.guarded's agents, whose tools grants narrow
    by conditions."""
    toolcrib_settings.TOOLCRIB_AGENTS = [
        *toolcrib_settings.TOOLCRIB_AGENTS,
        "tests.toolsets.guarded.guard",
        "tests.toolsets.guarded.teller",
    ]
    guarded.RAN.clear()
    sync_code_agents()
    sync_catalog()


@pytest.fixture
def make_group(db):
    def make(name: str, *users) -> Group:
        group = Group.objects.create(name=name)
        group.user_set.add(*users)
        return group

    return make


@pytest.fixture
def staff(make_user):
    return make_user("root", is_staff=True)


def toolset(name: str) -> Toolset:
    return Toolset.objects.get(name=name)


def tool(full_name: str) -> Tool:
    return Tool.objects.select_related("toolset").get(full_name=full_name)
