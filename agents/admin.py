from django.contrib import admin

from agents.models import AgentSpec, AppState, Event, Run, Session, UserState


@admin.register(AgentSpec)
class AgentSpecAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "source",
        "kind",
        "model",
        "is_active",
        "missing",
        "updated_at",
    ]
    list_filter = ["source", "kind", "is_active"]
    search_fields = ["name", "description"]
    filter_horizontal = ["sub_agents"]

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and obj.source == AgentSpec.Source.CODE:
            return [
                "name",
                "source",
                "dotted_path",
                "kind",
                "instruction",
                "description",
            ]
        return ["source", "dotted_path"]


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin):
    list_display = ["id", "app_name", "owner", "last_seq", "updated_at"]
    list_filter = ["app_name"]
    readonly_fields = ["last_seq", "revision", "last_update_time"]


@admin.register(Event)
class EventAdmin(admin.ModelAdmin):
    list_display = ["session", "seq", "kind", "author", "invocation_id"]
    list_filter = ["kind"]

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # Events are immutable once stored.


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["id", "session", "user", "status", "created_at", "total_tokens"]
    list_filter = ["status"]


admin.site.register(AppState)
admin.site.register(UserState)
