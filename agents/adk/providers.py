"""Model names -> providers: what each needs from the environment, and whether it has it.

Any model string ADK understands works: ``gemini-...`` natively, ``provider/model``
through ADK's LiteLlm wrapper (``openai/...``, ``ollama_chat/...``, ``anthropic/...``),
``offline/...`` for the demo model. Keys and base URLs come from settings
(``TOOLCRIB_PROVIDER_ENV``, read from the environment under the names each provider's
own library uses) and are passed to the model explicitly on every call.

``<connection>/<model>`` names a model of a connection staff made in the UI
(agents.model_table): its kind, base URL and key are read, as of the latest
change, at every call (docs/models.md).

Importing this module registers Toolcrib's model classes (``agents.adk.llms``) for the
names ADK's Gemini, LiteLlm and OpenAILlm serve, lazily: litellm (~3 s to import) and
the openai SDK load only when a turn first needs them.
"""

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from google.adk.agents import BaseAgent, LlmAgent
from google.adk.models import BaseLlm, LLMRegistry
from google.adk.workflow import BaseNode, NodeTimeoutError

from agents.adk.nodes import walk_agents
from agents.model_table import connection_names, target_for

OFFLINE_PREFIX = "offline/"
# Sent as the key to a self-hosted OpenAI-compatible server that needs none: the
# openai SDK refuses to send a request without one.
NO_KEY = "not-needed"


class ModelNotConfigured(Exception):
    """A turn's model cannot be called: a variable is missing, or the name is unknown."""

    code = "MODEL_NOT_CONFIGURED"


@dataclass(frozen=True)
class Provider:
    """What one provider needs: a key (any one of `keys`), maybe a base URL."""

    name: str
    keys: tuple[str, ...] = ()
    bases: tuple[str, ...] = ()
    key_required: bool = True
    base_required: bool = False
    # A self-hosted server at a configured base URL often needs no key.
    key_optional_with_base: bool = False
    extra: Mapping[str, str] = field(default_factory=dict)  # kwarg -> variable


PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider("google", keys=("GOOGLE_API_KEY", "GEMINI_API_KEY")),
        Provider(
            "gemini",
            keys=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
            bases=("GEMINI_API_BASE",),
        ),
        Provider(
            "openai",
            keys=("OPENAI_API_KEY",),
            bases=("OPENAI_API_BASE", "OPENAI_BASE_URL"),
            key_optional_with_base=True,
        ),
        Provider(
            "anthropic",
            keys=("ANTHROPIC_API_KEY",),
            bases=("ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL"),
        ),
        Provider(
            "ollama",
            keys=("OLLAMA_API_KEY",),
            bases=("OLLAMA_API_BASE",),
            key_required=False,
        ),
        Provider(
            "ollama_chat",
            keys=("OLLAMA_API_KEY",),
            bases=("OLLAMA_API_BASE",),
            key_required=False,
        ),
        Provider(
            "hosted_vllm",
            keys=("HOSTED_VLLM_API_KEY",),
            bases=("HOSTED_VLLM_API_BASE",),
            key_required=False,
            base_required=True,
        ),
        Provider(
            "azure",
            keys=("AZURE_API_KEY",),
            bases=("AZURE_API_BASE",),
            base_required=True,
            extra={"api_version": "AZURE_API_VERSION"},
        ),
        Provider("groq", keys=("GROQ_API_KEY",)),
        Provider("mistral", keys=("MISTRAL_API_KEY",)),
        Provider("deepseek", keys=("DEEPSEEK_API_KEY",)),
        Provider("openrouter", keys=("OPENROUTER_API_KEY",)),
        Provider("together_ai", keys=("TOGETHERAI_API_KEY",)),
        Provider("xai", keys=("XAI_API_KEY",)),
    )
}

# LiteLLM providers (beyond PROVIDERS) that agents may name as `<prefix>/<model>`
# with the credentials LiteLLM finds itself; no stored connection may take these
# names (agents.connections). A prefix in neither, and no connection's name, is not
# configured (model_info). Each is in litellm.provider_list (tests check).
LITELLM_PROVIDERS = frozenset(
    {
        "bedrock",
        "vertex_ai",
        "huggingface",
        "cohere",
        "replicate",
        "sagemaker",
        "watsonx",
        "fireworks_ai",
        "perplexity",
        "cerebras",
        "databricks",
        "nvidia_nim",
        "lm_studio",
        "llamafile",
        "litellm_proxy",
        "github",
        "cloudflare",
        "sambanova",
        "azure_ai",
        "deepinfra",
        "ai21",
        "codestral",
        "text-completion-openai",
        "vllm",
        "dashscope",
        "moonshot",
        "novita",
        "friendliai",
        "openai_like",
    }
)

# Names served by Toolcrib's subclasses of ADK's model classes. Identical regexes
# replace ADK's own entries in place; the others are added after ADK's.
GEMINI_NAMES = [r"gemini-.*", r"gemma-4.*"]
OPENAI_NAMES = [r"gpt-.*", r"o\d+-.*"]
LITELLM_NAMES = [
    r"openai/.*",
    r"azure/.*",
    r"groq/.*",
    r"anthropic/.*",
    r"ollama/(?!gemma3).*",
    r"ollama_chat/.*",
    r"together_ai/.*",
    r"mistral/.*",
    r"deepseek/.*",
    r"gemini/.*",
    r"hosted_vllm/.*",
    r"openrouter/.*",
    r"xai/.*",
    # Last: any other `prefix/model`, a stored connection's (or a LiteLLM provider
    # Toolcrib does not list, with the credentials LiteLLM finds itself).
    r"[a-z0-9][a-z0-9_-]*/.+",
]


def register_models() -> None:
    """Serve the providers' model names with Toolcrib's classes, imported on first use."""
    # ADK's own lazy entries use this hook; a public register() would import the
    # classes, and with them litellm's wrapper and the openai SDK, at startup.
    # The offline model first: ADK takes the first pattern that matches, and the
    # last LiteLLM pattern (any `prefix/model`) would take `offline/demo` too.
    LLMRegistry._register_lazy([r"offline/.*"], "agents.adk.offline", "OfflineLlm")
    LLMRegistry._register_lazy(GEMINI_NAMES, "agents.adk.llms", "ToolcribGemini")
    LLMRegistry._register_lazy(LITELLM_NAMES, "agents.adk.llms", "ToolcribLiteLlm")
    LLMRegistry._register_lazy(
        OPENAI_NAMES, "agents.adk.openai_llm", "ToolcribOpenAILlm"
    )


def effective_model(model: str) -> str:
    """The model a spec runs on: its own, or TOOLCRIB_DEFAULT_MODEL."""
    return model or settings.TOOLCRIB_DEFAULT_MODEL


def provider_of(name: str) -> str:
    """The provider a model name belongs to: its prefix, or the family of a bare name."""
    if "/" in name:
        return name.split("/", 1)[0]
    if name.startswith(("gemini-", "gemma-")):
        return "google"
    if name.startswith("claude-"):
        return "anthropic"
    if name.startswith(("gpt-", "o1", "o3", "o4")):
        return "openai"
    return "unknown"


def model_info(
    model: str, *, connections: Collection[str] | None = None
) -> dict[str, Any]:
    """Name, provider, label, and whether the provider is configured (and what's
    missing, or the problem in words). `connections`: the stored connections'
    names, when the caller read them already (else read here: one query)."""
    name = effective_model(model)
    if name.startswith(OFFLINE_PREFIX):
        return {
            "name": name,
            "provider": "offline",
            "offline": True,
            "label": "Offline demo model (deterministic, no LLM, no network)",
            "configured": True,
            "missing": [],
            "problem": "",
        }
    missing = missing_variables(name)
    problem = connection_problem(name, connections)
    return {
        "name": name,
        "provider": provider_of(name),
        "offline": False,
        "label": name,
        "configured": not missing and not problem,
        "missing": missing,
        "problem": problem,
    }


def connection_problem(name: str, connections: Collection[str] | None = None) -> str:
    """Why `<prefix>/<model>` cannot run when its prefix is neither a provider
    nor a stored connection (as the turn would fail); else ""."""
    prefix = provider_of(name)
    if not is_connection_name(name) or prefix in LITELLM_PROVIDERS:
        return ""
    if connections is None:
        connections = connection_names()
    if prefix in connections:
        return ""
    return (
        f"No model connection is named {prefix}. "
        "Staff add connections on the Models page."
    )


def missing_variables(name: str) -> list[str]:
    """What the environment lacks for this model; alternatives read "A or B".

    Providers Toolcrib does not list (bedrock, vertex_ai, ...) take their credentials
    the way LiteLLM finds them, and count as configured.
    """
    provider = PROVIDERS.get(provider_of(name))
    if provider is None:
        return []
    if provider.name == "google" and _uses_vertex():
        return [] if _value("GOOGLE_CLOUD_PROJECT") else ["GOOGLE_CLOUD_PROJECT"]
    missing = []
    base = _first(provider.bases)
    if provider.base_required and not base:
        missing.append(" or ".join(provider.bases))
    key_optional = provider.key_optional_with_base and base
    if provider.key_required and not key_optional and not _first(provider.keys):
        missing.append(" or ".join(provider.keys))
    return missing


def check_model(name: str) -> None:
    """Raise ModelNotConfigured, naming the missing variables, unless `name` can run."""
    missing = missing_variables(name)
    if missing:
        raise ModelNotConfigured(
            f"The model {name} is not configured: set {' and '.join(missing)} "
            "in the server's environment."
        )


def check_agent_models(root: BaseNode) -> list[BaseLlm]:
    """Check every model an agent tree will call, before any of them is called.

    Models given in code as instances carry their own configuration and are not
    checked. Returns the models, resolved as ADK will call them.
    """
    models = []
    for agent in walk(root):
        if not isinstance(agent, LlmAgent):
            continue
        try:
            model = agent.canonical_model
        except ValueError as exc:
            first_line = str(exc).splitlines()[0]
            raise ModelNotConfigured(f"{first_line} (agent {agent.name})") from exc
        if isinstance(model, ConfiguredModel):
            check_model(model.model)
        models.append(model)
    return models


async def aprepare_models(root: BaseNode) -> None:
    """Check an agent tree's models (see check_agent_models), then warm them up.

    A model's first call may import a heavy library (litellm: 3-7 s); warming up
    does that in a thread, so other turns on this event loop keep streaming.
    """
    for model in check_agent_models(root):
        if isinstance(model, ConfiguredModel):
            await model.awarm_up()


def walk(root: BaseNode) -> Iterator[BaseAgent]:
    """An agent and all its sub-agents, depth first; a workflow's agents too."""
    return walk_agents(root)


class ConfiguredModel:
    """Marks a model class whose credentials come from settings (agents.adk.llms)."""

    async def awarm_up(self) -> None:
        """Load what the first call would load, off the event loop. Nothing here."""


def litellm_kwargs(name: str) -> dict[str, Any]:
    """Arguments for litellm.acompletion: key, base URL, timeout, retries.

    Every key is present (None when unset), so refreshing a model's arguments from
    these also clears a value that was removed.
    """
    kwargs: dict[str, Any] = {
        "api_key": None,
        "api_base": None,
        "timeout": settings.TOOLCRIB_MODEL_TIMEOUT,
        "max_retries": settings.TOOLCRIB_MODEL_RETRIES,
    }
    provider = PROVIDERS.get(provider_of(name))
    if provider is None:
        return kwargs
    kwargs["api_base"] = _first(provider.bases)
    kwargs["api_key"] = _first(provider.keys)
    if not kwargs["api_key"] and provider.key_optional_with_base and kwargs["api_base"]:
        kwargs["api_key"] = NO_KEY
    for kwarg, variable in provider.extra.items():
        kwargs[kwarg] = _value(variable)
    return kwargs


def is_connection_name(name: str) -> bool:
    """Whether `name` may name a stored connection's model: a prefix that is no
    environment provider's."""
    return (
        "/" in name
        and not name.startswith(OFFLINE_PREFIX)
        and provider_of(name) not in PROVIDERS
    )


async def acall_kwargs(name: str) -> dict[str, Any]:
    """litellm_kwargs(), or for a stored connection's model, its LiteLLM model,
    provider, base URL and key as of the latest change (one query; none for other
    names).

    The provider is passed as LiteLLM's `custom_llm_provider` because ADK decides
    by it, not by the connection's name, how to shape a request: an Ollama
    connection's messages as `ollama_chat` wants them, a Gemma 4 model's tool
    results in the role its server takes.
    """
    kwargs = litellm_kwargs(name)
    if not is_connection_name(name):
        return kwargs
    target = await sync_to_async(target_for)(name)
    if target is None:
        return kwargs
    return {
        **kwargs,
        "model": target.litellm_model,
        "custom_llm_provider": target.provider,
        "api_base": target.api_base,
        "api_key": target.api_key,
    }


async def acheck_connection(name: str, *, litellm_providers: Sequence[str]) -> None:
    """Raise ModelNotConfigured for `<prefix>/<model>` when the prefix is neither a
    stored connection nor a provider LiteLLM knows."""
    if not is_connection_name(name) or provider_of(name) in litellm_providers:
        return
    if await sync_to_async(target_for)(name) is None:
        prefix = provider_of(name)
        raise ModelNotConfigured(
            f"The model {name} is not configured: no model connection is named "
            f"{prefix}. Staff add connections on the Models page."
        )


def gemini_client_kwargs() -> dict[str, Any]:
    """Arguments for google.genai.Client: an API key, or Vertex AI's project."""
    if _uses_vertex():
        return {
            "vertexai": True,
            "project": _value("GOOGLE_CLOUD_PROJECT"),
            "location": _value("GOOGLE_CLOUD_LOCATION") or "us-central1",
        }
    return {"api_key": _first(PROVIDERS["google"].keys)}


def openai_client_kwargs() -> dict[str, Any]:
    """Key and base URL for ADK's native OpenAI model (bare ``gpt-...`` names)."""
    kwargs = litellm_kwargs("openai/any")
    return {"api_key": kwargs["api_key"], "base_url": kwargs["api_base"]}


def describe_model_error(exc: BaseException) -> tuple[str, str] | None:
    """The code and message a user reads for a provider's failure, or None.

    Recognizes LiteLLM's and the openai SDK's exceptions by what they carry (an
    HTTP status, a provider) rather than by importing either library.
    """
    if isinstance(exc, NodeTimeoutError):  # a workflow node's own limit, no model's
        return None
    provider = getattr(exc, "llm_provider", None)
    status = getattr(exc, "status_code", None)
    timed_out = "Timeout" in type(exc).__name__ or status == 408
    if provider is None and status is None and not timed_out:
        return None
    model = _failed_model(exc)
    detail = _detail(exc)
    if timed_out:
        seconds = settings.TOOLCRIB_MODEL_TIMEOUT
        return (
            "MODEL_TIMEOUT",
            f"The model {model} did not answer within {seconds:g} seconds.",
        )
    if status in (401, 403):
        keys = PROVIDERS.get(str(provider), Provider("")).keys
        check = f" Check {' or '.join(keys)}." if keys else ""
        if is_connection_name(model):
            check = " Check its connection's key on the Models page."
        return (
            "MODEL_AUTH_FAILED",
            f"The provider of {model} rejected the credentials (HTTP {status}).{check}",
        )
    if status == 429:
        return (
            "MODEL_RATE_LIMITED",
            f"The provider of {model} is limiting requests (HTTP 429): {detail}",
        )
    if isinstance(status, int) and status >= 500:
        return (
            "MODEL_PROVIDER_ERROR",
            f"The provider of {model} failed (HTTP {status}): {detail}",
        )
    return (
        "MODEL_REQUEST_FAILED",
        f"The provider of {model} refused the request (HTTP {status}): {detail}",
    )


def _failed_model(exc: BaseException) -> str:
    named = getattr(exc, "toolcrib_model", None)
    if named:
        return str(named)
    provider, model = getattr(exc, "llm_provider", None), getattr(exc, "model", None)
    if provider and model and not str(model).startswith(f"{provider}/"):
        return f"{provider}/{model}"
    return str(model or "model")


def _detail(exc: BaseException) -> str:
    # LiteLLM prefixes its class names: "litellm.X: X: OpenAIException - <detail>".
    text = str(getattr(exc, "message", None) or exc)
    return text.rsplit(" - ", 1)[-1].strip()[:300]


def _uses_vertex() -> bool:
    return _value("GOOGLE_GENAI_USE_VERTEXAI").lower() in {"1", "true", "yes"}


def _value(variable: str) -> str:
    return settings.TOOLCRIB_PROVIDER_ENV.get(variable, "")


def _first(variables: tuple[str, ...]) -> str | None:
    return next((_value(v) for v in variables if _value(v)), None)


register_models()
