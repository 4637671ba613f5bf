"""Settings come from the environment, and docs/deployment.md names every variable."""

import ast
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
READERS = {"env", "env_bool", "env_list"}


def variables_read_by_settings() -> set[str]:
    tree = ast.parse((ROOT / "project" / "settings.py").read_text())
    return {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in READERS
        and node.args
        and isinstance(node.args[0], ast.Constant)
    } | set(settings.MODEL_PROVIDER_VARIABLES)


def test_the_deployment_guide_names_every_environment_variable():
    guide = (ROOT / "docs" / "deployment.md").read_text()

    missing = sorted(
        name for name in variables_read_by_settings() if f"`{name}`" not in guide
    )

    assert missing == []
