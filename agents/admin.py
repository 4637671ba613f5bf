from typing import get_args

from django.contrib import admin
from django.contrib.auth.models import Group
from django.utils.translation import gettext_lazy as _

from agents.events.wire import Kind
from agents.models import (
    AgentSpec,
    AppState,
    Artifact,
    Budget,
    Event,
    MemoryEntry,
    ModelGrant,
    Request,
    Run,
    Session,
    UserState,
)
from project.admin_lists import GrowingTableAdmin, choices_filter


@admin.register(AgentSpec)
class AgentSpecAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "source",
        "kind",
        "model",
        "is_active",
        "missing",
        "retention_days",
        "updated_at",
    ]
    list_filter = ["source", "kind", "is_active"]
    search_fields = ["name", "description"]
    filter_horizontal = ["sub_agents", "groups"]

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and obj.source == AgentSpec.Source.CODE:
            return [
                "name",
                "source",
                "dotted_path",
                "kind",
                "instruction",
                "description",
                "history",
                "draft_of",
            ]
        return ["source", "dotted_path", "draft_of"]


def _agent_names() -> list[str]:
    return list(AgentSpec.objects.order_by("name").values_list("name", flat=True))


@admin.register(Session)
class SessionAdmin(GrowingTableAdmin):
    list_display = [
        "id",
        "title",
        "app_name",
        "owner",
        "last_seq",
        "created_at",
        "updated_at",
    ]
    ordering = ["-created_at"]  # session_newest: the last activity has no index
    list_filter = [
        choices_filter("app_name", _agent_names, _("agent")),
        ("archived_at", admin.EmptyFieldListFilter),
    ]
    search_fields = ["title", "id"]
    readonly_fields = ["adk_id", "last_seq", "revision", "last_update_time"]


@admin.register(Event)
class EventAdmin(GrowingTableAdmin):
    list_display = ["session", "seq", "kind", "author", "invocation_id"]
    list_filter = [choices_filter("kind", get_args(Kind), _("kind"))]
    ordering = ["-id"]  # the newest stored first

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # Events are immutable once stored.


@admin.register(Run)
class RunAdmin(GrowingTableAdmin):
    list_display = ["id", "session", "user", "status", "created_at", "total_tokens"]
    ordering = ["-created_at", "-id"]  # run_newest
    list_filter = ["status"]
    readonly_fields = ["handoffs"]


admin.site.register(AppState)
admin.site.register(UserState)


@admin.register(Artifact)
class ArtifactAdmin(admin.ModelAdmin):
    list_display = [
        "filename",
        "version",
        "app_name",
        "user_id",
        "session_key",
        "mime_type",
        "size",
        "created_at",
    ]
    list_filter = ["app_name", "mime_type"]
    search_fields = ["filename", "session_key", "user_id"]

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # A version is immutable; save a new one instead.


@admin.register(MemoryEntry)
class MemoryEntryAdmin(admin.ModelAdmin):
    list_display = ["app_name", "user_id", "author", "session_key", "is_deleted"]
    list_filter = ["app_name", "is_deleted"]
    search_fields = ["text", "user_id"]


def _group_names() -> list[str]:
    return list(Group.objects.order_by("name").values_list("name", flat=True))


@admin.register(Request)
class RequestAdmin(GrowingTableAdmin):
    """Pauses for a person, every kind. Read-only: an answer goes through
    agents.requests, which resumes the agent."""

    list_display = [
        "kind",
        "tool_name",
        "call_id",
        "session",
        "status",
        "answer_group",
        "answered_by",
        "expires_at",
        "created_at",
    ]
    list_filter = [
        "kind",
        "status",
        choices_filter("answer_group", _group_names, _("approver group")),
    ]
    search_fields = ["tool_name", "call_id", "session__id"]
    ordering = ["-id"]  # the newest made first

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Budget)
class BudgetAdmin(admin.ModelAdmin):
    """Daily token budgets: one per user, or one shared by a group's members."""

    list_display = ["__str__", "user", "group", "daily_tokens", "updated_at"]
    list_filter = ["group"]
    search_fields = ["user__username", "group__name"]
    autocomplete_fields = ["user", "group"]


@admin.register(ModelGrant)
class ModelGrantAdmin(admin.ModelAdmin):
    """Model grants: allow or deny a model to a user or a group (docs/models.md).
    A save or delete here bumps the grants' version too (agents.model_grants)."""

    list_display = ["__str__", "user", "group", "model", "effect", "expires_at"]
    list_filter = ["effect", "group"]
    search_fields = ["user__username", "group__name", "model"]
    autocomplete_fields = ["user", "group"]
    readonly_fields = ["created_by"]
