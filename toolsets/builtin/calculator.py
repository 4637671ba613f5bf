"""The math toolset: a calculator that evaluates expressions without eval.

The expression is parsed with `ast` and walked node by node: numbers, + - * / //
% ** (and ^ as power), unary signs, parentheses, the constants pi, e and tau, and
the functions in FUNCTIONS. Nothing else is evaluated: no names, attributes,
subscripts, comprehensions or keyword arguments.

Sizes are checked before work is done, so `9**9**9` or `factorial(10**6)` is
refused instead of computed: TOOLCRIB_BUILTIN_CALCULATOR_MAX_DIGITS caps the
digits of any integer on the way (floats must stay finite).
TOOLCRIB_BUILTIN_CALCULATOR_PRECISION, when set, rounds a float result to that many
digits after the point (the GoAgent Calculator's precision); integers stay exact.

The toolset is named `math` in the catalog: `calculator` is the demo calculator
agent's own toolset.
"""

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from django.conf import settings

from toolsets.builtin.base import BuiltinTool, BuiltinToolset
from toolsets.refusals import Refusal

MAX_EXPRESSION_CHARS = 1000
MAX_NODES = 500
# Largest integer a JSON number keeps exactly; bigger ones are returned as text.
JSON_SAFE_INT = 2**53
LOG2_10 = math.log2(10)

Number = int | float


class CalculationError(Refusal):
    """The expression cannot be evaluated; the message says why."""


def _factorial(n: Number) -> int:
    if isinstance(n, float):
        if not n.is_integer():
            raise CalculationError("factorial() takes a whole number")
        n = int(n)
    if n < 0:
        raise CalculationError("factorial() of a negative number is undefined")
    if n > 1 and math.lgamma(n + 1) / math.log(10) > max_digits():
        raise CalculationError(f"factorial({n}) is too large")
    return math.factorial(n)


def _round(x: Number, digits: Number = 0) -> Number:
    if not isinstance(digits, int) or abs(digits) > 100:
        raise CalculationError("round() takes a whole number of digits up to 100")
    return round(x, digits)


def _log(x: Number, base: Number | None = None) -> float:
    return math.log(x) if base is None else math.log(x, base)


FUNCTIONS: dict[str, Callable[..., Number]] = {
    "abs": abs,
    "round": _round,
    "min": min,
    "max": max,
    "sqrt": math.sqrt,
    "cbrt": math.cbrt,
    "exp": math.exp,
    "log": _log,
    "ln": math.log,
    "log10": math.log10,
    "log2": math.log2,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "asin": math.asin,
    "acos": math.acos,
    "atan": math.atan,
    "atan2": math.atan2,
    "sinh": math.sinh,
    "cosh": math.cosh,
    "tanh": math.tanh,
    "hypot": math.hypot,
    "degrees": math.degrees,
    "radians": math.radians,
    "floor": math.floor,
    "ceil": math.ceil,
    "trunc": math.trunc,
    "factorial": _factorial,
    "gcd": math.gcd,
    "lcm": math.lcm,
}
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}
UNARY: dict[type[ast.unaryop], Callable[[Number], Number]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.BitXor: operator.pow,  # people write 2^10 for a power
}


def max_digits() -> int:
    return int(settings.TOOLCRIB_BUILTIN_CALCULATOR_MAX_DIGITS)


def with_precision(value: Number) -> Number:
    """A float rounded to the administrator's precision; anything else as it is."""
    precision = settings.TOOLCRIB_BUILTIN_CALCULATOR_PRECISION
    if precision is None or not isinstance(value, float):
        return value
    return round(value, int(precision))


def evaluate(expression: str) -> Number:
    """The value of an arithmetic expression, or CalculationError saying why not."""
    if not isinstance(expression, str) or not expression.strip():
        raise CalculationError("the expression is empty")
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise CalculationError(f"the expression is longer than {MAX_EXPRESSION_CHARS}")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        raise CalculationError(f"not a valid expression: {expression!r}") from exc
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise CalculationError("the expression is too long")
    return _checked(_eval(tree.body))


def _eval(node: ast.expr) -> Number:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise CalculationError(f"{node.value!r} is not a number")
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in CONSTANTS:
            raise CalculationError(f"unknown name {node.id!r}")
        return CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in UNARY:
        return UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
        return _binary(node, _eval(node.left), _eval(node.right))
    if isinstance(node, ast.Call):
        return _call(node)
    raise CalculationError(f"{ast.unparse(node)!r} is not supported")


def _binary(node: ast.BinOp, left: Number, right: Number) -> Number:
    if isinstance(node.op, ast.Pow | ast.BitXor):
        _check_power(left, right)
    elif isinstance(node.op, ast.Mult):
        _check_product(left, right)
    try:
        return _checked(BINARY[type(node.op)](left, right))
    except ZeroDivisionError as exc:
        raise CalculationError("division by zero") from exc
    except OverflowError as exc:
        raise CalculationError("the result is too large") from exc


def _call(node: ast.Call) -> Number:
    name = node.func.id if isinstance(node.func, ast.Name) else None
    if name not in FUNCTIONS:
        raise CalculationError(f"unknown function {ast.unparse(node.func)!r}")
    if node.keywords:
        raise CalculationError(f"{name}() takes positional arguments only")
    args = [_eval(arg) for arg in node.args]
    try:
        return _checked(FUNCTIONS[name](*args))
    except ZeroDivisionError as exc:
        raise CalculationError("division by zero") from exc
    except OverflowError as exc:
        raise CalculationError(f"{name}() result is too large") from exc
    except (ValueError, TypeError) as exc:
        raise CalculationError(f"{name}() cannot take {args}: {exc}") from exc


def _digits_bound(value: Number) -> float:
    """About how many decimal digits an integer has (0 for floats)."""
    return value.bit_length() / LOG2_10 if isinstance(value, int) else 0


def _check_product(left: Number, right: Number) -> None:
    if _digits_bound(left) + _digits_bound(right) > max_digits() + 1:
        raise CalculationError("the result is too large")


def _check_power(base: Number, exponent: Number) -> None:
    if not isinstance(base, int) or not isinstance(exponent, int) or exponent <= 0:
        return  # floats overflow loudly; a negative power is a float
    if abs(base) > 1 and exponent * math.log10(abs(base)) > max_digits():
        raise CalculationError("the result is too large")


def _checked(value: Any) -> Number:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CalculationError("the result is not a real number")
    if isinstance(value, float) and not math.isfinite(value):
        raise CalculationError("the result is not a finite number")
    if isinstance(value, int) and _digits_bound(value) > max_digits():
        raise CalculationError("the result is too large")
    return value


def calculate(expression: str) -> dict:
    """Evaluate an arithmetic expression exactly and safely.

    Supports + - * / // % and ** (or ^) for powers, parentheses, the constants
    pi, e and tau, and the functions abs, round, min, max, sqrt, cbrt, exp, log
    (log(x) is natural, log(x, base)), ln, log10, log2, sin, cos, tan, asin,
    acos, atan, atan2, sinh, cosh, tanh, hypot, degrees, radians, floor, ceil,
    trunc, factorial, gcd and lcm. Angles are in radians.

    Args:
        expression: The expression, e.g. "2 * (3 + 4) ** 2" or "sqrt(2) / 2".

    Returns:
        The result; very large integers come back as text to keep every digit.
    """
    value = with_precision(evaluate(expression))
    result: Any = value
    if isinstance(value, int) and abs(value) >= JSON_SAFE_INT:
        result = str(value)
    return {"status": "success", "expression": expression, "result": result}


class MathToolset(BuiltinToolset):
    """A calculator: arithmetic and common math functions, evaluated safely."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__([BuiltinTool(calculate, risk="read")], **kwargs)


toolset = MathToolset()
