"""TR39's skeleton on Unicode's confusables table: names that look alike meet."""

import pytest

from toolsets.confusables import look_alike, skeleton


@pytest.fixture(autouse=True)
def _fresh_access():
    """tests/toolsets' reset of access decisions, off: no database here."""


@pytest.mark.parametrize(
    "one, other",
    [
        ("paypal", "p\u0430yp\u0430l"),  # Cyrillic а
        ("scope", "\u0455\u0441\u043e\u0440\u0435"),  # all Cyrillic
        ("alpha", "\u03b1lpha"),  # Greek α
        ("admin", "adrnin"),  # r n for m
        ("sales", "sa1es"),  # digit one for l
        ("ops", "0ps"),  # zero for o, any case
        ("IT", "lT"),  # capital I for l
        ("finance", "\ufb01nance"),  # the fi ligature
        ("team", "te\u200dam"),  # a zero-width joiner
        ("team", "team\ufe0f"),  # a variation selector
    ],
)
def test_names_that_look_alike_meet(one, other):
    assert look_alike(one, other)


@pytest.mark.parametrize(
    "one, other",
    [("admin", "admins"), ("résumé", "resume"), ("team-a", "team-b"), ("it", "lt")],
)
def test_names_that_read_differently_do_not(one, other):
    assert not look_alike(one, other)


def test_the_skeleton_is_its_own_skeleton():
    for text in ["m\u0430nagers", "adrnin", "\u0455\u0441\u043e\u0440\u0435", "0ps"]:
        assert skeleton(skeleton(text)) == skeleton(text)
