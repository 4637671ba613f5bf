"""Settings come from the environment, and docs/deployment.md names every variable."""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
READERS = {"env", "env_bool", "env_list"}


def variables_read_by_settings() -> set[str]:
    modules = sorted((ROOT / "project" / "settings").glob("*.py"))
    trees = [ast.parse(module.read_text()) for module in modules]
    return {
        node.args[0].value
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in READERS
        and node.args
        and isinstance(node.args[0], ast.Constant)
    } | set(settings.MODEL_PROVIDER_VARIABLES)


def test_settings_are_read_from_a_module_per_concern():
    assert "TOOLCRIB_PATCHES_OFF" in variables_read_by_settings()
    assert "DATABASE_URL" in variables_read_by_settings()


def test_the_deployment_guide_names_every_environment_variable():
    guide = (ROOT / "docs" / "deployment.md").read_text()

    missing = sorted(
        name for name in variables_read_by_settings() if f"`{name}`" not in guide
    )

    assert missing == []


OWN = ("TOOLCRIB_DB_SERVER_BINDING", "TOOLCRIB_DB_PREPARE_THRESHOLD")


def database_options(**variables: str) -> dict:
    """settings.DATABASES' binding and prepare options, read in a new process with
    these variables (and none of OWN from this process's environment)."""
    env = {key: value for key, value in os.environ.items() if key not in OWN}
    env |= {
        "DATABASE_URL": "postgres://toolcrib@127.0.0.1/x",
        "DJANGO_SETTINGS_MODULE": "project.settings",
        **variables,
    }
    script = (
        "import django, json; django.setup(); from django.conf import settings;"
        " options = settings.DATABASES['default']['OPTIONS'];"
        " print(json.dumps({key: options.get(key) for key in"
        " ('server_side_binding', 'prepare_threshold')}))"
    )
    return json.loads(
        subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({}, {"server_side_binding": True, "prepare_threshold": 2}),
        (
            {"TOOLCRIB_DB_PREPARE_THRESHOLD": "off"},
            {"server_side_binding": True, "prepare_threshold": None},
        ),
        (
            {"TOOLCRIB_DB_PREPARE_THRESHOLD": "0"},
            {"server_side_binding": True, "prepare_threshold": 0},
        ),
        (
            {"TOOLCRIB_DB_SERVER_BINDING": "0"},
            {"server_side_binding": None, "prepare_threshold": 2},
        ),
    ],
)
def test_postgresql_statements_are_prepared_unless_turned_off(variables, expected):
    assert database_options(**variables) == expected
