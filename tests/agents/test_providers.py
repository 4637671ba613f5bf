"""Model names -> providers: configuration, explicit credentials, readable failures."""

import threading

import litellm
import pytest
from django.conf import settings as django_settings
from google.adk.agents import LlmAgent
from google.adk.models import LLMRegistry, lite_llm
from google.adk.models.lite_llm import LiteLlm

from agents.adk.offline import OfflineLlm
from agents.adk.providers import (
    LITELLM_PROVIDERS,
    NO_KEY,
    PROVIDERS,
    ModelNotConfigured,
    aprepare_models,
    check_agent_models,
    describe_model_error,
    litellm_kwargs,
    model_info,
)


@pytest.fixture
def env(settings):
    """Set the provider variables for one test (nothing else is set)."""

    def set_env(**variables: str) -> None:
        settings.TOOLCRIB_PROVIDER_ENV = variables

    set_env()
    return set_env


def test_every_provider_variable_is_read_in_settings():
    named = {
        variable
        for provider in PROVIDERS.values()
        for variable in (*provider.keys, *provider.bases, *provider.extra.values())
    }

    assert named <= set(django_settings.MODEL_PROVIDER_VARIABLES)


@pytest.mark.parametrize(
    ("name", "provider", "missing"),
    [
        ("openai/gpt-4o", "openai", ["OPENAI_API_KEY"]),
        ("gpt-4o", "openai", ["OPENAI_API_KEY"]),
        ("gemini-2.5-flash", "google", ["GOOGLE_API_KEY or GEMINI_API_KEY"]),
        ("anthropic/claude-sonnet-4", "anthropic", ["ANTHROPIC_API_KEY"]),
        ("ollama_chat/llama3.2", "ollama_chat", []),
        ("hosted_vllm/qwen", "hosted_vllm", ["HOSTED_VLLM_API_BASE"]),
        ("azure/my-gpt", "azure", ["AZURE_API_BASE", "AZURE_API_KEY"]),
        ("bedrock/anthropic.claude-3", "bedrock", []),
    ],
)
def test_model_info_names_what_is_missing(env, name, provider, missing):
    info = model_info(name)

    assert info["provider"] == provider
    assert info["missing"] == missing
    assert info["configured"] is (not missing)
    assert info["offline"] is False


def test_model_info_is_configured_once_the_key_is_set(env):
    env(GEMINI_API_KEY="g-key", OPENAI_API_KEY="sk-1")

    assert model_info("gemini-2.5-flash")["configured"] is True
    assert model_info("openai/gpt-4o")["configured"] is True
    assert model_info("offline/demo")["configured"] is True


def test_blank_model_is_the_default_model(env, settings):
    settings.TOOLCRIB_DEFAULT_MODEL = "openai/gpt-4o-mini"

    assert model_info("")["name"] == "openai/gpt-4o-mini"
    assert model_info("")["missing"] == ["OPENAI_API_KEY"]


def test_an_openai_compatible_server_needs_only_its_base_url(env):
    env(OPENAI_API_BASE="http://127.0.0.1:9/v1")

    assert model_info("openai/local-model")["configured"] is True
    kwargs = litellm_kwargs("openai/local-model")
    assert kwargs["api_base"] == "http://127.0.0.1:9/v1"
    assert kwargs["api_key"] == NO_KEY


def test_litellm_gets_key_base_timeout_and_retries_from_settings(env, settings):
    env(ANTHROPIC_API_KEY="ak", ANTHROPIC_BASE_URL="http://proxy")
    settings.TOOLCRIB_MODEL_TIMEOUT = 7
    settings.TOOLCRIB_MODEL_RETRIES = 1

    assert litellm_kwargs("anthropic/claude-sonnet-4") == {
        "api_key": "ak",
        "api_base": "http://proxy",
        "timeout": 7,
        "max_retries": 1,
    }


@pytest.mark.parametrize(
    ("name", "class_name"),
    [
        ("openai/gpt-4o", "ToolcribLiteLlm"),
        ("ollama_chat/llama3.2", "ToolcribLiteLlm"),
        ("anthropic/claude-sonnet-4", "ToolcribLiteLlm"),
        ("gemini-2.5-flash", "ToolcribGemini"),
        ("gpt-4o", "ToolcribOpenAILlm"),
        ("offline/demo", "OfflineLlm"),
    ],
)
def test_model_names_resolve_to_classes_configured_from_settings(name, class_name):
    assert type(LLMRegistry.new_llm(name)).__name__ == class_name


def test_configured_models_carry_the_settings_values(env):
    env(OPENAI_API_KEY="sk-1", GOOGLE_API_KEY="g-1")

    lite = LLMRegistry.new_llm("openai/gpt-4o")
    gemini = LLMRegistry.new_llm("gemini-2.5-flash")
    native = LLMRegistry.new_llm("gpt-4o")

    assert isinstance(lite, LiteLlm)
    assert lite._additional_args["api_key"] == "sk-1"
    assert gemini.client_kwargs == {"api_key": "g-1"}
    assert native.api_key == "sk-1"


def test_vertex_ai_needs_a_project_instead_of_a_key(env):
    env(GOOGLE_GENAI_USE_VERTEXAI="true")
    assert model_info("gemini-2.5-flash")["missing"] == ["GOOGLE_CLOUD_PROJECT"]

    env(GOOGLE_GENAI_USE_VERTEXAI="true", GOOGLE_CLOUD_PROJECT="proj")
    gemini = LLMRegistry.new_llm("gemini-2.5-flash")
    assert gemini.client_kwargs == {
        "vertexai": True,
        "project": "proj",
        "location": "us-central1",
    }


async def test_agent_tree_check_names_the_missing_variable(env):
    sub = LlmAgent(name="helper", model="anthropic/claude-sonnet-4")
    root = LlmAgent(name="root", model="offline/demo", sub_agents=[sub])

    with pytest.raises(ModelNotConfigured, match="ANTHROPIC_API_KEY"):
        check_agent_models(root)


async def test_agent_tree_check_skips_models_given_as_instances(env):
    root = LlmAgent(name="root", model=LiteLlm(model="openai/gpt-4o", api_key="x"))
    plain = LlmAgent(name="plain", model=OfflineLlm())

    check_agent_models(root)
    check_agent_models(plain)


async def test_unknown_model_name_is_refused_with_adk_words(env):
    root = LlmAgent(name="root", model="no-such-model")

    with pytest.raises(ModelNotConfigured, match="Model no-such-model not found"):
        check_agent_models(root)


async def test_warming_up_imports_litellm_off_the_event_loop(env, monkeypatch):
    threads = []
    monkeypatch.setattr(
        lite_llm,
        "_ensure_litellm_imported",
        lambda: threads.append(threading.current_thread()),
    )

    await aprepare_models(LlmAgent(name="root", model="ollama_chat/llama3.2"))

    assert threads and threads[0] is not threading.current_thread()


class FakeProviderError(Exception):
    def __init__(self, status_code, message="boom", model="gpt-x"):
        super().__init__(message)
        self.status_code = status_code
        self.message = f"litellm.X: X: OpenAIException - {message}"
        self.llm_provider = "openai"
        self.model = model


class Timeout(Exception):
    llm_provider = "openai"
    model = "gpt-x"


@pytest.mark.parametrize(
    ("error", "code", "words"),
    [
        (FakeProviderError(401), "MODEL_AUTH_FAILED", "Check OPENAI_API_KEY"),
        (FakeProviderError(429), "MODEL_RATE_LIMITED", "HTTP 429"),
        (FakeProviderError(503, "overloaded"), "MODEL_PROVIDER_ERROR", "overloaded"),
        (FakeProviderError(400, "bad tools"), "MODEL_REQUEST_FAILED", "bad tools"),
        (Timeout(), "MODEL_TIMEOUT", "did not answer within"),
    ],
)
def test_provider_failures_read_clearly(error, code, words):
    described = describe_model_error(error)

    assert described is not None
    assert described[0] == code
    assert words in described[1]
    assert "openai/gpt-x" in described[1]


def test_other_failures_are_not_provider_failures():
    assert describe_model_error(ValueError("nope")) is None


def test_every_litellm_prefix_toolcrib_reserves_is_a_litellm_provider():
    known = {getattr(p, "value", p) for p in litellm.provider_list}
    assert LITELLM_PROVIDERS <= known
