"""Fixtures shared by the whole suite: users, tokens, API clients."""

import importlib.util
import itertools
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from google.adk.agents import LlmAgent
from rest_framework.test import APIClient

from agents.adk.builder import sync_code_agents
from agents.tokens import issue_token

_counter = itertools.count()


@pytest.fixture(autouse=True)
def _offline_default_model():
    """Nothing in the suite may reach for Gemini: the default model is offline."""
    from agents.adk.offline import OfflineLlm

    LlmAgent.set_default_model(OfflineLlm(model="offline/demo"))
    yield


@pytest.fixture(autouse=True)
def _no_parsed_events_across_tests():
    """A test's rolled-back rows may reuse another's row ids: parse afresh."""
    from agents.adk.parsed_events import PARSED

    PARSED.clear()
    yield
    PARSED.clear()


@pytest.fixture(autouse=True)
def _no_access_decisions_across_tests():
    """Access decisions are cached while the stored version counters hold; a test's
    rolled-back rows put those counters back, so another test on the same worker
    (pytest-xdist places them as it goes) could meet a catalog of tools that no
    longer exist (an audit row's tool then fails its foreign key)."""
    from toolsets import access

    access.forget()
    yield
    access.forget()


@pytest.fixture(autouse=True)
def _no_recent_provider_checks():
    """A rolled-back test's user ids are reused: no process memory of their checks."""
    from toolsets.sso.recheck import forget_recent_checks

    forget_recent_checks()
    yield
    forget_recent_checks()


@pytest.fixture
def make_user(db):
    def make(
        username: str | None = None, *, is_staff: bool = False, password: str = "pw"
    ):
        name = username or f"user{next(_counter)}"
        return get_user_model().objects.create_user(
            username=name, password=password, is_staff=is_staff
        )

    return make


@pytest.fixture
def superuser_client(client, make_user):
    """The test client signed in as a superuser (staff): the Django admin's pages."""
    boss = make_user("boss", is_staff=True)
    boss.is_superuser = True
    boss.save()
    client.force_login(boss)
    return client


@pytest.fixture
def alice(make_user):
    return make_user("alice")


@pytest.fixture
def bob(make_user):
    return make_user("bob")


@pytest.fixture
def api_for():
    """An API client signed in as a user with a token, one per user and test.

    The database keeps only a token's digest: its clear value lives here, as in a
    client that signed in once.
    """
    tokens: dict[int, str] = {}

    def client_for(user) -> APIClient:
        if user.pk not in tokens:
            tokens[user.pk] = issue_token(user=user)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {tokens[user.pk]}")
        return client

    return client_for


def pytest_configure(config):
    from django.conf import settings

    # The translation catalogs, compiled as `make install` does (docs/i18n.md), before
    # any test loads them: a plain `pytest` after a .po changed reads the new one.
    _compile_messages()

    # Test settings trade only speed: a fast hasher for the many users tests make.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def demo_agents(db):
    """The code agents of settings.TOOLCRIB_AGENTS, as rows."""
    return {spec.name: spec for spec in sync_code_agents()}


@pytest.fixture
def start_session(api_for):
    def start(user, agent: str) -> str:
        response = api_for(user).post("/api/sessions/", {"agent": agent}, format="json")
        assert response.status_code == 201, response.content
        return response.json()["id"]

    return start


@pytest.fixture
def say(api_for):
    """Send a message and wait for the turn to end; return the finished run."""

    def send(user, session_id: str, text: str) -> dict:
        response = api_for(user).post(
            f"/api/sessions/{session_id}/messages/?wait=1",
            {"text": text},
            format="json",
        )
        assert response.status_code == 200, response.content
        return response.json()

    return send


@pytest.fixture
def events_of(api_for):
    def read(user, session_id: str, after: int = 0) -> list[dict]:
        response = api_for(user).get(
            f"/api/sessions/{session_id}/events/?after={after}"
        )
        assert response.status_code == 200, response.content
        return response.json()

    return read


@pytest.fixture
def code_module(tmp_path, monkeypatch):
    """Write a module of the given source where imports find it; returns its name.

    Each gets a name of its own: a module that failed to import is remembered as
    failed (agents.adk.builder), one that imported stays in sys.modules.
    """
    monkeypatch.syspath_prepend(str(tmp_path))
    names = itertools.count()
    stem = re.sub(r"\W", "_", tmp_path.name)

    def write(source: str) -> str:
        name = f"{stem}_module_{next(names)}"
        (tmp_path / f"{name}.py").write_text(source)
        importlib.invalidate_caches()  # the folder's finder may have listed it
        return name

    return write


@pytest.fixture
def vault_keeper(settings, db) -> str:
    """tests.agents.secret_agents' agent, as a row: a turn of it meets a nested
    state secret, a `password` argument and a `session_token` result."""
    from tests.agents.secret_agents import AGENT

    settings.TOOLCRIB_AGENTS = [
        *settings.TOOLCRIB_AGENTS,
        "tests.agents.secret_agents.vault_keeper",
    ]
    sync_code_agents()
    return AGENT


def _compile_messages() -> None:
    from django.conf import settings

    script = Path(settings.BASE_DIR) / "scripts" / "compile-messages.py"
    spec = importlib.util.spec_from_file_location("compile_messages", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.compile_all()
