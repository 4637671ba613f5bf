"""ADK's optional modules without their extras: tried once a process, not every step."""

import importlib.abc
import importlib.util
import sys

import pytest
from google.adk.agents import LlmAgent
from google.adk.workflow.utils._workflow_graph_utils import build_node

from agents.adk.absent_extras import OPTIONAL_MODULES, mark_absent

A2A = "google.adk.agents.remote_a2a_agent"


class Searches(importlib.abc.MetaPathFinder):
    """Every module name Python looks for on disk, found by the finders after it."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(self, fullname, path, target=None):
        self.names.append(fullname)
        return None


@pytest.fixture
def searches(monkeypatch):
    spy = Searches()
    monkeypatch.setattr(sys, "meta_path", [spy, *sys.meta_path])
    return spy


@pytest.fixture
def a2a_not_tried(monkeypatch):
    """As a process starts: ADK's A2A agent not imported, nor marked absent."""
    monkeypatch.delitem(sys.modules, A2A, raising=False)


def agent() -> LlmAgent:
    return LlmAgent(name="helper", model="offline/test")


without_a2a = pytest.mark.skipif(
    importlib.util.find_spec("a2a") is not None, reason="the a2a extra is installed"
)


@without_a2a
def test_adk_building_a_node_looks_for_its_a2a_agent_once(a2a_not_tried, searches):
    assert A2A in OPTIONAL_MODULES
    assert mark_absent() == [A2A]
    searches.names.clear()

    for _ in range(3):
        build_node(agent())

    assert A2A not in searches.names
    with pytest.raises(ImportError):
        from google.adk.agents.remote_a2a_agent import RemoteA2aAgent  # noqa: F401


@without_a2a
def test_unmarked_adk_looks_for_it_every_time(a2a_not_tried, searches):
    """What the mark saves: ADK's own import, tried again at every node it builds."""
    for _ in range(3):
        build_node(agent())

    assert searches.names.count(A2A) == 3


def test_a_module_that_imports_is_left_alone(monkeypatch):
    monkeypatch.delitem(sys.modules, "json.tool", raising=False)

    assert mark_absent(["json.tool"]) == []
    assert sys.modules["json.tool"] is not None


@without_a2a
def test_the_running_process_has_it_marked():
    """Django's start (agents.apps) marks it: every turn's steps skip the search."""
    assert A2A in sys.modules
    assert sys.modules[A2A] is None
