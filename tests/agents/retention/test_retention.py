"""agents.retention: what is older than a team keeps goes on a schedule, whole
sessions at a time, the dry run first saying what would go; what is in use, recent,
or kept longer by its agent or the audit's own period stays."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.adk.artifacts import artifact_storage
from agents.memory import close_session
from agents.models import (
    Artifact,
    Event,
    Lease,
    MemoryEntry,
    Request,
    Run,
    RunSpan,
    Session,
)
from agents.retention import jobs, lease, sessions
from agents.retention.archive import Archive, read_archive
from agents.retention.jobs import apply_retention, plan_retention
from project import metrics
from tests.agents.retention.helpers import (
    add_events,
    exists,
    idle,
    pending_request,
    session_of,
    tool_call,
    with_artifact,
)
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def weather(demo_agents):
    return demo_agents["weather_sentiment"]


@pytest.fixture
def bank(demo_agents):
    return demo_agents["bank"]


@pytest.fixture
def thirty_days(settings):
    settings.TOOLCRIB_RETENTION_DAYS = 30


def counted(report, kind: str, agent: str | None = None) -> int:
    return sum(
        count.rows
        for count in report.counts
        if count.kind == kind and (agent is None or count.agent == agent)
    )


def test_retention_is_off_by_default_and_keeps_everything(alice, weather):
    old = session_of(alice, weather, days_idle=3650)
    tool_call(alice, days_ago=3650)

    assert plan_retention().counts == []
    report = apply_retention()

    assert report.counts == []
    assert exists(old)
    assert ToolCall.objects.count() == 1


def test_the_dry_run_says_what_would_go_and_removes_nothing(
    thirty_days, alice, weather
):
    old = session_of(alice, weather, days_idle=45, events=5)
    session_of(alice, weather, days_idle=2, events=5)

    report = plan_retention()

    assert report.dry_run
    assert counted(report, "sessions", "weather_sentiment") == 1
    assert counted(report, "events") == 5
    assert counted(report, "runs") == 1
    (sessions,) = [count for count in report.counts if count.kind == "sessions"]
    assert sessions.oldest == old.updated_at
    assert Session.objects.count() == 2
    assert Event.objects.count() == 10


def test_the_dry_run_counts_what_the_run_then_removes_kind_by_kind(
    thirty_days, alice, bob, weather, bank
):
    # Sessions of two agents, of different sizes: each has a run with a span
    # (session_of) and an answered request, and `runs` more runs of runs + 1 spans
    # each; one has no events at all, and one more is recent.
    for user, agent, events, runs in [
        (alice, weather, 7, 1),
        (alice, weather, 0, 0),
        (bob, bank, 12, 3),
        (bob, weather, 2, 2),
    ]:
        session = session_of(user, agent, days_idle=0, events=events)
        for _ in range(runs):
            run = Run.objects.create(
                session=session, user=user, status=Run.Status.SUCCEEDED, text="again"
            )
            RunSpan.objects.bulk_create(
                RunSpan(
                    run=run,
                    span_id=f"s{n}",
                    name="x",
                    start=run.created_at,
                    duration_ms=1,
                )
                for n in range(runs + 1)
            )
        answered = pending_request(session)
        Request.objects.filter(pk=answered.pk).update(status=Request.Status.APPROVED)
        idle(session, days=45)
    session_of(alice, bank, days_idle=3, events=4)

    planned = plan_retention()
    removed = apply_retention()

    kinds = ["sessions", "events", "runs", "run spans", "requests"]
    assert {kind: counted(planned, kind) for kind in kinds} == {
        kind: counted(removed, kind) for kind in kinds
    }
    assert counted(planned, "sessions") == 4
    assert counted(planned, "events") == 7 + 0 + 12 + 2
    assert counted(planned, "runs", "bank") == 1 + 3
    assert counted(planned, "run spans", "weather_sentiment") == (1 + 2) + 1 + (1 + 6)
    assert counted(planned, "requests") == 4


def test_an_old_session_goes_whole_and_recent_or_busy_ones_stay(
    thirty_days, alice, weather
):
    old = with_artifact(session_of(alice, weather, days_idle=0))
    with_artifact(old, "user:profile.txt")  # hers, across sessions
    answered = pending_request(old)
    Request.objects.filter(pk=answered.pk).update(status=Request.Status.APPROVED)
    stored = Artifact.objects.get(session_key=old.adk_id).storage_path
    old = idle(old, days=40)
    recent = session_of(alice, weather, days_idle=29)
    queued = session_of(alice, weather, days_idle=400)
    Run.objects.create(session=queued, user=alice, status=Run.Status.QUEUED)
    running = session_of(alice, weather, days_idle=400)
    Run.objects.create(session=running, user=alice, status=Run.Status.RUNNING)
    waiting = session_of(alice, weather, days_idle=400)
    pending_request(waiting)
    audited = tool_call(alice, days_ago=40)
    ToolCall.objects.filter(pk=audited.pk).update(session_id=old.pk)

    report = apply_retention()

    assert counted(report, "sessions") == 1
    assert not exists(old)
    assert not Event.objects.filter(session_id=old.pk).exists()
    assert not Run.objects.filter(session_id=old.pk).exists()
    assert not RunSpan.objects.filter(run__session_id=old.pk).exists()
    assert not Request.objects.filter(session_id=old.pk).exists()
    assert not Artifact.objects.filter(session_key=old.adk_id).exists()
    assert not artifact_storage().exists(stored)
    assert Artifact.objects.filter(filename="user:profile.txt").exists()
    assert all(exists(s) for s in [recent, queued, running, waiting])
    assert exists(audited)  # the audit has its own period


def test_a_users_memory_of_a_removed_session_stays(thirty_days, alice, weather):
    session = session_of(alice, weather, days_idle=0)
    close_session(session=session)
    remembered = MemoryEntry.objects.filter(session_key=session.pk).count()
    idle(session, days=31)

    apply_retention()

    assert not exists(session)
    assert remembered > 0
    assert MemoryEntry.objects.filter(session_key=session.pk).count() == remembered


def test_an_agents_own_days_win_over_the_setting(thirty_days, alice, weather, bank):
    weather.retention_days = 7
    weather.save()
    bank.retention_days = 0  # kept forever
    bank.save()
    short = session_of(alice, weather, days_idle=10)
    forever = session_of(alice, bank, days_idle=1000)
    other = session_of(alice, weather, days_idle=5)

    report = apply_retention()

    assert counted(report, "sessions", "weather_sentiment") == 1
    assert not exists(short)
    assert exists(forever) and exists(other)


def test_one_agents_sessions_only(thirty_days, alice, weather, bank):
    mine = session_of(alice, weather, days_idle=40)
    theirs = session_of(alice, bank, days_idle=40)
    tool_call(alice, days_ago=40, agent="bank")

    report = apply_retention(agent="weather_sentiment")

    assert not exists(mine) and exists(theirs)
    assert counted(report, "sessions") == 1


def test_the_audit_has_its_own_period(settings, alice, weather):
    settings.TOOLCRIB_RETENTION_AUDIT_DAYS = 365
    old = tool_call(alice, days_ago=400, agent="bank")
    kept = tool_call(alice, days_ago=100, agent="bank")
    held = tool_call(alice, days_ago=400, agent="bank", status="awaiting_approval")
    session = session_of(alice, weather, days_idle=400)

    planned = plan_retention()
    report = apply_retention()

    assert counted(planned, "tool calls", "bank") == 1
    assert counted(report, "tool calls", "bank") == 1
    assert not exists(old)
    assert exists(kept) and exists(held)
    assert exists(session)  # sessions are kept forever here


def test_ended_gateway_requests_go_pending_ones_stay(thirty_days, alice):
    def gateway_request(status: str) -> Request:
        request = Request.objects.create(
            kind=Request.Kind.APPROVAL,
            caller=alice,
            call_id=f"gw-{status}",
            status=status,
            tool_name="bank.wire_money",
        )
        Request.objects.filter(pk=request.pk).update(
            created_at=timezone.now() - timedelta(days=60)
        )
        return request

    ended = gateway_request(Request.Status.APPROVED)
    pending = gateway_request(Request.Status.PENDING)

    apply_retention()

    assert not exists(ended) and exists(pending)


def test_the_archive_holds_what_went_and_loads_back(
    thirty_days, settings, tmp_path, alice, weather
):
    settings.TOOLCRIB_RETENTION_ARCHIVE_DIR = str(tmp_path / "archive")
    settings.TOOLCRIB_RETENTION_AUDIT_DAYS = 30
    session = with_artifact(session_of(alice, weather, days_idle=0, events=4))
    stored = Artifact.objects.get(session_key=session.adk_id).storage_path
    session = idle(session, days=31)
    tool_call(alice, days_ago=31, agent="weather_sentiment")
    events = list(Event.objects.filter(session=session).values_list("seq", "data"))

    report = apply_retention()

    rows = read_archive(report.archive)
    models = [row["model"] for row in rows]
    assert models[0] == "agents.session"
    assert models.count("agents.event") == len(events)
    assert {"agents.run", "agents.runspan", "agents.artifact"} <= set(models)
    assert models[-1] == "toolsets.toolcall"
    copied = report.archive.parent / report.archive.name.replace(".jsonl.gz", "-files")
    assert (copied / stored).read_bytes() == b"kept?"
    assert not exists(session)

    call_command("loaddata", str(report.archive), verbosity=0)

    assert exists(session)
    assert list(Event.objects.filter(session=session).values_list("seq", "data")) == (
        events
    )


def test_an_archive_that_cannot_be_written_removes_nothing(
    thirty_days, settings, tmp_path, monkeypatch, alice, weather
):
    settings.TOOLCRIB_RETENTION_ARCHIVE_DIR = str(tmp_path)
    session = session_of(alice, weather, days_idle=40)

    def disk_full(self, rows):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Archive, "write", disk_full)

    with pytest.raises(OSError):
        apply_retention()

    assert exists(session)
    assert Event.objects.filter(session=session).count() == 3
    assert Lease.objects.get(name=jobs.LEASE).holder == ""  # given up


def test_no_archive_file_when_nothing_went(thirty_days, settings, tmp_path):
    settings.TOOLCRIB_RETENTION_ARCHIVE_DIR = str(tmp_path)

    report = apply_retention()

    assert report.archive is None
    assert list(tmp_path.iterdir()) == []


def test_removal_goes_in_bounded_batches(
    thirty_days, settings, monkeypatch, alice, weather
):
    settings.TOOLCRIB_RETENTION_BATCH = 50
    small = [session_of(alice, weather, days_idle=40, events=10) for _ in range(6)]
    large = session_of(alice, weather, days_idle=0, events=0)
    add_events(large, 120)
    large = idle(large, days=40)
    batches = []
    real_renew = lease.renew

    def renew(**kwargs):
        batches.append(kwargs)
        real_renew(**kwargs)

    monkeypatch.setattr(lease, "renew", renew)

    report = apply_retention()

    assert counted(report, "sessions") == 7
    assert counted(report, "events") == 6 * 10 + 120
    assert not Session.objects.filter(pk__in=[s.pk for s in [*small, large]]).exists()
    # The large one closed, then 3 batches of events, a span's, and the rest; the
    # small ones two a batch.
    assert len(batches) >= 1 + 3 + 1 + 1 + 3


def test_a_large_session_taken_apart_is_closed_first(
    thirty_days, settings, alice, weather
):
    settings.TOOLCRIB_RETENTION_BATCH = 20
    large = session_of(alice, weather, days_idle=0, events=0)
    add_events(large, 50)
    large = idle(large, days=40)
    batch = jobs.Batch(size=20, archive=None, holder="me")
    assert lease.claim(name=jobs.LEASE, holder="me", seconds=60)
    scope = jobs.Scope(now=timezone.now())
    (group,) = [g for g in sessions.groups(scope) if g.label == "weather_sentiment"]
    steps = sessions._take_apart(large.pk, group, scope=scope, batch=batch)

    first = next(steps)

    large.refresh_from_db()
    assert large.closed_at is not None
    assert first[0].rows == 20
    assert Event.objects.filter(session=large).count() == 30


def test_a_run_while_another_holds_the_lease_does_nothing(thirty_days, alice, weather):
    session = session_of(alice, weather, days_idle=40)
    assert lease.claim(name=jobs.LEASE, holder="another", seconds=60)

    report = apply_retention()

    assert report.skipped and exists(session)


def test_a_lease_its_holder_let_run_out_is_taken(thirty_days, alice, weather):
    session = session_of(alice, weather, days_idle=40)
    assert lease.claim(name=jobs.LEASE, holder="dead", seconds=60)
    Lease.objects.filter(name=jobs.LEASE).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )

    report = apply_retention()

    assert not report.skipped and not exists(session)


def test_removed_rows_are_counted_in_the_metrics(thirty_days, alice, weather):
    session_of(alice, weather, days_idle=40, events=4)
    before = metrics.RETENTION_REMOVED.labels("events")._value.get()

    apply_retention()

    assert metrics.RETENTION_REMOVED.labels("events")._value.get() == before + 4


def test_the_command_prints_the_dry_run_and_removes(
    thirty_days, capsys, alice, weather
):
    session = session_of(alice, weather, days_idle=40, events=4)

    call_command("retention", "--dry-run")
    dry = capsys.readouterr().out
    assert exists(session)
    call_command("retention", "--agent", "weather_sentiment")
    done = capsys.readouterr().out

    assert "Would remove:" in dry
    assert "sessions" in dry and "weather_sentiment" in dry
    assert f"{session.updated_at:%Y-%m-%d}" in dry
    assert "Removed:" in done
    assert not exists(session)


def test_the_command_refuses_an_unknown_agent(db):
    with pytest.raises(CommandError, match="No agent is named"):
        call_command("retention", "--dry-run", "--agent", "nobody")


def test_a_session_that_comes_back_into_use_before_its_batch_stays(
    thirty_days, monkeypatch, alice, weather
):
    first = session_of(alice, weather, days_idle=50)
    second = session_of(alice, weather, days_idle=40)
    picked = sessions._filled

    def then_a_turn_starts(found, size):
        Run.objects.create(session=first, user=alice, status=Run.Status.QUEUED)
        return picked(found, size)

    monkeypatch.setattr(sessions, "_filled", then_a_turn_starts)

    report = apply_retention()

    assert exists(first) and not exists(second)
    assert counted(report, "sessions") == 1


def test_a_session_taken_apart_is_archived_whole_and_loads_back(
    thirty_days, settings, tmp_path, alice, weather
):
    settings.TOOLCRIB_RETENTION_ARCHIVE_DIR = str(tmp_path)
    settings.TOOLCRIB_RETENTION_BATCH = 20
    large = session_of(alice, weather, days_idle=0, events=0)
    add_events(large, 50)
    large = idle(large, days=40)

    report = apply_retention()

    assert not exists(large)
    models = [row["model"] for row in read_archive(report.archive)]
    assert models.count("agents.event") == 50
    assert models.count("agents.session") == 1

    call_command("loaddata", str(report.archive), verbosity=0)

    assert Event.objects.filter(session=large).count() == 50


def test_a_batch_removes_only_its_own_sessions_artifacts(
    thirty_days, alice, bob, weather
):
    old = [
        with_artifact(session_of(user, weather, days_idle=0)) for user in (alice, bob)
    ]
    kept = with_artifact(session_of(alice, weather, days_idle=0))
    for session in old:
        idle(session, days=40)

    report = apply_retention()

    assert counted(report, "sessions") == 2
    assert counted(report, "artifacts") == 2
    assert list(Artifact.objects.values_list("session_key", flat=True)) == [kept.adk_id]


def test_a_session_back_in_use_after_it_was_archived_stays(
    thirty_days, settings, tmp_path, monkeypatch, alice, weather
):
    settings.TOOLCRIB_RETENTION_ARCHIVE_DIR = str(tmp_path)
    back = session_of(alice, weather, days_idle=50)
    gone = session_of(alice, weather, days_idle=40)
    archive_them = sessions._archive_sessions

    def then_a_message_comes(batch, found):
        archive_them(batch, found)
        add_events(back, 1)  # stored: its last activity is now
        Session.objects.filter(pk=back.pk).update(updated_at=timezone.now())

    monkeypatch.setattr(sessions, "_archive_sessions", then_a_message_comes)

    report = apply_retention()

    assert exists(back) and not exists(gone)
    assert Event.objects.filter(session=back).count() == 4
    archived = {row["pk"] for row in read_archive(report.archive)}
    assert gone.pk in archived  # and `back` too: a file may hold rows that stayed


def test_a_batchs_queries_do_not_grow_with_the_sessions_events(
    thirty_days, alice, weather
):
    def queries_to_remove(events: int) -> int:
        for _ in range(3):
            session_of(alice, weather, days_idle=40, events=events)
        with CaptureQueriesContext(connection) as queries:
            report = apply_retention()
        assert counted(report, "events") == 3 * events
        return len(queries)

    apply_retention()  # the lease's row made

    assert queries_to_remove(200) == queries_to_remove(2)
