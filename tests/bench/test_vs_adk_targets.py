"""bench.vs_adk judges issue 22's targets on a run's own numbers: what its table of
verdicts says must follow from the measured rows, at the bounds' edges too."""

import argparse

from bench.vs_adk import (
    Verdict,
    history_verdicts,
    load_verdicts,
    print_table,
    print_verdicts,
    summarize,
)


def summary(turns_per_s: float, *, cpu_ms: float = 10.0, p99: float = 0.1, errors=0):
    """summarize()'s row for one run of 30 turns at `turns_per_s`."""
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
    for clients in (1, 32):
        rows["adk-memory", clients] = summary(30.0)
        rows["adk-sqlite", clients] = summary(15.0, p99=0.8)
    rows["embedded", 1] = summary(30.0, cpu_ms=20.0)  # exactly 2x, exactly 20 ms
    rows["production-1", 1] = summary(29.9)  # just under adk-memory
    rows["embedded", 32] = summary(29.0, cpu_ms=20.5, p99=0.4)  # p99 exactly half
    rows["production-1", 32] = summary(45.0, p99=0.41, errors=2)

    verdicts = by_target(load_verdicts(rows, [1, 32]))

    assert verdicts["embedded x adk-sqlite turns/s", 1].holds
    assert verdicts["embedded CPU ms a turn", 1].holds
    assert not verdicts["production-1 x adk-memory turns/s", 1].holds
    assert verdicts["production-1 x adk-memory turns/s", 1].value < 1.0
    assert not verdicts["embedded x adk-sqlite turns/s", 32].holds
    assert not verdicts["embedded CPU ms a turn", 32].holds
    assert verdicts["production-1 x adk-memory turns/s", 32].holds
    assert verdicts["embedded p99 x adk-sqlite's", 32].holds
    assert not verdicts["production-1 p99 x adk-sqlite's", 32].holds
    assert not verdicts["production-1 errors", 32].holds
    assert verdicts["embedded errors", 32].holds
    # The tail is a target at C = 32 only.
    assert ("embedded p99 x adk-sqlite's", 1) not in verdicts


def test_a_target_whose_configurations_did_not_run_is_not_judged():
    rows = {("embedded", 8): summary(40.0), ("adk-memory", 8): summary(30.0)}

    verdicts = by_target(load_verdicts(rows, [8]))

    assert set(verdicts) == {("embedded CPU ms a turn", 8), ("embedded errors", 8)}


def test_history_judges_toolcrib_only_cpu_and_latency_each():
    grown = {"first_cpu": 10.0, "last_cpu": 12.0, "first_ms": 20.0, "last_ms": 24.5}

    verdicts = by_target(history_verdicts("embedded", grown))

    assert verdicts["embedded CPU last 10 x first 10", None].holds  # 1.2x
    assert not verdicts["embedded p50 last 10 x first 10", None].holds  # 1.225x
    assert history_verdicts("adk-memory", grown) == []


def test_the_verdicts_print_as_a_table_with_a_count(capsys):
    print_verdicts(
        [
            Verdict("embedded CPU ms a turn", 8, 19.0, 20.0, True),
            Verdict("embedded x adk-sqlite turns/s", 8, 1.9, 2.0, False),
        ]
    )

    out = capsys.readouterr().out
    assert "embedded x adk-sqlite turns/s" in out and "NO" in out
    assert "1 of 2 hold; load" in out


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
            Verdict("embedded x adk-sqlite turns/s", 1, 2.0, 2.0, True),
            # 60 ms of CPU over 3 turns, in floating point: a hair over 20.
            Verdict("embedded CPU ms a turn", 1, 0.06 / 3 * 1000 + 1e-12, 20.0, False),
        ]
    )

    lines = capsys.readouterr().out.splitlines()
    latency = next(line for line in lines if "p50 last 10" in line)
    exact = next(line for line in lines if "adk-sqlite" in line)
    hair = next(line for line in lines if "CPU ms a turn" in line)
    assert growth > 1.2
    assert latency.split()[-3:] == ["1.203", "1.20", "NO"]
    assert exact.split()[-3:] == ["2.00", "2.00", "yes"]
    assert hair.split()[-3:] == [">20.00", "20.00", "NO"]


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

    assert verdicts["embedded x adk-sqlite turns/s", 32].holds
    assert verdicts["production-1 x adk-memory turns/s", 32].holds
    # No tail to compare with: not judged, rather than judged against nothing.
    assert ("embedded p99 x adk-sqlite's", 32) not in verdicts


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
