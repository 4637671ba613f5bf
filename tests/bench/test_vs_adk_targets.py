"""bench.vs_adk judges issue 43's targets on a run's own numbers: what its table of
verdicts says must follow from the measured rows, at the bounds' edges too."""

import argparse
import asyncio
from contextlib import ExitStack
from types import SimpleNamespace

import pytest

from bench.vs_adk import (
    Setup,
    Verdict,
    floor_level,
    history_verdicts,
    load_verdicts,
    print_setup,
    print_table,
    print_verdicts,
    start_floor,
    summarize,
    toolcrib_target,
)


def summary(turns_per_s: float, *, cpu_ms: float = 10.0, p99: float = 0.1, errors=0):
    """summarize()'s row for one run of 30 turns at `turns_per_s`, every turn
    taking `p99` seconds (its p50 too)."""
    run = {
        "turns_per_s": turns_per_s,
        "latencies": [p99] * 30,
        "cpu_s": cpu_ms * 30 / 1000,
        "turns": 30,
        "errors": errors,
    }
    return summarize([run])


def by_target(verdicts: list[Verdict]) -> dict[tuple[str, int | None], Verdict]:
    return {(verdict.target, verdict.clients): verdict for verdict in verdicts}


def test_each_load_target_is_judged_at_each_count_of_clients():
    rows = {}
    for clients in (1, 8):
        rows["adk-memory", clients] = summary(30.0, cpu_ms=30.0, p99=0.020)
        rows["adk-sqlite", clients] = summary(15.0, cpu_ms=40.0)
        rows["adk-runner", clients] = summary(60.0, cpu_ms=10.0)
    # C = 1: exactly half adk-sqlite's CPU, exactly 1.5x the floor's, exactly
    # adk-sqlite's turns/s, p50 exactly 1.25x adk-memory's.
    rows["embedded", 1] = summary(30.0, cpu_ms=15.0)
    rows["production-1", 1] = summary(15.0, p99=0.025)
    # C = 8: a hair over each CPU bound, production under adk-memory, errors.
    rows["embedded", 8] = summary(30.0, cpu_ms=20.5)
    rows["production-1", 8] = summary(29.9, errors=2)

    verdicts = by_target(load_verdicts(rows, [1, 8]))

    assert verdicts["embedded CPU/turn x adk-sqlite's", 1].holds
    assert verdicts["embedded CPU/turn x the floor's", 1].holds
    assert verdicts["production-1 turns/s x adk-sqlite's", 1].holds
    assert verdicts["production-1 p50 x adk-memory's", 1].holds
    assert verdicts["embedded errors", 1].holds
    assert not verdicts["embedded CPU/turn x adk-sqlite's", 8].holds
    assert not verdicts["embedded CPU/turn x the floor's", 8].holds
    assert verdicts["embedded CPU/turn x the floor's", 8].value == pytest.approx(2.05)
    assert not verdicts["production-1 turns/s x adk-memory's", 8].holds
    assert not verdicts["production-1 errors", 8].holds
    # Durable throughput and p50 are targets at C = 1 only; adk-memory's
    # throughput from C = 8 on.
    assert ("production-1 turns/s x adk-sqlite's", 8) not in verdicts
    assert ("production-1 p50 x adk-memory's", 8) not in verdicts
    assert ("production-1 turns/s x adk-memory's", 1) not in verdicts


def test_no_absolute_cpu_target_is_judged():
    rows = {("embedded", 1): summary(40.0, cpu_ms=500.0)}

    verdicts = by_target(load_verdicts(rows, [1]))

    assert set(verdicts) == {("embedded errors", 1)}


def test_a_target_whose_configurations_did_not_run_is_not_judged():
    rows = {("embedded", 8): summary(40.0), ("adk-memory", 8): summary(30.0)}

    verdicts = by_target(load_verdicts(rows, [8]))

    assert set(verdicts) == {("embedded errors", 8)}


def test_history_judges_toolcrib_only_cpu_and_latency_each():
    grown = {"first_cpu": 10.0, "last_cpu": 12.0, "first_ms": 20.0, "last_ms": 24.5}

    verdicts = by_target(history_verdicts("embedded", grown))

    assert verdicts["embedded CPU last 10 x first 10", None].holds  # 1.2x
    assert not verdicts["embedded p50 last 10 x first 10", None].holds  # 1.225x
    assert history_verdicts("adk-memory", grown) == []


def test_the_verdicts_print_as_a_table_with_a_count(capsys):
    print_verdicts(
        [
            Verdict("embedded CPU/turn x the floor's", 8, 1.4, 1.5, "<="),
            Verdict("production-1 turns/s x adk-memory's", 8, 0.9, 1.0, ">="),
        ]
    )

    lines = capsys.readouterr().out.splitlines()
    floor = next(line for line in lines if "floor" in line)
    memory = next(line for line in lines if "adk-memory" in line)
    assert floor.split()[-4:] == ["1.40", "<=", "1.50", "PASS"]
    assert memory.split()[-4:] == ["0.90", ">=", "1.00", "FAIL"]
    assert lines[-1].startswith("1 of 2 pass; load")


def test_a_value_just_past_its_bound_never_prints_as_the_bound(capsys):
    # 27.3 / 22.7 ms: the p50 of a long session's last ten turns over its first ten.
    growth = 27.3 / 22.7
    print_verdicts(
        [
            *history_verdicts(
                "embedded",
                {
                    "first_cpu": 24.4,
                    "last_cpu": 27.9,
                    "first_ms": 22.7,
                    "last_ms": 27.3,
                },
            ),
            Verdict("production-1 turns/s x adk-sqlite's", 1, 1.0, 1.0, ">="),
            # 15 ms of CPU over 10 ms, in floating point: a hair over 1.5.
            Verdict("embedded CPU/turn x the floor's", 1, 1.5 + 1e-12, 1.5, "<="),
        ]
    )

    lines = capsys.readouterr().out.splitlines()
    latency = next(line for line in lines if "p50 last 10" in line)
    exact = next(line for line in lines if "adk-sqlite" in line)
    hair = next(line for line in lines if "floor" in line)
    assert growth > 1.2
    assert latency.split()[-4:] == ["1.203", "<=", "1.20", "FAIL"]
    assert exact.split()[-4:] == ["1.00", ">=", "1.00", "PASS"]
    assert hair.split()[-4:] == [">1.50", "<=", "1.50", "FAIL"]


def test_a_peer_whose_every_turn_failed_leaves_no_division_by_zero():
    failed = summarize(
        [{"turns_per_s": 0.0, "latencies": [], "cpu_s": 1.0, "turns": 0, "errors": 30}]
    )
    rows = {
        ("adk-sqlite", 32): failed,
        ("adk-memory", 32): failed,
        ("embedded", 32): summary(30.0, p99=0.4),
        ("production-1", 32): summary(20.0, p99=0.5),
    }

    verdicts = by_target(load_verdicts(rows, [32]))

    # No peer measured: not judged, rather than judged against nothing.
    assert set(verdicts) == {("embedded errors", 32), ("production-1 errors", 32)}


def test_the_table_prints_against_a_peer_whose_every_turn_failed(capsys):
    failed = summarize(
        [{"turns_per_s": 0.0, "latencies": [], "cpu_s": 1.0, "turns": 0, "errors": 30}]
    )
    rows = {("adk-sqlite", 32): failed, ("embedded", 32): summary(30.0)}
    args = argparse.Namespace(configs=["adk-sqlite", "embedded"], clients=[32])

    print_table(args, rows)

    lines = capsys.readouterr().out.splitlines()
    assert lines[-2].split()[-1] == "1.00"  # adk-sqlite against itself
    assert lines[-1].split()[0] == "embedded" and lines[-1].split()[-1] == "inf"


class FakeServer:
    """A started Toolcrib server, as toolcrib_target() reads it."""

    url = "http://127.0.0.1:1"
    process = SimpleNamespace(pid=1)

    def token(self, username: str, password: str) -> str:
        return f"token-of-{username}"


def test_one_user_drives_every_toolcrib_client_under_the_raised_cap(capsys):
    one = Setup(users=3, per_user_cap=32, one_user=True)
    each = Setup(users=3, per_user_cap=32)

    shared = toolcrib_target("embedded", FakeServer(), [], one)
    apart = toolcrib_target("embedded", FakeServer(), [], each)
    print_setup(one, 32)

    assert shared.tokens == ["token-of-bench0"] * 3
    assert apart.tokens == ["token-of-bench0", "token-of-bench1", "token-of-bench2"]
    assert one.toolcrib_env() == {"TOOLCRIB_MAX_QUEUED_TURNS_PER_USER": "32"}
    assert (
        "TOOLCRIB_MAX_QUEUED_TURNS_PER_USER=32 (default 20)" in capsys.readouterr().out
    )


def test_the_floor_runs_toolcribs_turns_on_adks_bare_runner(tmp_path):
    setup = Setup(users=2, per_user_cap=20)
    with ExitStack() as stack:
        floor = start_floor(stack, "adk-runner", tmp_path, setup)
        level = asyncio.run(floor_level(floor, 2, 2, 1))
        assert floor.process.poll() is None

    assert floor.process.poll() is not None  # stopped with the bench
    assert (level["turns"], level["errors"]) == (4, 0)
    assert level["cpu_s"] > 0 and level["turns_per_s"] > 0
