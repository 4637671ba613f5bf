"""Built-in toolsets under governance: real turns over the REST API, with the plugin."""

import pytest

from agents.adk.builder import sync_code_agents
from tests.toolsets.builtin.sandboxes import require_sandbox
from toolsets import grants
from toolsets.catalog import sync_catalog
from toolsets.models import ToolCall, Toolset

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def toolbox(settings, tmp_path):
    settings.TOOLCRIB_AGENTS = ["tests.toolsets.builtin.agents.toolbox"]
    settings.TOOLCRIB_BUILTIN_SHELL_COMMANDS = ["echo"]
    settings.TOOLCRIB_BUILTIN_SHELL_WORKDIR = str(tmp_path)
    sync_code_agents()
    sync_catalog()
    return "toolbox"


def responses_of(frames: list[dict]) -> dict[str, dict]:
    return {
        r["name"]: r["response"]
        for f in frames
        for r in f["event"]["function_responses"]
    }


def test_builtin_tools_run_and_are_audited_under_their_catalog_names(
    toolbox, alice, start_session, say, events_of
):
    session = start_session(alice, toolbox)
    say(alice, session, "go")

    responses = responses_of(events_of(alice, session))
    assert responses["calculate"]["result"] == 42
    assert responses["run_command"]["status"] == "error"  # shell is disabled
    audit = dict(ToolCall.objects.values_list("tool_full_name", "status"))
    assert audit == {"math.calculate": "ok", "shell.run_command": "denied"}


def test_an_enabled_and_granted_shell_runs_an_allowed_command(
    toolbox, alice, start_session, say, events_of
):
    require_sandbox()
    shell = Toolset.objects.get(name="shell")
    grants.update_toolset(toolset=shell, enabled=True, default_policy="granted_only")
    grants.grant_tool(target=shell, effect="allow", user=alice)
    session = start_session(alice, toolbox)
    say(alice, session, "go")

    responses = responses_of(events_of(alice, session))
    assert responses["run_command"]["output"] == "hi\n"
