"""The admin of stored imports (imported by toolsets.admin): add, refresh, delete.

Like the API, it goes through toolsets.import_registry: a registration is read
before it is stored, and its secrets are never shown again (the change page offers
only the `enabled` switch, and a summary without env or header values).
"""

import json
from typing import Any

import pydantic
from asgiref.sync import async_to_sync
from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from toolsets.import_registry import (
    aread,
    check_name_free,
    delete_import,
    refresh_import,
    store_import,
)
from toolsets.imports.registrations import (
    ImportFailed,
)
from toolsets.imports.stored import MODELS, shown_of_row
from toolsets.models import ToolImport

EXAMPLES = (
    'MCP: {"name": "calc", "command": ["python", "server.py"], "env": {"TOKEN": "..."}}'
    ' or {"name": "gh", "url": "https://mcp.example/mcp", "headers": {...}}. '
    'OpenAPI: {"name": "pets", "url": "https://api.example/openapi.json"}. '
    'A2A: {"name": "trips", "url": "https://agents.example/.well-known/'
    'agent-card.json", "token": "..."}.'
)


class ToolImportAddForm(forms.ModelForm):
    """A new import: its kind and registration (JSON), read before it is saved."""

    registration = forms.JSONField(
        widget=forms.Textarea(attrs={"rows": 8, "cols": 80}), help_text=EXAMPLES
    )

    class Meta:
        model = ToolImport
        fields = ["kind", "registration", "enabled"]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        kind, fields = data.get("kind"), data.get("registration")
        if not kind or fields is None:
            return data
        model = MODELS[kind]
        try:
            registration = model.model_validate(fields)
            check_name_free(registration.name)
            self.reading = async_to_sync(aread)(registration)
        except pydantic.ValidationError as exc:
            errors = exc.errors(include_input=False, include_url=False)
            raise forms.ValidationError([e["msg"] for e in errors]) from None
        except ImportFailed as exc:
            raise forms.ValidationError(str(exc)) from None
        self.parsed = registration
        return data


@admin.register(ToolImport)
class ToolImportAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "enabled", "toolset", "last_refreshed_at"]
    list_filter = ["kind", "enabled"]
    search_fields = ["name"]
    actions = ["refresh_selected"]
    readonly_fields = [
        "name",
        "kind",
        "origin",
        "summary",
        "toolset",
        "created_by",
        "created_at",
        "last_refreshed_at",
        "last_error",
    ]

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = ToolImportAddForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request, obj=None) -> list[str]:
        if obj is None:
            return ["kind", "registration", "enabled"]
        return ["enabled", *self.readonly_fields]

    def get_readonly_fields(self, request, obj=None) -> list[str]:
        return self.readonly_fields if obj is not None else []

    @admin.display(description="Origin")
    def origin(self, obj: ToolImport) -> str:
        return shown_of_row(obj)[0]

    @admin.display(description="Registration (without secrets)")
    def summary(self, obj: ToolImport) -> str:
        return json.dumps(shown_of_row(obj)[1], indent=1)

    def save_model(self, request, obj: ToolImport, form, change: bool) -> None:
        if change:
            obj.save()  # only `enabled` is editable: a new version for every process
            return
        store_import(
            registration=form.parsed,
            reading=form.reading,
            created_by=request.user,
            enabled=form.cleaned_data["enabled"],
            row=obj,
        )

    def delete_model(self, request, obj: ToolImport) -> None:
        delete_import(row=obj)

    def delete_queryset(self, request, queryset: QuerySet[ToolImport]) -> None:
        for row in queryset:
            delete_import(row=row)

    @admin.action(description="Refresh the selected imports (read them again)")
    def refresh_selected(self, request: HttpRequest, queryset: QuerySet[ToolImport]):
        for row in queryset:
            try:
                report = refresh_import(row=row)
            except ImportFailed as exc:
                self.message_user(request, f"{row.name}: {exc}", messages.ERROR)
                continue
            self.message_user(
                request,
                f"{row.name}: {len(report.created)} new, "
                f"{len(report.missing)} missing tool(s).",
            )
