"""The admin of the catalog, grants and audit. Every change goes through toolsets.grants.

Provider links (ProviderIdentity) are listed and may be deleted here; they are made
by a sign-in, by their user (/oidc/link/) or by staff (the users API), never edited."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin
from django.contrib.auth.models import Group
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from project.admin_lists import GrowingTableAdmin, choices_filter
from project.periods import EVERYONE_WEEKS
from toolsets import (
    grants,
    groups,
    import_admin,  # noqa: F401 - ToolImportAdmin
    policies,
)
from toolsets.grant_conditions import parse_condition
from toolsets.models import (
    Grant,
    ProviderIdentity,
    Tool,
    ToolCall,
    ToolCallTotal,
    Toolset,
)


class GrantActionForm(forms.Form):
    """Whom the selected toolsets or tools are granted to (or denied), until when."""

    user = forms.ModelChoiceField(get_user_model().objects.all(), required=False)
    group = forms.ModelChoiceField(Group.objects.all(), required=False)
    expires_at = forms.DateTimeField(
        required=False, help_text="Optional, e.g. 2030-01-31 18:00."
    )

    def clean(self) -> dict:
        data = super().clean()
        if bool(data.get("user")) == bool(data.get("group")):
            raise forms.ValidationError("Choose exactly one of a user and a group.")
        expires = data.get("expires_at")
        if expires is not None and expires <= timezone.now():
            self.add_error("expires_at", "Must be in the future.")
        return data


def _grant_action(modeladmin, request: HttpRequest, queryset: QuerySet, effect: str):
    form = GrantActionForm(request.POST if "apply" in request.POST else None)
    if form.is_valid():
        for target in queryset:
            grants.grant_tool(
                target=target,
                effect=effect,
                user=form.cleaned_data["user"],
                group=form.cleaned_data["group"],
                expires_at=form.cleaned_data["expires_at"],
                created_by=request.user,
            )
        count = len(queryset)
        modeladmin.message_user(request, f"{effect}: {count} grant(s) saved.")
        return None
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": f"{effect.capitalize()} access",
        "opts": modeladmin.model._meta,
        "form": form,
        "targets": queryset,
        "effect": effect,
        "action": request.POST.get("action", ""),
        "selected": request.POST.getlist(ACTION_CHECKBOX_NAME),
    }
    return TemplateResponse(request, "admin/toolsets/grant_action.html", context)


@admin.action(description="Allow the selected to a user or group…")
def allow_selected(modeladmin, request, queryset):
    return _grant_action(modeladmin, request, queryset, Grant.Effect.ALLOW)


@admin.action(description="Deny the selected to a user or group…")
def deny_selected(modeladmin, request, queryset):
    return _grant_action(modeladmin, request, queryset, Grant.Effect.DENY)


@admin.register(Toolset)
class ToolsetAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "source",
        "default_policy",
        "enabled",
        "active_by_default",
        "missing",
    ]
    list_filter = [
        "source",
        "default_policy",
        "enabled",
        "active_by_default",
        "missing",
    ]
    search_fields = ["name", "description"]
    readonly_fields = ["source", "origin", "missing", "created_at", "updated_at"]
    actions = [
        allow_selected,
        deny_selected,
        "enable",
        "disable",
        "make_open",
        "make_granted_only",
    ]

    def save_model(self, request, obj: Toolset, form, change: bool) -> None:
        grants.update_toolset(toolset=obj)

    def delete_model(self, request, obj: Toolset) -> None:
        obj.delete()
        grants.catalog_changed(tools=[obj.name])

    def delete_queryset(self, request, queryset: QuerySet[Toolset]) -> None:
        names = list(queryset.values_list("name", flat=True))
        queryset.delete()
        grants.catalog_changed(tools=names)

    def _update(self, request, queryset: QuerySet[Toolset], **changes) -> None:
        for toolset in queryset:
            grants.update_toolset(toolset=toolset, **changes)
        self.message_user(request, f"{len(queryset)} toolset(s) changed.")

    @admin.action(description="Enable the selected toolsets")
    def enable(self, request, queryset):
        self._update(request, queryset, enabled=True)

    @admin.action(description="Disable the selected toolsets (kill switch)")
    def disable(self, request, queryset):
        self._update(request, queryset, enabled=False)

    @admin.action(description="Default policy: open")
    def make_open(self, request, queryset):
        self._update(request, queryset, default_policy=Toolset.Policy.OPEN)

    @admin.action(description="Default policy: granted only")
    def make_granted_only(self, request, queryset):
        self._update(request, queryset, default_policy=Toolset.Policy.GRANTED_ONLY)


class ToolAdminForm(forms.ModelForm):
    """A tool; its policy override is checked like the API checks it."""

    class Meta:
        model = Tool
        fields = ["policy"]  # the admin adds the others it shows

    def clean_policy(self) -> dict:
        try:
            return policies.check_override(self.cleaned_data.get("policy"))
        except policies.PolicyError as error:
            raise forms.ValidationError(
                [
                    f"{name}: {' '.join(problems)}"
                    for name, problems in error.errors.items()
                ]
            ) from error


@admin.register(Tool)
class ToolAdmin(admin.ModelAdmin):
    form = ToolAdminForm
    # Listed: a form's Meta.fields would otherwise be all the page edits.
    fields = [
        "toolset",
        "name",
        "full_name",
        "description",
        "parameters",
        "risk",
        "enabled",
        "requires_approval",
        "approver_group",
        "approval_timeout",
        "approvals_required",
        "requester_may_approve",
        "policy",
        "missing",
        "created_at",
        "updated_at",
    ]
    list_display = [
        "full_name",
        "toolset",
        "risk",
        "enabled",
        "requires_approval",
        "missing",
    ]
    list_filter = ["risk", "enabled", "requires_approval", "missing", "toolset"]
    search_fields = ["full_name", "description"]
    readonly_fields = [
        "toolset",
        "name",
        "full_name",
        "parameters",
        "missing",
        "created_at",
        "updated_at",
    ]
    actions = [allow_selected, deny_selected, "enable", "disable"]

    def has_add_permission(self, request) -> bool:
        return False  # Tools come from code: `manage.py sync_tools`.

    def save_model(self, request, obj: Tool, form, change: bool) -> None:
        grants.update_tool(tool=obj)

    def delete_model(self, request, obj: Tool) -> None:
        obj.delete()
        grants.catalog_changed(tools=[obj.full_name])

    def delete_queryset(self, request, queryset: QuerySet[Tool]) -> None:
        names = list(queryset.values_list("full_name", flat=True))
        queryset.delete()
        grants.catalog_changed(tools=names)

    @admin.action(description="Enable the selected tools")
    def enable(self, request, queryset):
        for tool in queryset:
            grants.update_tool(tool=tool, enabled=True)

    @admin.action(description="Disable the selected tools (kill switch)")
    def disable(self, request, queryset):
        for tool in queryset:
            grants.update_tool(tool=tool, enabled=False)


@admin.register(Grant)
class GrantAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "effect",
        "user",
        "group",
        "toolset",
        "tool",
        "expires_at",
        "created_by",
        "created_at",
    ]
    list_filter = ["effect", "toolset"]
    search_fields = [
        "user__username",
        "group__name",
        "toolset__name",
        "tool__full_name",
    ]
    autocomplete_fields = ["user", "group", "toolset", "tool"]
    # A condition is checked against its tool's arguments: set it over the API.
    readonly_fields = [
        "condition",
        "otherwise",
        "approvals_required",
        "created_by",
        "created_at",
    ]

    def get_readonly_fields(self, request, obj=None) -> list[str]:
        if obj is None:
            return self.readonly_fields
        # A grant's subject and target are what it is: change them with a new grant.
        return [*self.readonly_fields, "user", "group", "toolset", "tool"]

    def save_model(self, request, obj: Grant, form, change: bool) -> None:
        grant, created = grants.grant_tool(
            target=obj.tool or obj.toolset,
            effect=obj.effect,
            user=obj.user,
            group=obj.group,
            expires_at=obj.expires_at,
            # Kept as it was (read only here); a deny carries none.
            condition=parse_condition(obj.condition) if obj.effect == "allow" else None,
            otherwise=obj.otherwise,
            approvals_required=obj.approvals_required,
            created_by=obj.created_by or request.user,
        )
        if not change and not created:
            self.message_user(
                request, "That grant existed: it was updated.", messages.INFO
            )
        obj.pk, obj.created_at, obj.created_by = (
            grant.pk,
            grant.created_at,
            grant.created_by,
        )

    def delete_model(self, request, obj: Grant) -> None:
        grants.revoke(grant=obj)

    def delete_queryset(self, request, queryset: QuerySet[Grant]) -> None:
        for grant in queryset:
            grants.revoke(grant=grant)


def _calling_agents() -> list[str]:
    """Every agent or client that called a tool: the agents of every user's weekly
    totals (a few rows a week), not the distinct agents of every call."""
    weeks = ToolCallTotal.objects.filter(user_id=EVERYONE_WEEKS)
    return list(weeks.order_by("agent").values_list("agent", flat=True).distinct())


@admin.register(ToolCall)
class ToolCallAdmin(GrowingTableAdmin):
    list_display = [
        "started_at",
        "user",
        "agent",
        "tool_full_name",
        "status",
        "decided_by",
        "attempts",
        "duration_ms",
    ]
    list_filter = ["status", choices_filter("agent", _calling_agents, _("agent"))]
    search_fields = ["tool_full_name", "tool_name", "user__username", "session_id"]
    # No date drill-down: it reads every call's month (0.8 s at 200,000 calls);
    # the audit page filters by time.

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # The audit is never edited.


@admin.register(ProviderIdentity)
class ProviderIdentityAdmin(admin.ModelAdmin):
    list_display = [
        "user",
        "subject",
        "issuer",
        "linked_by",
        "created_at",
        "last_sign_in_at",
    ]
    list_filter = ["linked_by", "issuer"]
    list_select_related = ["user"]
    search_fields = ["user__username", "subject"]

    def has_add_permission(self, request) -> bool:
        return False  # PUT /api/users/<username>/identity/ links, by subject.

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class GroupNameForm(forms.ModelForm):
    """Django's group form, refusing a name that looks like another group's."""

    class Meta:
        model = Group
        fields = ["name", "permissions"]

    def clean_name(self) -> str:
        name = self.cleaned_data["name"]
        other_than = self.instance if self.instance.pk else None
        existing = groups.confusable_with(name, other_than=other_than)
        if existing is not None and existing != name:
            raise forms.ValidationError(str(groups.GroupNameConfusable(name, existing)))
        return name


admin.site.unregister(Group)


@admin.register(Group)
class ConfusableCheckedGroupAdmin(GroupAdmin):
    """The admin's groups, under the same naming rule as /api/groups/."""

    form = GroupNameForm
