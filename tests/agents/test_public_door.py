"""agents' public door (docs/architecture/agents.md): the forbidden contract in
pyproject.toml names every module and package of agents but the seven the apps above
may import, so a new module of agents is private unless it is added to the door."""

import importlib
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOOR = {
    "models",
    "runtime",
    "timeline",
    "pauses",
    "accounts",
    "client_input",
    "changes",
}
CONTRACT = "toolsets, evals and demo enter agents by its public door"


def _contract() -> dict:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["name"].startswith(CONTRACT))


def _children_of_agents() -> set[str]:
    agents = ROOT / "agents"
    modules = {p.stem for p in agents.glob("*.py") if p.name != "__init__.py"}
    packages = {p.parent.name for p in agents.glob("*/__init__.py")}
    return modules | packages


def test_every_module_of_agents_but_the_door_is_forbidden_to_the_apps_above():
    forbidden = {
        name.removeprefix("agents.") for name in _contract()["forbidden_modules"]
    }
    assert forbidden == _children_of_agents() - DOOR
    assert _contract()["source_modules"] == ["toolsets", "evals", "demo"]


def test_each_facade_of_the_door_declares_what_it_opens():
    for name in DOOR - {"models"}:
        facade = importlib.import_module(f"agents.{name}")
        assert facade.__all__, name
        assert all(hasattr(facade, opened) for opened in facade.__all__), name
