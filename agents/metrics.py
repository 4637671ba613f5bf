"""The runtime's side of the Prometheus metrics (project/metrics.py has the instruments).

`observe_run`: an ended turn counted, from its Run in memory (no query). `/metrics`:
the exposition, for a staff user's API token or session, or a client address in
TOOLCRIB_METRICS_ALLOW; at each scrape it adds what only the database knows
(approvals waiting, queued turns: two indexed COUNTs, `BacklogCollector`).
"""

import ipaddress
from collections.abc import Iterator

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.utils import timezone
from django.views.decorators.http import require_GET
from prometheus_client.core import GaugeMetricFamily

from agents.models import Request, Run
from agents.tokens import user_for_token
from project import metrics

TOKEN_PREFIX = "Token "


def observe_run(run: Run, *, status: str | None = None) -> None:
    """Count an ended turn: its status (else the Run's), duration and tokens."""
    started = run.started_at or run.created_at
    finished = run.finished_at or timezone.now()
    seconds = (finished - started).total_seconds() if started else 0.0
    metrics.observe_turn(
        agent=run.session.app_name,
        status=status or run.status,
        seconds=max(seconds, 0.0),
        input_tokens=run.prompt_tokens,
        output_tokens=run.completion_tokens,
    )


class BacklogCollector:
    """What waits, read from the database at scrape time."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        approvals = Request.objects.filter(
            kind=Request.Kind.APPROVAL, status=Request.Status.PENDING
        ).count()
        queued = Run.objects.filter(status=Run.Status.QUEUED).count()
        yield GaugeMetricFamily(
            "toolcrib_approvals_waiting",
            "Approval requests pending a person's decision.",
            value=approvals,
        )
        yield GaugeMetricFamily(
            "toolcrib_queued_turns", "Turns queued, not started yet.", value=queued
        )


@require_GET
def scrape(request: HttpRequest) -> HttpResponse:
    """The metrics in Prometheus' text format, for whoever may read them."""
    refusal = _refusal(request)
    if refusal is not None:
        return refusal
    body = metrics.exposition(extra=[BacklogCollector()])
    return HttpResponse(body, content_type=metrics.CONTENT_TYPE)


def _refusal(request: HttpRequest) -> HttpResponse | None:
    """None when the client may scrape; else 401 (who are you?) or 403 (not staff)."""
    if is_allowed_address(request.META.get("REMOTE_ADDR", "")):
        return None
    header = request.headers.get("Authorization", "")
    if header.startswith(TOKEN_PREFIX):
        user = user_for_token(token=header.removeprefix(TOKEN_PREFIX).strip())
    elif request.user.is_authenticated:
        user = request.user
    else:
        return _unauthorized()
    if user is None:
        return _unauthorized()
    if not user.is_staff:
        return HttpResponse("Staff only.\n", status=403, content_type="text/plain")
    return None


def _unauthorized() -> HttpResponse:
    response = HttpResponse(
        "A staff user's token is needed.\n", status=401, content_type="text/plain"
    )
    response["WWW-Authenticate"] = "Token"
    return response


def is_allowed_address(address: str) -> bool:
    """Whether the client's own address (REMOTE_ADDR) is in TOOLCRIB_METRICS_ALLOW."""
    allowed = settings.TOOLCRIB_METRICS_ALLOW
    if not allowed:
        return False
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in allowed)


# Included by project/urls.py at the root: Prometheus' default path, /metrics.
urlpatterns = [path("metrics", scrape, name="metrics")]
