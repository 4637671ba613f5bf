"""The prompt library over REST (docs/prompts.md).

- `GET /api/prompts/`: the prompts I may use (mine, and those shared to my groups),
  by command; `?q=` narrows to a command or title holding the text.
- `POST /api/prompts/`: a new prompt of mine; `PUT /api/prompts/{id}/` changes one
  as a whole, `DELETE` removes it (its owner or staff).
- `GET /api/prompts/groups/`: the groups I may share a prompt to.
"""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from agents import prompts
from agents.api.inputs import JSONParser, validated
from agents.inputs import SEARCH_MAX_CHARS, PromptInput, variables_of
from agents.models import Prompt
from agents.params import ID_CONVERTER


class PromptSerializer(serializers.ModelSerializer):
    """A prompt as I may use it: `variables` are the `{{names}}` its text asks for."""

    owner = serializers.CharField(source="owner.username", read_only=True)
    groups = serializers.SerializerMethodField()
    variables = serializers.SerializerMethodField()
    mine = serializers.SerializerMethodField(help_text="I own it.")
    can_change = serializers.SerializerMethodField(
        help_text="I may change and delete it (its owner, or staff)."
    )

    class Meta:
        model = Prompt
        fields = [
            "id",
            "command",
            "title",
            "description",
            "body",
            "variables",
            "groups",
            "owner",
            "mine",
            "can_change",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    def get_groups(self, prompt: Prompt) -> list[str]:
        return sorted(group.name for group in prompt.groups.all())

    def get_variables(self, prompt: Prompt) -> list[str]:
        return variables_of(prompt.body)

    def get_mine(self, prompt: Prompt) -> bool:
        return prompt.owner_id == self.context["request"].user.pk

    def get_can_change(self, prompt: Prompt) -> bool:
        return prompts.may_change(self.context["request"].user, prompt)


class GroupNameSerializer(serializers.Serializer):
    name = serializers.CharField()


class PromptViewSet(viewsets.GenericViewSet):
    """My prompt library: my prompts and those shared to my groups."""

    serializer_class = PromptSerializer
    permission_classes = [permissions.IsAuthenticated]
    parser_classes = [JSONParser]
    lookup_value_converter = ID_CONVERTER

    def get_queryset(self):
        return prompts.visible_to(self.request.user)

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "q", str, description="Only prompts whose command or title holds this."
            )
        ]
    )
    def list(self, request: Request) -> Response:
        """The prompts I may use, by command (at most 500)."""
        found = prompts.usable_by(request.user)
        query = request.query_params.get("q", "").strip()[:SEARCH_MAX_CHARS]
        if query:
            found = prompts.matching(found, query)
        page = found[: prompts.LIST_MAX]
        return Response(self.get_serializer(page, many=True).data)

    @extend_schema(request=PromptInput, responses={201: PromptSerializer})
    def create(self, request: Request) -> Response:
        """Add a prompt of mine, shared to the groups named (mine only)."""
        values = validated(PromptInput, request.data)
        saved = prompts.save_prompt(request.user, values)
        return Response(self.get_serializer(saved.prompt).data, status=201)

    def retrieve(self, request: Request, pk=None) -> Response:
        """One prompt I may use."""
        return Response(self.get_serializer(prompts.get_prompt(request.user, pk)).data)

    @extend_schema(request=PromptInput, responses=PromptSerializer)
    def update(self, request: Request, pk=None) -> Response:
        """Change a prompt as a whole (its owner, or staff)."""
        values = validated(PromptInput, request.data)
        prompt = prompts.get_prompt(request.user, pk)
        saved = prompts.save_prompt(request.user, values, prompt)
        return Response(self.get_serializer(saved.prompt).data)

    def destroy(self, request: Request, pk=None) -> Response:
        """Remove a prompt (its owner, or staff)."""
        prompts.delete_prompt(request.user, prompts.get_prompt(request.user, pk))
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(responses=GroupNameSerializer(many=True))
    @action(detail=False, methods=["get"], url_path="groups")
    def groups(self, request: Request) -> Response:
        """The groups I may share a prompt to: mine (staff: every group)."""
        names = prompts.shareable_groups(request.user).values_list("name", flat=True)
        return Response([{"name": name} for name in names])
