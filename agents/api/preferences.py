"""My display preferences over REST (docs/i18n.md): GET/PATCH /api/me/preferences/.

`theme`: system (the operating system's), light or dark; `language`: auto (the
browser's) or a code of settings.LANGUAGES, listed in `languages`.
"""

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.api.inputs import JSONParser, validated
from agents.preferences import (
    DisplayPreferencesInput,
    Preferences,
    preferences_of,
    set_preferences,
)


class PreferenceLanguageSerializer(serializers.Serializer):
    code = serializers.CharField()
    name = serializers.CharField(help_text="The language's name in itself.")


class DisplayPreferencesSerializer(serializers.Serializer):
    theme = serializers.ChoiceField(choices=["system", "light", "dark"])
    language = serializers.CharField(help_text="auto (the browser's), or a code.")
    languages = PreferenceLanguageSerializer(
        many=True, help_text="The languages to choose."
    )


class MyPreferencesView(APIView):
    """My theme and language."""

    parser_classes = [JSONParser]

    @extend_schema(
        responses=DisplayPreferencesSerializer, operation_id="me_preferences_get"
    )
    def get(self, request: Request) -> Response:
        """My theme and language (the defaults until I choose)."""
        return Response(_preferences(preferences_of(user=request.user)))

    @extend_schema(
        request=DisplayPreferencesInput,
        responses=DisplayPreferencesSerializer,
        operation_id="me_preferences_update",
    )
    def patch(self, request: Request) -> Response:
        """Change my theme, my language or both; what is left out stays."""
        body = validated(DisplayPreferencesInput, request.data)
        stored = set_preferences(
            user=request.user, theme=body.theme, language=body.language
        )
        return Response(_preferences(stored))


def _preferences(chosen: Preferences) -> dict:
    return {
        "theme": chosen.theme,
        "language": chosen.language,
        "languages": [{"code": c, "name": n} for c, n in settings.LANGUAGES],
    }
