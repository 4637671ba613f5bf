"""evals' API URLs, mounted at /api/ (project/urls.py): the sets and their cases
(evals.api.sets); the runs' routes join them here."""

from django.urls import include, path
from rest_framework.routers import SimpleRouter

import agents.client_input  # noqa: F401 - registers the <id:...> path converter
from evals.api.sets import EvalCaseViewSet, EvalSetViewSet

# Path converters type each id: <id:pk> is ASCII digits in the bigint range.
router = SimpleRouter(use_regex_path=False)
router.register("evalsets", EvalSetViewSet, basename="evalset")
router.register("evalsets/<id:set_id>/cases", EvalCaseViewSet, basename="evalset-case")

urlpatterns = [path("", include(router.urls))]
