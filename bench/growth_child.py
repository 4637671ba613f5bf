"""bench.growth's worker: builds one database (unless its marker says it is built),
then opens its endpoints one call at a time as the parent asks, over stdin and
stdout (lines `@@ <json>`), so the parent can alternate two databases' calls.

Started by `bench.growth` with DATABASE_URL and TOOLCRIB_DATA_DIR set.
"""

import bench.django_setup  # noqa: F401 - before any Django import

# isort: split

import argparse
import asyncio
import functools
import json
import random
import re
import sys
import time
import tracemalloc
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection, transaction
from django.test import Client, override_settings

from agents.models import AgentSpec, Event, Request, Run, Session
from agents.sessions import create_session
from agents.turns import executors
from agents.turns.start import start_turn
from agents.usage import count_ended_runs
from bench.growth import DAYS, shape
from project.sqlite import collect_statistics
from toolsets.api import exports
from toolsets.call_totals import count_all
from toolsets.gateway.auth import Caller
from toolsets.gateway.catalog import alist_tools
from toolsets.models import Grant, Tool, ToolCall, Toolset

AGENT = "weather_sentiment"
BATCH = 5000
HEAVY = "alice"  # the user with half the sessions
STAFF = "admin"
# Words of the generated messages: a few common ones, a long tail of rare ones.
COMMON = (
    "weather report forecast london paris please the today rain sunny cloudy"
    " tomorrow summary budget meeting notes invoice travel"
).split()
TAIL = [f"w{n:04d}x" for n in range(3000)]
SEARCH_ONE = "forecast"
SESSION_PAGE = 150  # events the session page reads first (frontend history.js)
SEARCH_TWO = "budget invoice"
HISTORY_PAGE = 5  # rows of a history list both databases hold as many of
ADMIN_PAGE = 20
ADMIN_LISTS = {
    "sessions": "/admin/agents/session/",
    "events": "/admin/agents/event/",
    "runs": "/admin/agents/run/",
    "requests": "/admin/agents/request/",
    "tool calls": "/admin/toolsets/toolcall/",
}
# ADK's function call ids (adk-<uuid>) and invocation ids (e-<uuid>), as stored.
_IDS = re.compile(r'"((?:adk|e)-[0-9a-f-]{8,})"')


def sentence(rng: random.Random) -> str:
    words = [
        rng.choice(COMMON) if rng.random() < 0.3 else rng.choice(TAIL)
        for _ in range(rng.randrange(4, 14))
    ]
    return " ".join(words)


# Building.


def build(scale: float) -> dict:
    call_command("migrate", interactive=False, verbosity=0)
    call_command("demo_setup", verbosity=0)
    counts = shape(scale)
    rng = random.Random(43)
    User = get_user_model()
    alice = User.objects.get(username=HEAVY)
    staff = User.objects.get(username=STAFF)
    session, events, run, calls = template_turn(alice)
    User.objects.bulk_create(
        User(username=f"grow-u{i}") for i in range(counts["users"])
    )
    others = list(User.objects.filter(username__startswith="grow-u").order_by("pk"))
    now = datetime.now(UTC)
    # Fields that default to now would overwrite the spread of the copies' dates.
    for model, name in (
        (Session, "created_at"),
        (Event, "created_at"),
        (Run, "created_at"),
        (Request, "created_at"),
        (Grant, "created_at"),
    ):
        model._meta.get_field(name).auto_now_add = False
    Session._meta.get_field("updated_at").auto_now = False
    sessions = make_sessions(counts, session, alice, others, now, rng)
    turns = plan_turns(counts, sessions, len(events), rng)
    runs = write_turns(sessions, turns, events, run, rng)
    write_calls(counts, runs, calls[0] if calls else None, rng)
    write_grants(counts, [alice, *others], staff)
    write_requests(counts, runs, staff, rng)
    # Rows written in bulk pass by the recorders that keep the Overview's and
    # usage's totals: count them as the migrations' back-fill does.
    count_ended_runs(
        Run.objects.exclude(status__in=[Run.Status.QUEUED, Run.Status.RUNNING])
    )
    count_all(ToolCall.objects.all())
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    return {
        "events": Event.objects.count(),
        "sessions": Session.objects.count(),
        "runs": Run.objects.count(),
        "audit": ToolCall.objects.count(),
        "grants": Grant.objects.count(),
        "requests": Request.objects.count(),
    }


def template_turn(alice):
    """One real turn of the weather agent: its session, events, Run, audit rows."""
    agent = AgentSpec.objects.get(name=AGENT)
    session = create_session(user=alice, agent=agent)
    run = start_turn(session=session, user=alice, text="weather in london?")
    executors.wait(run_id=run.id, timeout=120)
    run.refresh_from_db()
    assert run.status == Run.Status.SUCCEEDED, (run.status, run.error)
    events = list(Event.objects.filter(session=session).order_by("seq"))
    calls = list(ToolCall.objects.filter(run_id=run.id))
    session.refresh_from_db()
    return session, events, run, calls


def make_sessions(counts, template, alice, others, now, rng) -> list[Session]:
    owners = [alice] * counts["heavy_sessions"]
    rest = counts["sessions"] - counts["heavy_sessions"] - 1  # the template's
    owners += [others[i % len(others)] for i in range(max(rest, 0))]
    rows = []
    for owner in owners:
        sid = f"grow{uuid.uuid4().hex}"
        at = now - timedelta(seconds=rng.uniform(0, DAYS * 86400))
        rows.append(
            Session(
                id=sid,
                adk_id=sid,
                app_name=template.app_name,
                user_id=str(owner.pk),
                owner=owner,
                agent_id=template.agent_id,
                state=template.state,
                title=sentence(rng)[:60],
                last_update_time=at.timestamp(),
                created_at=at - timedelta(hours=1),
                updated_at=at,
            )
        )
    Session.objects.bulk_create(rows, batch_size=BATCH)
    return rows


def plan_turns(counts, sessions, per_turn: int, rng) -> list[int]:
    """Turns per session: the first of alice's is the long one, the rest share."""
    total = max(1, counts["events"] // per_turn)
    turns = [0] * len(sessions)
    # At least two of the session page's pages (frontend history.js PAGE_SIZE), so a
    # new install's longest session fills the page its view opens with, as day
    # 100's 40,000-event one does: the two calls give the same number of events.
    least = -(-2 * SESSION_PAGE // per_turn)
    turns[0] = max(1, least, counts["long_session_events"] // per_turn)
    for i in range(max(0, total - turns[0])):
        turns[1 + i % max(1, len(sessions) - 1) if len(sessions) > 1 else 0] += 1
    return turns


def write_turns(sessions, turns, template, run, rng) -> list[Run]:
    """Each turn the template's events, texts replaced; one Run a turn."""
    pending_events, pending_runs, runs = [], [], []
    data = [json.dumps(event.data) for event in template]
    for session, count in zip(sessions, turns, strict=True):
        seq = 0
        start = session.last_update_time - count * 60
        for turn in range(count):
            copy = uuid.uuid4().hex[:12]
            at = start + turn * 60
            text = sentence(rng)
            invocation = f"e-{uuid.uuid4()}"
            for row, raw in zip(template, data, strict=True):
                seq += 1
                pending_events.append(
                    copied(
                        row,
                        raw,
                        session=session,
                        seq=seq,
                        copy=copy,
                        at=at,
                        text=text,
                        rng=rng,
                        invocation=invocation,
                    )
                )
            when = datetime.fromtimestamp(at, UTC)
            runs.append(
                Run(
                    session=session,
                    user=session.owner,
                    status=Run.Status.SUCCEEDED,
                    text=text,
                    invocation_id=invocation,
                    created_at=when,
                    started_at=when,
                    finished_at=when + timedelta(seconds=1),
                    prompt_tokens=run.prompt_tokens,
                    completion_tokens=run.completion_tokens,
                    total_tokens=run.total_tokens,
                    model=run.model,
                    model_calls=run.model_calls,
                    tool_calls=run.tool_calls,
                )
            )
            pending_runs.append(runs[-1])
            if len(pending_events) >= 4 * BATCH:
                flush(pending_events, pending_runs)
        session.last_seq = seq
    flush(pending_events, pending_runs)
    with transaction.atomic():
        for session in sessions:  # last_seq: the events' own
            Session.objects.filter(pk=session.pk).update(last_seq=session.last_seq)
    return runs


def flush(events: list, runs: list) -> None:
    with transaction.atomic():
        Event.objects.bulk_create(events, batch_size=BATCH)
        Run.objects.bulk_create(runs, batch_size=BATCH)
    events.clear()
    runs.clear()


def copied(row, raw, *, session, seq, copy, at, text, rng, invocation) -> Event:
    raw = _IDS.sub(lambda found: f'"{found.group(1)}-{copy}"', raw)
    data = json.loads(raw)
    data["invocation_id"] = invocation
    parts = (data.get("content") or {}).get("parts") or []
    for part in parts:
        if part.get("text"):
            part["text"] = text if row.kind == "user_message" else sentence(rng)
    return Event(
        session=session,
        seq=seq,
        event_id=str(uuid.uuid4()),
        invocation_id=invocation if row.invocation_id else "",
        author=row.author,
        kind=row.kind,
        is_adk=row.is_adk,
        timestamp=at + (row.timestamp % 1),
        data=data,
        created_at=datetime.fromtimestamp(at, UTC),
    )


def write_calls(counts, runs: list[Run], template, rng) -> None:
    statuses = ["ok"] * 30 + ["error", "timeout", "denied", "cached", "approved"]
    rows = []
    for _ in range(counts["audit"]):
        run = runs[rng.randrange(len(runs))]
        at = run.started_at
        tool = rng.randrange(40)
        rows.append(
            ToolCall(
                user_id=run.user_id,
                session_id=run.session_id,
                run_id=run.id,
                invocation_id=run.invocation_id,
                agent=AGENT if tool < 20 else f"agent{tool % 5}",
                tool_name=template.tool_name
                if template and tool < 20
                else f"tool{tool}",
                tool_full_name=(
                    template.tool_full_name
                    if template and tool < 20
                    else f"toolset{tool % 8}.tool{tool}"
                ),
                args={"city": rng.choice(COMMON)},
                result_summary=sentence(rng),
                status=rng.choice(statuses),
                access_rule="toolset is open to everyone",
                started_at=at,
                finished_at=at + timedelta(milliseconds=200),
                duration_ms=int(rng.lognormvariate(5, 1.2)),
            )
        )
        if len(rows) >= BATCH:
            ToolCall.objects.bulk_create(rows, batch_size=BATCH)
            rows.clear()
    ToolCall.objects.bulk_create(rows, batch_size=BATCH)


def write_grants(counts, users, staff) -> None:
    tools = list(Tool.objects.all())
    toolsets = list(Toolset.objects.all())
    targets = [("tool", t) for t in tools] + [("toolset", t) for t in toolsets]
    rows = []
    for i in range(counts["grants"]):
        user = users[i % len(users)]
        kind, target = targets[(i // len(users)) % len(targets)]
        rows.append(
            Grant(
                user=user,
                effect="deny" if i % 7 == 0 else "allow",
                created_by=staff,
                created_at=datetime.now(UTC),
                **{kind: target},
            )
        )
    Grant.objects.bulk_create(rows, batch_size=BATCH)


def write_requests(counts, runs: list[Run], staff, rng) -> None:
    rows = []
    for i in range(counts["requests"]):
        run = runs[rng.randrange(len(runs))]
        # 20 wait (half of a new install's: it has a history of answers too).
        pending = i < min(20, counts["requests"] // 2)
        rows.append(
            Request(
                kind=Request.Kind.APPROVAL,
                status=Request.Status.PENDING if pending else Request.Status.APPROVED,
                session_id=run.session_id,
                run=run,
                call_id=f"adk-{uuid.uuid4()}",
                tool_name="get_weather_report",
                args={"city": "london"},
                agent=AGENT,
                invocation_id=run.invocation_id,
                hint="Approve this call?",
                answered_by=None if pending else staff,
                answered_at=None if pending else run.finished_at,
                created_at=run.started_at,
            )
        )
    Request.objects.bulk_create(rows, batch_size=BATCH)


# Timing: one call at a time, as the parent asks (it alternates the databases).


def once(call) -> dict:
    """One call: its wall ms, and whatever it returns (an export's rows)."""
    started = time.perf_counter()
    got = call()
    return {"ms": (time.perf_counter() - started) * 1000, **(got or {})}


def get(client: Client, path: str, params: dict | None = None):
    def call():
        response = client.get(path, params or {})
        assert response.status_code == 200, (
            path,
            response.status_code,
            response.content[:300],
        )
        if response.streaming:
            for _ in response.streaming_content:
                pass

    return call


def export(client: Client, path: str, params: dict, expected: int):
    """Every chunk of an export read and counted, none kept: rows returned.
    Called with `limit`, the same export cut to that many rows (its memory is the
    yardstick of the whole one's)."""

    def call(limit: int | None = None) -> dict:
        response = client.get(
            path, params if limit is None else {**params, "limit": limit}
        )
        assert response.status_code == 200, response.content[:300]
        chunks = (
            response.streaming_content if response.streaming else [response.content]
        )
        lines = 0
        for chunk in chunks:
            lines += chunk.count(b"\n")
        header = 1 if params.get("format") == "csv" else 0
        return {"rows": lines - header, "expected": expected}

    return call


def peak_kib(call) -> float:
    """The call's peak traced memory (tracemalloc), in KiB."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        call()
        return tracemalloc.get_traced_memory()[1] / 1024
    finally:
        tracemalloc.stop()


def deep_page(client: Client, deep: int):
    """The list's page `deep`, reached as the page reaches it: by `next`."""
    url = "/api/sessions/"
    for _ in range(deep - 1):
        following = client.get(url).json().get("next")
        if not following:
            break
        url = following.replace("http://testserver", "")
    return get(client, url)


def deep_audit_page(client: Client, deep: int):
    """The audit's page `deep` of 100, reached as the audit page reaches it: by
    `before`, the last call of the page before (or its last full page, on a
    database with fewer: a page of 100 compared with a page of 100, not with the
    last call or two). Only that page's call is timed."""
    params = {"limit": 100}
    page = client.get("/api/tool-calls/", params).json()
    for _ in range(deep - 1):
        if len(page) < params["limit"]:
            break
        following = {**params, "before": page[-1]["id"]}
        page = client.get("/api/tool-calls/", following).json()
        if len(page) < params["limit"]:
            break
        params = following
    return get(client, "/api/tool-calls/", params)


def retention_plan(client: Client):
    """The retention dry run staff read (GET /api/retention/), with sessions kept
    30 days and the audit 60: on day 100, most of the data is older. Returns the
    rows it counted: its answer is how many rows of each kind would go, so it is
    judged by the row counted, as an export is by the row given."""

    def planned() -> dict:
        with override_settings(
            TOOLCRIB_RETENTION_DAYS=30, TOOLCRIB_RETENTION_AUDIT_DAYS=60
        ):
            response = client.get("/api/retention/")
        assert response.status_code == 200, response.content[:300]
        return {"counted": sum(row["rows"] for row in response.json()["would_remove"])}

    return planned


def gateway(user):
    """The gateway's tools/list for an API token's caller: its catalog, in process."""
    caller = Caller(user=user, credential="bench")

    def call():
        asyncio.run(alist_tools(caller=caller))

    return call


def endpoints(deep: int, clients: dict, users: dict) -> dict:
    """Endpoint name → a call that opens it once."""
    alice = users["me"]
    me, staff = clients["me"], clients["staff"]
    long_session = Session.objects.filter(owner=alice).order_by("-last_seq").first()
    usual = Session.objects.filter(owner=alice).order_by("-updated_at").first()
    user_ids = ",".join(
        str(pk)
        for pk in get_user_model()
        .objects.order_by("pk")
        .values_list("pk", flat=True)[:12]
    )
    latest_run = Run.objects.filter(session=usual).order_by("-created_at").first()
    now = datetime.now(UTC)
    latest = {"before": "end", "limit": SESSION_PAGE}
    found = {
        "home: agents": get(me, "/api/agents/"),
        "home: session list, page 1": get(me, "/api/sessions/"),
        f"home: session list, page {deep} (by next)": deep_page(me, deep),
        "search: a common word": get(me, "/api/sessions/", {"search": SEARCH_ONE}),
        "search: two words": get(me, "/api/sessions/", {"search": SEARCH_TWO}),
        "session: open (40,000-event one)": get(
            me, f"/api/sessions/{long_session.pk}/"
        ),
        "session: latest events (40,000-event one)": get(
            me, f"/api/sessions/{long_session.pk}/events/", latest
        ),
        "session: latest events (usual)": get(
            me, f"/api/sessions/{usual.pk}/events/", latest
        ),
        "session: tools": get(me, f"/api/sessions/{usual.pk}/tools/"),
        "session: artifacts": get(me, f"/api/sessions/{usual.pk}/artifacts/"),
        "inbox: count": get(me, "/api/requests/count/"),
        "inbox: requests": get(me, "/api/requests/"),
        # The inbox's other tab, opened with it: mine, in any status (a page of
        # HISTORY_PAGE, which a new install holds too).
        "inbox: mine, any status": get(
            me, "/api/requests/", {"mine": 1, "status": "all", "limit": HISTORY_PAGE}
        ),
        "approvals: history (an API client's)": get(
            me,
            "/api/requests/",
            {"status": "all", "kind": "approval", "limit": HISTORY_PAGE},
        ),
        "approvals: a session's": get(me, "/api/approvals/", {"session": usual.pk}),
        "credentials": get(me, "/api/credentials/"),
        "tokens": get(me, "/api/gateway/tokens/"),
        "gateway: tools/list": gateway(alice),
        "overview: approvals waiting": get(staff, "/api/requests/"),
        "audit: outcomes": get(staff, "/api/tool-calls/outcomes/"),
        "audit: list (page 1)": get(staff, "/api/tool-calls/", {"limit": 100}),
        f"audit: list, page {deep} (by before)": deep_audit_page(staff, deep),
        "access: toolsets": get(staff, "/api/toolsets/"),
        "access: tools": get(staff, "/api/tools/"),
        "access: groups": get(staff, "/api/groups/"),
        "access: users": get(staff, "/api/users/", {"search": "", "limit": 13}),
        "access: grants of a user": get(staff, "/api/grants/", {"user": alice.pk}),
        "access: matrix (12 users)": get(staff, "/api/access/", {"users": user_ids}),
        "metrics": get(staff, "/metrics"),
        # Opened less often, each by a person on a page or a client.
        "session: runs": get(me, f"/api/sessions/{usual.pk}/runs/"),
        "session: state": get(me, f"/api/sessions/{usual.pk}/state/"),
        "session: long-running calls": get(me, f"/api/sessions/{usual.pk}/calls/"),
        "session: toolsets": get(me, f"/api/sessions/{usual.pk}/toolsets/"),
        "run: detail": get(me, f"/api/runs/{latest_run.pk}/"),
        "run: trace": get(me, f"/api/runs/{latest_run.pk}/trace/"),
        "inbox: long-running calls": get(me, "/api/calls/"),
        "memory: search": get(me, "/api/memory/", {"agent": AGENT, "q": SEARCH_ONE}),
        "agents: options": get(staff, "/api/agents/options/"),
        "changes": get(staff, "/api/changes/"),
        "budgets": get(staff, "/api/budgets/"),
        "model grants": get(staff, "/api/model-grants/"),
        "retention: dry run (30 days, audit 60)": retention_plan(staff),
    }
    # The Django admin's lists, ADMIN_PAGE rows a page (a new install holds that
    # many sessions and requests: its 100 would compare 100 rows with 20).
    for model_admin in admin.site._registry.values():
        model_admin.list_per_page = ADMIN_PAGE
    for name, path in ADMIN_LISTS.items():
        found[f"admin: {name}"] = get(staff, path)
    for label, days, bucket in (("24h", 1, "1h"), ("7d", 7, "6h"), ("30d", 30, "1d")):
        since = now - timedelta(days=days)
        found[f"overview: summary {label}"] = get(
            staff,
            "/api/tool-calls/summary/",
            {"since": since.isoformat(), "bucket": bucket},
        )
        for group in ("day", "agent", "user"):
            found[f"usage by {group}, {label}"] = get(
                staff,
                "/api/usage/",
                {"group_by": group, "since": since.date().isoformat()},
            )
    total = ToolCall.objects.count()
    for fmt in ("csv", "jsonl"):
        found[f"export: audit {fmt}"] = export(
            staff, "/api/tool-calls/", {"format": fmt}, total
        )
    return found


def serve(deep: int) -> None:
    """Answer the parent's requests, one a line: `time NAME`, `peak NAME`,
    `peak_first NAME` (an export's first two chunks), `quit`."""
    User = get_user_model()
    users = {
        "me": User.objects.get(username=HEAVY),
        "staff": User.objects.get(username=STAFF),
    }
    clients = {}
    for key, user in users.items():
        clients[key] = Client()
        clients[key].force_login(user)
    calls = endpoints(deep, clients, users)
    reply({"endpoints": list(calls)})
    for line in sys.stdin:
        verb, _, name = line.strip().partition(" ")
        if verb == "quit":
            return
        try:
            if verb == "peak":
                reply({"peak_kib": peak_kib(calls[name])})
            elif verb == "peak_first":
                # The export cut to two of its chunks: what constant memory is.
                first = functools.partial(calls[name], limit=2 * exports.CHUNK)
                reply({"peak_kib": peak_kib(first)})
            else:
                reply(once(calls[name]))
        except Exception as exc:  # noqa: BLE001 - a failing endpoint is a result
            reply({"error": f"{type(exc).__name__}: {str(exc)[:300]}"})


def reply(message: dict) -> None:
    print(f"@@ {json.dumps(message)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=float, required=True)
    parser.add_argument("--marker", required=True)
    parser.add_argument("--deep", type=int, default=20)
    args = parser.parse_args()
    marker = Path(args.marker)
    if not marker.exists():
        started = time.perf_counter()
        counts = build(args.scale)
        counts["built_in"] = round(time.perf_counter() - started)
        marker.write_text(json.dumps(counts))
    if connection.vendor == "sqlite":
        # As the embedded server's checkpoint thread does every hour (and
        # `migrate` once): a database in use has its planner's statistics.
        with connection.cursor() as cursor:
            collect_statistics(cursor)
    reply({"counts": json.loads(marker.read_text())})
    with override_settings(ALLOWED_HOSTS=["testserver"]):
        serve(args.deep)


if __name__ == "__main__":
    main()
