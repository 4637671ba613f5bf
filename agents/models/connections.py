"""Model connections staff make in the UI: a provider's endpoint, its sealed key,
and the models it serves with their prices; and the one version row every process
reads to know its cached connections are stale (agents.adk.connections).

An agent names a connection's model `<connection>/<model>` (docs/models.md). The
environment's providers (TOOLCRIB_PROVIDER_ENV) are not rows: they are listed
beside these, read-only. Their models and prices are rows here too, with no
connection and the provider's name in `env_provider`.
"""

import uuid

from django.db import models


class ModelConnection(models.Model):
    """One provider endpoint staff added: its kind, base URL and sealed key."""

    class Kind(models.TextChoices):
        OPENAI_COMPATIBLE = "openai_compatible", "OpenAI-compatible"
        OLLAMA = "ollama", "Ollama"
        GEMINI = "gemini", "Gemini"
        ANTHROPIC = "anthropic", "Anthropic"
        LITELLM = "litellm", "Any LiteLLM provider"

    name = models.SlugField(
        max_length=50,
        unique=True,
        help_text="What agents call it: <name>/<model>.",
    )
    kind = models.CharField(max_length=24, choices=Kind)
    base_url = models.URLField(max_length=500, blank=True)
    litellm_provider = models.CharField(
        max_length=50,
        blank=True,
        help_text="LiteLLM's provider prefix (groq, mistral, bedrock, ...), "
        "for the kind 'litellm'.",
    )
    # project.sealing, purpose "model-connection": never read back by the API.
    sealed_key = models.TextField(blank=True)
    # As a toolset's "granted only" policy: its models need a model grant's allow
    # (agents.model_grants); off, they are open unless a grant denies one.
    granted_only = models.BooleanField(
        default=False,
        help_text="Only users and groups a model grant allows may use its models.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"connection {self.name} ({self.kind})"


class ServedModel(models.Model):
    """A model a connection serves, with its optional prices per million tokens.

    Prices are in the billing currency per million tokens, so a run's cost in
    millionths of that currency is tokens x price (agents.usage.cost_of).
    """

    connection = models.ForeignKey(
        ModelConnection,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="models",
    )
    env_provider = models.CharField(
        max_length=50,
        blank=True,
        help_text="The environment's provider (openai, google, ...) of a model "
        "of a read-only connection; blank for a stored connection's.",
    )
    model = models.CharField(max_length=200, help_text="The provider's model id.")
    full_name = models.CharField(
        max_length=260,
        unique=True,
        help_text="The name an agent gives: <connection>/<model>.",
    )
    input_price = models.DecimalField(
        max_digits=12, decimal_places=6, null=True, blank=True
    )
    output_price = models.DecimalField(
        max_digits=12, decimal_places=6, null=True, blank=True
    )

    class Meta:
        ordering = ["full_name"]

    def __str__(self) -> str:
        return self.full_name


class ConnectionsVersion(models.Model):
    """One row (pk 1): a new stamp with every change to connections, models or
    prices, in its transaction, so each process's cache knows to read them again.
    A random stamp, not a counter: a table emptied and refilled never repeats one."""

    stamp = models.UUIDField(default=uuid.uuid4)

    def __str__(self) -> str:
        return f"connections version {self.stamp}"
