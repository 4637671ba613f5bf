"""The risky built-in toolsets start granted only (issue 14, "also found").

sql, http, webpage, files and shell were open to every user once an administrator
configured them. Now nobody is offered or may call their tools until an
administrator grants them; rows made by earlier versions are switched by
toolsets/migrations/0008_risky_granted_only.py.
"""

import importlib
import sqlite3

import pytest
from django.apps import apps
from google.adk.agents import LlmAgent
from google.adk.models import LlmRequest

from agents.adk.builder import sync_code_agents
from agents.adk.offline import OfflineLlm, OfflineStep, declared_tools
from tests.toolsets.builtin import servers
from toolsets import access
from toolsets.builtin import files, http, shell, sql, webpage
from toolsets.catalog import sync_catalog
from toolsets.models import Grant, ToolCall, Toolset

pytestmark = pytest.mark.django_db(transaction=True)

RISKY = {
    "sql": "run_query",
    "http": "http_get",
    "webpage": "fetch_webpage",
    "files": "list_files",
    "shell": "run_command",
}
OFFERED: list[list[str]] = []
PAGE_URL: list[str] = []  # the loopback page of the running test


class RecordingLlm(OfflineLlm):
    """An OfflineLlm that notes the tool names each request declares."""

    def answer(self, llm_request: LlmRequest):
        OFFERED.append(sorted(spec.name for spec in declared_tools(llm_request)))
        return super().answer(llm_request)


def risky_agent() -> LlmAgent:
    """Calls one tool of each risky toolset at once, whatever it was offered."""
    calls = OfflineStep.calls(
        [
            ("run_query", {"query": "SELECT 42 AS answer"}),
            ("http_get", {"url": PAGE_URL[0]}),
            ("fetch_webpage", {"url": PAGE_URL[0]}),
            ("list_files", {}),
            ("run_command", {"command": "echo", "args": ["hi"]}),
        ]
    )
    return LlmAgent(
        name="risky_agent",
        model=RecordingLlm(script=[calls, OfflineStep.say("done")]),
        tools=[
            sql.toolset,
            http.toolset,
            webpage.toolset,
            files.toolset,
            shell.toolset,
        ],
    )


@pytest.fixture
def configured(settings, tmp_path, api_for, make_user):
    """Every risky toolset configured by an administrator, and the shell enabled."""
    web = servers.serve()
    web.routes["/"] = servers.Reply(
        200, b"<title>hi</title><p>hello</p>", {"Content-Type": "text/html"}
    )
    PAGE_URL[:] = [web.url("/")]
    OFFERED.clear()
    database = tmp_path / "team.sqlite3"
    sqlite3.connect(database).close()
    settings.TOOLCRIB_AGENTS = ["tests.security.test_builtin_defaults.risky_agent"]
    settings.TOOLCRIB_BUILTIN_SQL_DATABASE_URL = f"sqlite:///{database}"
    settings.TOOLCRIB_BUILTIN_HTTP_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.TOOLCRIB_BUILTIN_SHELL_COMMANDS = ["echo"]
    sync_code_agents()
    sync_catalog()
    access.invalidate()
    admin = api_for(make_user("admin", is_staff=True))
    response = admin.patch("/api/toolsets/shell/", {"enabled": True}, format="json")
    assert response.status_code == 200, response.content
    yield admin
    servers.stop(web)


def audit() -> dict[str, str]:
    return dict(ToolCall.objects.values_list("tool_full_name", "status"))


def test_a_user_without_a_grant_is_neither_offered_nor_served_a_risky_tool(
    configured, alice, start_session, say
):
    session = start_session(alice, "risky_agent")

    say(alice, session, "go")

    assert not set(OFFERED[0]) & set(RISKY.values())
    assert audit() == {f"{name}.{tool}": "denied" for name, tool in RISKY.items()}


def test_an_admin_grant_lets_her_use_each_risky_toolset(
    configured, alice, start_session, say
):
    for name in RISKY:
        response = configured.post(
            "/api/grants/",
            {"user": "alice", "toolset": name, "effect": "allow"},
            format="json",
        )
        assert response.status_code == 201, response.content
    session = start_session(alice, "risky_agent")

    say(alice, session, "go")

    assert set(RISKY.values()) <= set(OFFERED[0])
    decided = dict(ToolCall.objects.values_list("tool_full_name", "access_rule"))
    assert all(rule.startswith("allowed by grant") for rule in decided.values())
    statuses = audit()
    assert statuses.pop("shell.run_command") != "denied"  # the sandbox may refuse it
    assert statuses == {
        "sql.run_query": "ok",
        "http.http_get": "ok",
        "webpage.fetch_webpage": "ok",
        "files.list_files": "ok",
    }


def test_new_risky_rows_start_granted_only_and_math_stays_open(configured):
    policies = dict(Toolset.objects.values_list("name", "default_policy"))

    assert {name: policies[name] for name in RISKY} == dict.fromkeys(
        RISKY, "granted_only"
    )
    assert policies["math"] == "open"


# Rows made by earlier versions: the data migration.

MIGRATION = importlib.import_module("toolsets.migrations.0008_risky_granted_only")


def old_row(name: str, origin: str, policy: str = "open") -> Toolset:
    return Toolset.objects.create(
        name=name, source="builtin", origin=origin, default_policy=policy
    )


def test_the_migration_switches_open_risky_rows_and_keeps_grants(alice, bob):
    for name in RISKY:
        old_row(name, f"toolsets.builtin.{name}.toolset")
    old_row("math", "toolsets.builtin.calculator.toolset")
    old_row("my_sql", "toolsets.builtin.sql.SqlToolset")  # an unregistered instance
    Toolset.objects.create(name="notes", source="local", origin="myteam.files")
    sql_row = Toolset.objects.get(name="sql")
    Grant.objects.create(user=alice, toolset=sql_row, effect="allow")

    MIGRATION.restrict_risky_builtins(apps, None)

    policies = dict(Toolset.objects.values_list("name", "default_policy"))
    assert policies == {
        **dict.fromkeys(RISKY, "granted_only"),
        "my_sql": "granted_only",
        "math": "open",
        "notes": "open",
    }
    sql_row.refresh_from_db()
    assert access.explain_toolset(user_id=alice.id, toolset=sql_row).allowed
    assert not access.explain_toolset(user_id=bob.id, toolset=sql_row).allowed
