"""A grant's condition holds only for a whole value, taken as what it is.

A `pattern` was searched, so `^reports/\\w+\\.csv$` let `reports/q1.csv\\n` through
(Python's `$` matches before a trailing newline) and an unanchored one matched any
value containing it; `\\d` matched every script's digits; a NUL let a value end,
for C code, past what was judged; `-Infinity` (which Python's JSON reads from a
model's arguments) is at most any maximum. Each is outside the condition now.
"""

import pytest

from toolsets.grant_conditions import Condition


def outside(condition: dict, **args) -> str | None:
    return Condition.model_validate(condition).failure(args)


def test_an_anchored_pattern_does_not_let_a_trailing_newline_through():
    condition = {"path": {"pattern": r"^reports/\w+\.csv$"}}

    assert outside(condition, path="reports/q1.csv") is None
    assert outside(condition, path="reports/q1.csv\n") is not None


def test_a_pattern_matches_the_whole_value_not_a_part_of_it():
    condition = {"table": {"pattern": "orders|customers"}}

    assert outside(condition, table="orders") is None
    assert outside(condition, table="orders; DROP TABLE users") is not None
    assert outside(condition, table="users_and_customers") is not None


def test_digits_in_a_pattern_are_ascii_digits_as_in_json_schema():
    condition = {"account": {"pattern": r"\d{4}"}}

    assert outside(condition, account="1234") is None
    assert outside(condition, account="١٢٣٤") is not None  # Arabic-Indic digits


@pytest.mark.parametrize(
    ("condition", "value"),
    [
        ({"path": {"prefix": "reports/"}}, "reports/q1.csv\x00/../../secrets"),
        ({"path": {"pattern": r".*\.csv"}}, "secrets.txt\x00.csv"),
    ],
)
def test_a_nul_character_is_outside_a_prefix_or_a_pattern(condition, value):
    assert outside(condition, path=value) is not None


@pytest.mark.parametrize("amount", [float("-inf"), float("inf"), float("nan")])
def test_a_number_that_is_not_finite_is_outside_a_bound(amount):
    assert outside({"amount": {"maximum": 1000}}, amount=amount) is not None
    assert outside({"amount": {"minimum": 0}}, amount=amount) is not None


def test_a_condition_written_in_urls_judges_the_destination():
    condition = {"url": {"prefix": "https://wiki.corp.example/team"}}

    assert outside(condition, url="https://WIKI.corp.example:443/team/a") is None
    assert outside(condition, url="https://wiki.corp.example/team/../admin")
    assert outside(condition, url="https://wiki.corp.example/teamwork")
    assert outside(condition, url="https://wiki.corp.example/team\n")


def test_an_argument_the_tool_declares_a_url_is_judged_as_one_by_any_keyword():
    pattern = {"url": {"pattern": r"https://wiki\.corp\.example/team(/.*)?"}}
    args = {"url": "https://wiki.corp.example/team/%2e%2e/admin"}

    failed = Condition.model_validate(pattern).failure(args, urls={"url"})

    assert "as a URL: https://wiki.corp.example/admin" in failed
