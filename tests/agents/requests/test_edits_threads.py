"""agents.requests.edits keeps the argument checks of
TOOLCRIB_APPROVAL_ARGUMENT_CHECKS imported once per process (functools.cache): many
threads asking at once all get the same checks, whole."""

from agents.requests import edits
from tests.threads import at_once

PATHS = ("toolsets.governance.edits.check_arguments",)


def test_many_threads_get_the_same_checks():
    edits._checks.cache_clear()

    found = at_once(lambda _: edits._checks(PATHS), threads=16)

    assert all(len(checks) == 1 for checks in found)
    assert len({checks[0] for checks in found}) == 1
    assert found[0][0].__name__ == "check_arguments"
