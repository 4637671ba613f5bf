"""agents.adk.absent_extras under threads: an optional module tried by several
threads at once is marked absent, and an import of it then fails at once."""

import sys

import pytest

from agents.adk.absent_extras import mark_absent
from tests.threads import at_once

MISSING = "toolcrib_threads_no_such_extra"


def test_threads_trying_a_missing_extra_at_once_mark_it_absent():
    sys.modules.pop(MISSING, None)
    try:
        marked = at_once(lambda i: mark_absent((MISSING,)))

        assert [MISSING] in marked
        assert sys.modules[MISSING] is None
        with pytest.raises(ImportError):
            __import__(MISSING)
    finally:
        sys.modules.pop(MISSING, None)
