from django.contrib import admin
from django.urls import include, path
from django.views.decorators.cache import cache_page
from django.views.i18n import JavaScriptCatalog
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from agents.sessions import access_session
from agents.shares.links import check_share
from frontend.urls import pages
from project.health import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    # Prometheus' scrape target (agents/metrics.py): staff or TOOLCRIB_METRICS_ALLOW.
    path("", include("agents.metrics")),
    path("admin/", admin.site.urls),
    # The pages' translations (docs/i18n.md), the active language's: cached an hour
    # per language (base.html asks with ?lang=, so a browser's cache is too).
    path(
        "jsi18n/",
        cache_page(3600)(JavaScriptCatalog.as_view(domain="djangojs")),
        name="javascript-catalog",
    ),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path(
        "api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"
    ),
    path("api/", include("toolsets.api.urls")),
    # The MCP gateway's personal access tokens; the gateway itself is /mcp (asgi.py).
    path("api/gateway/", include("toolsets.api.gateway_urls")),
    path("api/", include("agents.api.urls")),
    # Eval sets and their runs (evals/, docs/evals.md).
    path("api/", include("evals.urls")),
    # Eval runs (evals/api/runs.py): a set's runs, a run's results, cancel.
    path("api/", include("evals.run_urls")),
    # Single sign-on (toolsets/sso/): /oidc/authenticate/, /oidc/callback/, /oidc/link/.
    path("oidc/", include("toolsets.sso.urls")),
    # An invitation's link (toolsets/people/): the invitee makes her account.
    path("invite/", include("toolsets.people.urls")),
    # A notice's approve / reject links (agents/notices/, docs/notices.md).
    path("notices/", include("agents.notices.urls")),
    # The composition root: the pages get the runtime's session access check, and
    # the shared page its link check.
    path(
        "",
        include(pages(session_access=access_session, share_access=check_share)),
    ),
]
# Errors under /api/ answer JSON, like every other API error (agents/api/errors.py).
handler400 = "agents.api.errors.bad_request"
handler403 = "agents.api.errors.forbidden"
handler404 = "agents.api.errors.not_found"
handler500 = "agents.api.errors.server_error"
