"""The REST API: Django REST framework and its OpenAPI schema."""

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "agents.tokens.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # Every error status of every operation, with its body (agents/api/schema.py).
    "DEFAULT_SCHEMA_CLASS": "agents.api.schema.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": None,
    "EXCEPTION_HANDLER": "agents.api.errors.exception_handler",
    # The one input rule and depth bound of agents/inputs/rule.py, on every body.
    "DEFAULT_PARSER_CLASSES": [
        "agents.api.inputs.JSONParser",
        "agents.api.inputs.FormParser",
        "agents.api.inputs.MultiPartParser",
    ],
    "DEFAULT_RENDERER_CLASSES": [
        "agents.api.inputs.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Toolcrib API",
    "DESCRIPTION": "Run ADK agents and govern their tools.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # 3.1: the event frames' schemas come from pydantic, whose `null` type 3.0 lacks.
    "OAS_VERSION": "3.1.0",
    "ENUM_NAME_OVERRIDES": {
        "ImportKindEnum": "toolsets.models.ToolImport.Kind",
        "SessionStatusEnum": "agents.session_list.Status.ALL",
        "DeliveryStatusEnum": "agents.models.Delivery.Status",
        "EvalRunStatusEnum": "evals.models.EvalRun.Status",
        "EvalCaseResultStatusEnum": "evals.models.EvalCaseResult.Status",
        # A call's and a credential's request: asked, then answered.
        "AnswerableRequestStatusEnum": [("pending", "Pending"), ("answered", "Answered")],
    },
    # Path ids typed as their converters take them (agents/params.py): a row id is
    # 1 to the bigint maximum; a name is anything but a slash or a NUL.
    "PATH_CONVERTER_OVERRIDES": {
        "id": {"type": "integer", "minimum": 1, "maximum": 9223372036854775807},
        "name": {"type": "string", "pattern": "^[^/\\x00]+$"},
        "filename": {"type": "string", "pattern": "^[^\\x00]+$"},
    },
}
