"""DjangoCredentialService against ADK's credential contract
(tests/unittests/auth/credential_service).

On ADK's InMemoryCredentialService and on DjangoCredentialService, with the
contexts a tool has. An ADK user id is a Toolcrib user's here: the Django service
keeps a credential for a user it knows (docs/architecture.md).
"""

from collections.abc import Iterator

import pytest
from django.contrib.auth import get_user_model
from fastapi.openapi.models import OAuth2, OAuthFlowAuthorizationCode, OAuthFlows
from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.auth.auth_credential import (
    AuthCredential,
    AuthCredentialTypes,
    OAuth2Auth,
)
from google.adk.auth.auth_tool import AuthConfig
from google.adk.auth.credential_service.base_credential_service import (
    BaseCredentialService,
)
from google.adk.auth.credential_service.in_memory_credential_service import (
    InMemoryCredentialService,
)
from google.adk.sessions import InMemorySessionService, Session

from agents.adk.credentials import DjangoCredentialService
from tests.agents.contracts.conftest import BACKENDS, prepare

SCHEME = OAuth2(
    flows=OAuthFlows(
        authorizationCode=OAuthFlowAuthorizationCode(
            authorizationUrl="https://example.com/oauth2/authorize",
            tokenUrl="https://example.com/oauth2/token",
            scopes={"read": "Read access", "write": "Write access"},
        )
    )
)


@pytest.fixture(params=BACKENDS)
def service(request) -> Iterator[BaseCredentialService]:
    prepare(request, request.param)
    if request.param == "adk":
        yield InMemoryCredentialService()
    else:
        yield DjangoCredentialService()


@pytest.fixture
def user_ids(service) -> list[str]:
    """Two ADK user ids: Toolcrib users' for the Django service."""
    if isinstance(service, InMemoryCredentialService):
        return ["1", "2"]
    users = get_user_model().objects
    return [str(users.create_user(username=name).pk) for name in ["ann", "ben"]]


def context(*, app_name: str, user_id: str) -> CallbackContext:
    """The context a tool of `app_name` has in a session of `user_id`."""
    invocation = InvocationContext(
        session_service=InMemorySessionService(),
        invocation_id="inv",
        agent=LlmAgent(name="agent"),
        session=Session(id="s", app_name=app_name, user_id=user_id),
    )
    return CallbackContext(invocation)


def oauth2(client_id: str, *, key: str | None = None) -> AuthConfig:
    credential = AuthCredential(
        auth_type=AuthCredentialTypes.OAUTH2,
        oauth2=OAuth2Auth(
            client_id=client_id,
            client_secret=f"{client_id}-secret",
            redirect_uri="https://example.com/callback",
        ),
    )
    return AuthConfig(
        auth_scheme=SCHEME,
        raw_auth_credential=credential,
        exchanged_auth_credential=credential.model_copy(deep=True),
        credential_key=key,
    )


async def test_nothing_saved_loads_as_none(service, user_ids):
    ctx = context(app_name="app", user_id=user_ids[0])

    assert await service.load_credential(oauth2("client"), ctx) is None


async def test_a_saved_credential_loads_back(service, user_ids):
    ctx = context(app_name="app", user_id=user_ids[0])
    config = oauth2("client")

    await service.save_credential(config, ctx)

    loaded = await service.load_credential(config, ctx)
    assert loaded == config.exchanged_auth_credential
    assert loaded.oauth2.client_id == "client"


async def test_saving_again_replaces_the_credential(service, user_ids):
    ctx = context(app_name="app", user_id=user_ids[0])
    config = oauth2("client")
    await service.save_credential(config, ctx)

    config.exchanged_auth_credential = oauth2("updated").exchanged_auth_credential
    await service.save_credential(config, ctx)

    loaded = await service.load_credential(config, ctx)
    assert (loaded.oauth2.client_id, loaded.oauth2.client_secret) == (
        "updated",
        "updated-secret",
    )


async def test_another_user_of_the_app_gets_nothing(service, user_ids):
    mine = context(app_name="app", user_id=user_ids[0])
    theirs = context(app_name="app", user_id=user_ids[1])
    config = oauth2("client")

    await service.save_credential(config, mine)

    assert await service.load_credential(config, theirs) is None
    assert await service.load_credential(config, mine) is not None


async def test_another_app_of_the_user_gets_nothing(service, user_ids):
    here = context(app_name="app1", user_id=user_ids[0])
    there = context(app_name="app2", user_id=user_ids[0])
    config = oauth2("client")

    await service.save_credential(config, here)

    assert await service.load_credential(config, there) is None
    assert await service.load_credential(config, here) is not None


async def test_each_key_keeps_its_own_credential(service, user_ids):
    ctx = context(app_name="app", user_id=user_ids[0])
    first, second = oauth2("client1", key="key1"), oauth2("client2", key="key2")

    await service.save_credential(first, ctx)
    await service.save_credential(second, ctx)

    assert (await service.load_credential(first, ctx)).oauth2.client_id == "client1"
    assert (await service.load_credential(second, ctx)).oauth2.client_id == "client2"


async def test_a_config_without_a_key_is_kept_under_the_key_adk_derives(
    service, user_ids
):
    ctx = context(app_name="app", user_id=user_ids[0])

    await service.save_credential(oauth2("client"), ctx)

    # Another config of the same scheme and client: the same derived key.
    loaded = await service.load_credential(oauth2("client"), ctx)
    assert loaded.oauth2.client_id == "client"


@pytest.mark.django_db(transaction=True)
async def test_an_id_of_no_toolcrib_user_keeps_nothing():
    service = DjangoCredentialService()
    ctx = context(app_name="app", user_id="not-a-user")

    await service.save_credential(oauth2("client"), ctx)

    assert await service.load_credential(oauth2("client"), ctx) is None
