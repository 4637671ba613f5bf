"""Fixtures shared by the whole suite: users, tokens, API clients."""

import itertools

import pytest
from django.contrib.auth import get_user_model
from google.adk.agents import LlmAgent
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

_counter = itertools.count()


@pytest.fixture(autouse=True)
def _offline_default_model():
    """Nothing in the suite may reach for Gemini: the default model is offline."""
    from agents.adk.offline import OfflineLlm

    LlmAgent.set_default_model(OfflineLlm(model="offline/demo"))
    yield


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
def alice(make_user):
    return make_user("alice")


@pytest.fixture
def bob(make_user):
    return make_user("bob")


@pytest.fixture
def api_for():
    def client_for(user) -> APIClient:
        client = APIClient()
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client

    return client_for


def pytest_configure(config):
    from django.conf import settings

    # Test settings trade only speed: a fast hasher for the many users tests make.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
