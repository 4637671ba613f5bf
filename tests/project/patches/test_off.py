"""TOOLCRIB_PATCHES_OFF puts each framework's own path back, and the app still works.

Backend patches are chosen by settings on import: those are read in a new process
with the variable set. Runtime patches read the setting at each call: a turn runs
with them off, and the ORM's own compiler is seen doing their work.
"""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.db.models.sql.compiler import SQLInsertCompiler

from agents.models import AgentSpec, Run, Session
from project import patches
from project.patches import prepared, rows
from project.patches.prepared import Param, Prepared, PreparedUpdate
from project.patches.rows import Insert
from tests.agents import test_turn_queries

ROOT = Path(__file__).resolve().parents[3]
QUESTION = test_turn_queries.QUESTION
weather_session = test_turn_queries.weather_session  # the fixture

SETTINGS_SCRIPT = """
import json, django
from asgiref.sync import async_to_sync
from django.conf import settings
django.setup()
from channels.layers import get_channel_layer
from django.core.cache import cache
from django.db import connection

layer = get_channel_layer()

async def round_trip():
    channel = await layer.new_channel()
    await layer.group_add("off-test", channel)
    await layer.group_send("off-test", {"type": "ping", "n": 1})
    return await layer.receive(channel)

cache.set("off-test", 7)
with connection.cursor() as cursor:
    cursor.execute("SELECT 1")
    one = cursor.fetchone()[0]
print(json.dumps({
    "engine": settings.DATABASES["default"]["ENGINE"],
    "init": settings.DATABASES["default"].get("OPTIONS", {}).get("init_command"),
    "layer": type(layer).__module__ + "." + type(layer).__name__,
    "cache": type(cache._connections["default"] if hasattr(cache, "_connections")
                  else cache).__name__,
    "cache_class": settings.CACHES["default"]["BACKEND"],
    "cached": cache.get("off-test"),
    "received": async_to_sync(round_trip)()["n"],
    "one": one,
}))
"""


def settings_with(tmp_path: Path, **variables: str) -> dict:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"REDIS_URL", "DATABASE_URL", "TOOLCRIB_PATCHES_OFF"}
    }
    env |= {
        "DJANGO_SETTINGS_MODULE": "project.settings",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'off.sqlite3'}",
        "TOOLCRIB_REDIS_PREFIX": f"off-test-{uuid.uuid4().hex}",
        **variables,
    }
    done = subprocess.run(
        [sys.executable, "-c", SETTINGS_SCRIPT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_embedded_backends_are_the_patches_by_default(tmp_path):
    found = settings_with(tmp_path)

    assert found["engine"] == "project.patches.sqlite_pool"
    assert "wal_autocheckpoint" in found["init"]
    assert found["layer"] == "project.patches.memory_layer.InMemoryChannelLayer"
    assert found["cache_class"] == "django.core.cache.backends.locmem.LocMemCache"
    assert (found["cached"], found["received"], found["one"]) == (7, 1, 1)


def test_embedded_backends_off_are_the_frameworks_own_and_work(tmp_path):
    found = settings_with(tmp_path, TOOLCRIB_PATCHES_OFF="sqlite_pool,memory_layer")

    assert found["engine"] == "django.db.backends.sqlite3"
    assert "wal_autocheckpoint" not in found["init"]
    assert found["layer"] == "channels.layers.InMemoryChannelLayer"
    assert found["cache_class"] == "django.core.cache.backends.locmem.LocMemCache"
    assert (found["cached"], found["received"], found["one"]) == (7, 1, 1)


def test_redis_backends_off_are_the_frameworks_own_and_work(tmp_path):
    found = settings_with(
        tmp_path,
        REDIS_URL="redis://127.0.0.1:6379/0",
        TOOLCRIB_PATCHES_OFF="all",
    )

    assert found["layer"] == "channels_redis.core.RedisChannelLayer"
    assert found["cache_class"] == "django.core.cache.backends.redis.RedisCache"
    assert (found["cached"], found["received"], found["one"]) == (7, 1, 1)


def test_a_name_that_is_no_patch_is_refused_at_start(tmp_path):
    with pytest.raises(AssertionError, match="names no patch"):
        settings_with(tmp_path, TOOLCRIB_PATCHES_OFF="sqlite_pol")


ASGI_SCRIPT = """
import json, os
from project import asgi
from project.patches import daphne_input, socket_writes
print(json.dumps([socket_writes.installed(), daphne_input.installed()]))
"""


@pytest.mark.parametrize(
    ("off", "installed"),
    [("", [True, True]), ("socket_writes,daphne_input", [False, False])],
    ids=["on", "off"],
)
def test_server_patches_are_installed_unless_off(tmp_path, off, installed):
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env |= {
        "DJANGO_SETTINGS_MODULE": "project.settings",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'off.sqlite3'}",
        "TOOLCRIB_PATCHES_OFF": off,
    }
    done = subprocess.run(
        [sys.executable, "-c", ASGI_SCRIPT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == installed


@pytest.fixture
def runtime_off(settings):
    settings.TOOLCRIB_PATCHES_OFF = frozenset({"rows", "prepared"})
    assert not patches.is_on("rows") and not patches.is_on("prepared")


@pytest.fixture
def orm_inserts(monkeypatch) -> list[str]:
    """The tables the ORM's own INSERT compiler writes to, from now on."""
    seen: list[str] = []
    plain = SQLInsertCompiler.execute_sql

    def counted(self, *args, **kwargs):
        seen.append(self.query.model._meta.db_table)
        return plain(self, *args, **kwargs)

    monkeypatch.setattr(SQLInsertCompiler, "execute_sql", counted)
    return seen


@pytest.fixture
def compiled_once(monkeypatch) -> list[str]:
    """Each time a Prepared compiles or reuses its statement (the patch's path)."""
    seen: list[str] = []
    plain = prepared._compiled_once

    def counted(kept, lock, alias, compile_):
        seen.append(alias)
        return plain(kept, lock, alias, compile_)

    monkeypatch.setattr(prepared, "_compiled_once", counted)
    return seen


@pytest.mark.django_db(transaction=True)
def test_a_turn_runs_with_rows_and_prepared_off_through_the_orm(
    runtime_off,
    alice,
    api_for,
    weather_session,
    orm_inserts,
    compiled_once,
):
    client = api_for(alice)
    response = client.post(
        f"/api/sessions/{weather_session}/messages/?wait=1",
        {"text": QUESTION},
        format="json",
    )

    assert response.json()["status"] == "succeeded", response.content
    events = client.get(f"/api/sessions/{weather_session}/events/?after=0").json()
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
    assert "agents_runspan" in orm_inserts  # rows' INSERT, by the ORM
    assert compiled_once == []  # no statement compiled once and kept


@pytest.fixture
def run(django_user_model) -> Run:
    owner = django_user_model.objects.create_user("ada")
    agent = AgentSpec.objects.create(name="off_agent", model="offline")
    session = Session.objects.create(
        app_name=agent.name, user_id=str(owner.pk), owner=owner, agent=agent
    )
    return Run.objects.create(session=session, user=owner, text="turn")


RUN = Prepared(
    Run.objects.select_related("session").filter(pk=Param("pk", Run._meta.pk))
)
RENAME = PreparedUpdate(
    Run.objects.filter(pk=Param("pk", Run._meta.pk)),
    {"text": Param("text", Run._meta.get_field("text"))},
)


@pytest.mark.django_db(transaction=True)
def test_prepared_off_reads_and_updates_as_on_and_refuses_the_same(runtime_off, run):
    assert RUN.first(pk=run.pk).session.pk == run.session_id
    assert RENAME.run(pk=run.pk, text="renamed") == 1
    assert Run.objects.get(pk=run.pk).text == "renamed"
    with pytest.raises(TypeError, match="no value for Param"):
        RUN.first()
    with pytest.raises(TypeError, match="no Param of the query"):
        RUN.first(pk=run.pk, other=1)


@pytest.mark.django_db(transaction=True)
def test_rows_off_writes_values_as_given_and_expressions_in_sql(
    runtime_off, run, orm_inserts
):
    fields = [field.name for field in Run._meta.concrete_fields]
    insert = Insert(Run, fields, expressions={"text": "UPPER(%s)"})
    created = run.created_at.replace(year=2020)
    row = Run(session_id=run.session_id, user_id=run.user_id, text="shout")
    row.created_at = created
    values = [getattr(row, field.attname) for field in Run._meta.concrete_fields]

    insert.rows([values])

    stored = Run.objects.get(pk=row.pk)
    assert (stored.text, stored.created_at) == ("SHOUT", created)
    assert orm_inserts == ["agents_run"]
    made = rows.create(Run(session_id=run.session_id, user_id=run.user_id, text="x"))
    assert Run.objects.get(pk=made.pk).created_at == made.created_at
