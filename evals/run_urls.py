"""The eval runs' API routes (evals/api/runs.py), under /api/."""

from django.urls import path

import agents.client_input  # noqa: F401 - registers the <id:...> converter
from evals.api.runs import EvalRunCancelView, EvalRunView, EvalSetRunsView

urlpatterns = [
    path("evalsets/<id:set_id>/runs/", EvalSetRunsView.as_view(), name="evalset-runs"),
    path("evalset-runs/<id:pk>/", EvalRunView.as_view(), name="evalset-run"),
    path(
        "evalset-runs/<id:pk>/cancel/",
        EvalRunCancelView.as_view(),
        name="evalset-run-cancel",
    ),
]
