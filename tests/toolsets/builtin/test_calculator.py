import math

import pytest

from tests.toolsets.builtin.adk import call_tool
from toolsets.builtin.calculator import CalculationError, calculate, evaluate, toolset

# tests/toolsets/conftest.py resets the access cache around every test, in the db.
pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("2 + 3 * 4", 14),
        ("2 * (3 + 4) ** 2", 98),
        ("2^10", 1024),
        ("-7 // 2", -4),
        ("7 % 3", 1),
        ("10 / 4", 2.5),
        ("sqrt(16) + abs(-2)", 6.0),
        ("round(pi, 3)", 3.142),
        ("max(1, 5, 3) - min(4, 2)", 3),
        ("log(8, 2)", 3.0),
        ("factorial(10)", 3628800),
        ("hypot(3, 4)", 5.0),
        ("2 ** -1", 0.5),
    ],
)
def test_evaluates_arithmetic_and_functions(expression, value):
    assert evaluate(expression) == pytest.approx(value)


def test_sin_of_pi_over_two_is_one():
    assert math.isclose(evaluate("sin(pi / 2)"), 1.0)


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("1 / 0", "division by zero"),
        ("5 % 0", "division by zero"),
        ("9 ** 9 ** 9", "too large"),
        ("2 ** 100000", "too large"),
        ("factorial(100000)", "too large"),
        ("10.0 ** 400", "too large"),
        ("1e308 * 10", "not a finite number"),
        ("(-8) ** (1 / 3)", "not a real number"),
        ("sqrt(-1)", "sqrt()"),
        ("2 +", "not a valid expression"),
        ("", "empty"),
        ("x + 1", "unknown name 'x'"),
        ("__import__('os').system('id')", "unknown function"),
        ("(1).__class__", "not supported"),
        ("[1, 2]", "not supported"),
        ("'a' * 3", "is not a number"),
        ("round(2.5, ndigits=1)", "positional arguments only"),
        ("1" + " + 1" * 600, "longer than"),
    ],
)
def test_refuses_bad_or_oversized_expressions(expression, reason):
    with pytest.raises(
        CalculationError, match=reason.replace("(", r"\(").replace(")", r"\)")
    ):
        evaluate(expression)


def test_huge_integers_come_back_as_text_with_every_digit():
    assert calculate("2 ** 100")["result"] == str(2**100)


def test_max_digits_setting_is_read_at_call_time(settings):
    settings.TOOLCRIB_BUILTIN_CALCULATOR_MAX_DIGITS = 5
    with pytest.raises(CalculationError, match="too large"):
        evaluate("10 ** 6")


async def test_calculate_through_a_runner():
    response = await call_tool([toolset], "calculate", expression="6 * 7")
    assert response == {"status": "success", "expression": "6 * 7", "result": 42}


async def test_a_bad_expression_is_an_error_answer_not_a_failed_turn():
    response = await call_tool([toolset], "calculate", expression="1 / 0")
    assert response == {"status": "error", "error_message": "division by zero"}


def test_the_administrators_precision_rounds_float_results(settings):
    """The GoAgent Calculator's precision: floats rounded, integers exact."""
    settings.TOOLCRIB_BUILTIN_CALCULATOR_PRECISION = 3

    assert calculate("2 / 3")["result"] == 0.667
    assert calculate("sqrt(2)")["result"] == 1.414
    assert calculate("2 ** 70")["result"] == str(2**70)  # exact, as text
    settings.TOOLCRIB_BUILTIN_CALCULATOR_PRECISION = None
    assert calculate("2 / 3")["result"] == 2 / 3
