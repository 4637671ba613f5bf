"""toolsets.toolset_names under a worker's threads: the names it works out from settings
once a process (registered toolsets, code agents' roots, toolset classes' names)
are the same for every turn that asks first at once."""

import pytest

from tests.threads import at_once
from toolsets import toolset_names

pytestmark = pytest.mark.django_db  # tests/toolsets/conftest.py needs the db


def test_turns_asking_first_at_once_get_the_names_worked_out_alone(
    monkeypatch, toolcrib_settings
):
    for name in ("_registered", "_code_roots", "_class_names"):
        monkeypatch.setattr(toolset_names, name, None)
    alone = (
        toolset_names.registered_names(),
        toolset_names.code_root_names(),
        toolset_names.class_toolset_names(),
    )
    for name in ("_registered", "_code_roots", "_class_names"):
        monkeypatch.setattr(toolset_names, name, None)

    found = at_once(
        lambda i: (
            toolset_names.registered_names(),
            toolset_names.code_root_names(),
            toolset_names.class_toolset_names(),
        )
    )

    assert found == [alone] * 8


def test_turns_mapping_a_code_agents_tools_first_at_once_agree_on_its_toolset(
    monkeypatch, toolcrib_settings
):
    # toolsets.bindings keeps each code agent's plain-tool toolset once a process.
    from toolsets import bindings

    monkeypatch.setattr(bindings, "_code_agent_toolsets", {})
    path = toolcrib_settings.TOOLCRIB_AGENTS[0]
    owner = path.rsplit(".", 1)[-1]
    root = bindings.load_code_agent(path)

    found = at_once(lambda i: bindings.code_agent_toolset(owner, root))

    assert found == [bindings.agent_toolset(owner, root)] * 8
    assert found[0].description.startswith(f"Tools of the {owner} agent.")
    assert bindings._code_agent_toolsets == {(owner, path): found[0]}
