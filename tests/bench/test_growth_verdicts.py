"""bench.growth judges each endpoint on its own two timings: ≤ 2× (search ≤ 3×),
and an export every row, by the row, in constant memory; the edges count as
holding."""

from bench.growth import shape, verdict


def timing(ms: float, **extra) -> dict:
    return {"ms": ms, **extra}


def test_an_endpoint_holds_at_twice_and_misses_past_it():
    assert verdict("home: agents", timing(10), timing(20)) == "holds"
    assert verdict("home: agents", timing(10), timing(20.1)).startswith("MISSED")


def test_search_is_allowed_three_times():
    assert verdict("search: two words", timing(10), timing(30)) == "holds"
    assert verdict("search: two words", timing(10), timing(31)).startswith("MISSED")


def test_an_export_cut_short_or_growing_in_memory_is_named():
    small = timing(10, rows=200, expected=200)
    cut = timing(60, rows=1000, expected=200_003, peak_first_kib=4000, peak_kib=4300)
    growing = timing(
        9000, rows=200_003, expected=200_003, peak_first_kib=4000, peak_kib=40_000
    )
    every = timing(
        9000, rows=200_003, expected=200_003, peak_first_kib=4000, peak_kib=5000
    )

    assert verdict("export: audit csv", small, cut) == (
        "holds, CUT at 1,000 rows, constant memory"
    )
    assert verdict("export: audit csv", small, growing) == (
        "holds, every row, memory GROWS"
    )
    assert verdict("export: audit csv", small, every) == (
        "holds, every row, constant memory"
    )


def test_an_export_is_judged_by_the_row():
    small = timing(10, rows=200, expected=200)
    per_row_as_fast = timing(
        10_000, rows=200_000, expected=200_000, peak_first_kib=1, peak_kib=1
    )
    per_row_three_times = timing(
        30_000, rows=200_000, expected=200_000, peak_first_kib=1, peak_kib=1
    )

    assert verdict("export: audit jsonl", small, per_row_as_fast).startswith("holds")
    assert verdict("export: audit jsonl", small, per_row_three_times).startswith(
        "MISSED"
    )


def test_the_issue_sizes_at_scale_one_and_a_tenth():
    full = shape(1)
    assert (full["events"], full["sessions"], full["audit"]) == (
        1_000_008,
        20_002,
        200_002,
    )
    assert shape(0.1)["runs"] == 12_000
    assert shape(0.001)["heavy_sessions"] == 10
