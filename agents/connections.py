"""Model connections, as staff manage them: saved, removed, tested, their models
listed and priced; and the environment's providers, shown beside them read-only.

Every change writes a new stamp in the version row in its own transaction
(agents.model_table), so the next model call of every process sees it. A key is
sealed as it is saved (project.sealing) and never read back but to call the
provider; a test's failure is worded without it.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from uuid import uuid4

import httpx
from django.conf import settings
from django.db import transaction
from django.utils.translation import gettext as _
from google.adk.models import LLMRegistry

from agents import model_grants
from agents.adk.providers import (
    LITELLM_PROVIDERS,
    PROVIDERS,
    connection_problem,
    litellm_kwargs,
    missing_variables,
)
from agents.model_grants import EVERY_MODEL
from agents.model_table import SEALING_PURPOSE, Target, target_of
from agents.models import AgentSpec, ConnectionsVersion, ModelConnection, ServedModel
from project.errors import DomainError
from project.sealing import seal

# Names a connection may not take: the prefixes agents already use for the
# environment's providers and LiteLLM's, and the offline model's.
RESERVED_NAMES = frozenset({*PROVIDERS, *LITELLM_PROVIDERS, "offline", "env"})
LISTABLE = (ModelConnection.Kind.OPENAI_COMPATIBLE, ModelConnection.Kind.OLLAMA)


class ConnectionRefused(DomainError):
    """A connection, or a model of one, cannot be saved or reached as asked."""

    code = "connection_refused"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class EnvConnection:
    """An environment provider with its variables set: shown, never edited."""

    name: str
    base_url: str
    has_key: bool
    variables: list[str]
    models: list[ServedModel] = field(default_factory=list)
    kind: str = "environment"
    read_only: bool = True


@dataclass(frozen=True)
class TestResult:
    """What a test call found, in plain words."""

    ok: bool
    message: str
    model: str = ""


def bump_version() -> None:
    """A new stamp: every process reads connections and prices again."""
    ConnectionsVersion.objects.update_or_create(pk=1, defaults={"stamp": uuid4()})


def env_connections() -> list[EnvConnection]:
    """The environment's providers that have any variable set, by name."""
    env = settings.TOOLCRIB_PROVIDER_ENV
    models = list(ServedModel.objects.filter(connection=None))
    found = []
    for provider in PROVIDERS.values():
        variables = [v for v in (*provider.keys, *provider.bases) if env.get(v)]
        if not variables or missing_variables(f"{provider.name}/any"):
            continue
        base = next((env[v] for v in provider.bases if env.get(v)), "")
        found.append(
            EnvConnection(
                name=provider.name,
                base_url=base,
                has_key=any(env.get(v) for v in provider.keys),
                variables=variables,
                models=[m for m in models if m.env_provider == provider.name],
            )
        )
    return found


def env_connection(name: str) -> EnvConnection | None:
    """One environment provider, or None."""
    return next((c for c in env_connections() if c.name == name), None)


def save_connection(
    *,
    connection: ModelConnection | None,
    fields: Mapping[str, Any],
    key: str | None,
) -> ModelConnection:
    """Create or change a connection; `key` None keeps the stored one, "" clears it."""
    renamed = connection is not None and fields.get("name", connection.name) != (
        connection.name
    )
    if renamed and (users := agents_using(connection.name)):
        raise ConnectionRefused(
            _(
                "Agents name this connection's models by its name (%(join_users)s): change their model first, or add a connection under the new name."
            )
            % {"join_users": ", ".join(users)},
            field="name",
        )
    connection = connection or ModelConnection()
    for name, value in fields.items():
        setattr(connection, name, value)
    if key is not None:
        connection.sealed_key = seal(SEALING_PURPOSE, key) if key else ""
    with transaction.atomic():
        connection.save()
        if "name" in fields:
            for served in ServedModel.objects.filter(connection=connection):
                served.full_name = f"{connection.name}/{served.model}"
                served.save(update_fields=["full_name"])
        bump_version()
        # Who may use its models may have changed (granted only, or its name).
        model_grants.bump_version()
    return connection


def agents_using(name: str) -> list[str]:
    """The agents (drafts too) whose model is one of connection `name`'s, and
    "the default model" when TOOLCRIB_DEFAULT_MODEL is."""
    prefix = f"{name}/"
    users = list(
        AgentSpec.objects.filter(model__startswith=prefix)
        .order_by("name")
        .values_list("name", flat=True)[:20]
    )
    if settings.TOOLCRIB_DEFAULT_MODEL.startswith(prefix):
        users.append("the default model")
    return users


def is_litellm_provider(name: str) -> bool:
    """Whether LiteLLM knows the provider `name` (imports litellm: 3 s, once)."""
    import litellm  # noqa: PLC0415 - 3 s to import: only when staff name a provider

    return name in {getattr(p, "value", p) for p in litellm.provider_list}


def remove_connection(connection: ModelConnection) -> None:
    """Remove a connection and its models; agents naming it fail from their next turn."""
    with transaction.atomic():
        connection.delete()
        bump_version()
        model_grants.bump_version()


def full_name(*, owner: ModelConnection | EnvConnection, model: str) -> str:
    """The name agents give a model: `<connection>/<model>`; a Google model's bare."""
    if isinstance(owner, EnvConnection) and owner.name == "google":
        return model
    return f"{owner.name}/{model}"


def save_model(
    *,
    owner: ModelConnection | EnvConnection,
    model: str,
    input_price: Decimal | None = None,
    output_price: Decimal | None = None,
    served: ServedModel | None = None,
) -> ServedModel:
    """Add a model to a connection, or change its prices."""
    name = full_name(owner=owner, model=model)
    clash = ServedModel.objects.filter(full_name=name)
    if served is not None:
        clash = clash.exclude(pk=served.pk)
    if clash.exists():
        raise ConnectionRefused(
            _("%(name)s is listed already.") % {"name": name}, field="model"
        )
    served = served or ServedModel()
    served.model, served.full_name = model, name
    served.input_price, served.output_price = input_price, output_price
    if isinstance(owner, ModelConnection):
        served.connection, served.env_provider = owner, ""
    else:
        served.connection, served.env_provider = None, owner.name
    with transaction.atomic():
        served.save()
        bump_version()
    return served


def remove_model(served: ServedModel) -> None:
    """Remove a model (and its prices) from a connection's list."""
    with transaction.atomic():
        served.delete()
        bump_version()


def models_of(owner: ModelConnection | EnvConnection) -> list[ServedModel]:
    """The models listed for a connection."""
    if isinstance(owner, EnvConnection):
        return list(ServedModel.objects.filter(env_provider=owner.name))
    return list(ServedModel.objects.filter(connection=owner))


def target_for_owner(owner: ModelConnection | EnvConnection, model: str) -> Target:
    """How a test call reaches `model` of a connection."""
    if isinstance(owner, ModelConnection):
        return target_of(owner, model)
    kwargs = litellm_kwargs(f"{owner.name}/{model}")
    provider = "gemini" if owner.name == "google" else owner.name
    return Target(
        connection=owner.name,
        provider=provider,
        litellm_model=f"{provider}/{model}",
        api_base=kwargs["api_base"],
        api_key=kwargs["api_key"] or _google_key(owner),
    )


def _google_key(owner: EnvConnection) -> str | None:
    if owner.name != "google":
        return None
    env = settings.TOOLCRIB_PROVIDER_ENV
    return next((env[v] for v in PROVIDERS["google"].keys if env.get(v)), None)


def fetch_model_ids(owner: ModelConnection | EnvConnection) -> list[str]:
    """The models the provider says it serves (OpenAI-compatible `/models`, Ollama
    `/api/tags`): one real call. ConnectionRefused, in plain words, when it cannot."""
    kind = getattr(owner, "kind", "")
    if kind not in LISTABLE and not (
        isinstance(owner, EnvConnection) and owner.name == "openai"
    ):
        raise ConnectionRefused(
            _("This provider cannot list its models: type them by hand.")
        )
    target = target_for_owner(owner, "any")
    base = (target.api_base or "https://api.openai.com/v1").rstrip("/")
    ollama = kind == ModelConnection.Kind.OLLAMA
    url = f"{base}/api/tags" if ollama else f"{base}/models"
    headers = {}
    if target.api_key and not ollama:
        headers["Authorization"] = f"Bearer {target.api_key}"
    try:
        response = httpx.get(
            url, headers=headers, timeout=settings.TOOLCRIB_MODEL_TIMEOUT
        )
    except httpx.TimeoutException as exc:
        raise ConnectionRefused(_timeout_words(base)) from exc
    except httpx.HTTPError as exc:
        raise ConnectionRefused(_unreachable_words(base)) from exc
    if response.status_code != 200:
        raise ConnectionRefused(_status_words(response.status_code, ""))
    listed = _listed_ids(response, key="name" if ollama else "id")
    if listed is None:
        raise ConnectionRefused(
            _(
                "%(url)s answered, but not with a list of models: check the base URL (an OpenAI-compatible server's usually ends in /v1; Ollama's does not)."
            )
            % {"url": url}
        )
    return listed


def _listed_ids(response: httpx.Response, *, key: str) -> list[str] | None:
    """The model ids of a `/models` (`data`, `id`) or `/api/tags` (`models`,
    `name`) answer; None when it is no such list."""
    try:
        body = response.json()
    except ValueError:
        return None
    entries = (
        body.get("models" if key == "name" else "data")
        if isinstance(body, dict)
        else None
    )
    if not isinstance(entries, list):
        return None
    ids = [e.get(key) for e in entries if isinstance(e, dict)]
    return sorted(i for i in ids if isinstance(i, str) and i)


def fetch_models(owner: ModelConnection | EnvConnection) -> list[ServedModel]:
    """List the provider's models on the connection: new ones added (without a
    price), those it no longer serves kept (their prices are staff's)."""
    known = {m.model for m in models_of(owner)}
    for model in fetch_model_ids(owner):
        if model and model not in known:
            save_model(owner=owner, model=model)
    return models_of(owner)


def test_connection(
    owner: ModelConnection | EnvConnection, *, model: str = ""
) -> TestResult:
    """One real call: a one-token completion of `model` (else the first listed
    model); with no model, listing the models where the provider can. Its
    failure in plain words."""
    model = model or next((m.model for m in models_of(owner)), "")
    if not model:
        try:
            found = fetch_model_ids(owner)
        except ConnectionRefused as exc:
            return TestResult(ok=False, message=str(exc))
        return TestResult(
            ok=True, message=f"Connected: the provider lists {len(found)} models."
        )
    target = target_for_owner(owner, model)
    import litellm  # noqa: PLC0415 - 3 s to import: only when a test is asked

    try:
        litellm.completion(
            model=target.litellm_model,
            messages=[{"role": "user", "content": "Say OK."}],
            max_tokens=1,
            api_key=target.api_key,
            api_base=target.api_base,
            timeout=settings.TOOLCRIB_MODEL_TIMEOUT,
            num_retries=0,
        )
    except Exception as exc:  # noqa: BLE001 - every provider error is worded
        return TestResult(ok=False, message=describe_failure(exc, target), model=model)
    return TestResult(ok=True, message=f"Connected: {model} answered.", model=model)


def describe_failure(exc: BaseException, target: Target) -> str:
    """A provider's failure in plain words, never with the key."""
    status = getattr(exc, "status_code", None)
    name = type(exc).__name__
    base = target.api_base or "the provider"
    model = target.litellm_model.split("/", 1)[-1]
    if "Timeout" in name or status == 408:
        return _timeout_words(base)
    if "APIConnectionError" in name or "ConnectError" in name or _refused(exc):
        return _unreachable_words(base)
    if status in (401, 403) or "Authentication" in name:
        return _status_words(401 if status is None else status, model)
    if status == 404 or "NotFound" in name:
        return _status_words(404, model)
    return _status_words(status or 0, model)


def _refused(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "connection refused" in text or "connection error" in text


def _timeout_words(base: str) -> str:
    seconds = settings.TOOLCRIB_MODEL_TIMEOUT
    return f"No answer from {base} within {seconds:g} seconds (timeout)."


def _unreachable_words(base: str) -> str:
    return f"Cannot reach {base}: the host is unreachable or refused the connection."


def _status_words(status: int, model: str) -> str:
    if status in (401, 403):
        return f"The provider rejected the key (HTTP {status}): check the API key."
    if status == 404:
        return f"The provider does not know the model {model} (HTTP 404)."
    if status == 429:
        return "The provider is limiting requests (HTTP 429): try again later."
    if status >= 500:
        return f"The provider failed (HTTP {status}): try again later."
    return f"The provider refused the request (HTTP {status})."


def unknown_model(name: str) -> str | None:
    """Why `name` names no model agents can run (or, as `<prefix>/*`, no connection
    or provider); None when it does. A `<connection>/<model>` needs the connection
    saved; a provider's prefix (`openai/...`) is known as ADK's registry knows it."""
    if name.endswith(EVERY_MODEL):
        prefix = name[: -len(EVERY_MODEL)]
        if not prefix or "/" in prefix:
            return "Name a model, or every model of a connection as <connection>/*."
        if prefix in RESERVED_NAMES or _is_connection(prefix):
            return None
        return f"No model connection or provider is named {prefix}."
    try:
        LLMRegistry.resolve(name)
    except ValueError:
        return (
            f"No provider serves the model {name!r}: name it as agents do, e.g. "
            '"openai/gpt-4o-mini", "lab/llama3" or "gemini-2.5-flash".'
        )
    # The one rule the builder, budgets and the Agents page's cards share.
    return connection_problem(name) or None


def _is_connection(name: str) -> bool:
    return ModelConnection.objects.filter(name=name).exists()
