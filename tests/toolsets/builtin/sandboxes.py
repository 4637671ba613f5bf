"""The shell tool's tests need a working bubblewrap sandbox on the machine."""

from tests.integration import services
from toolsets.builtin.sandbox import sandbox_problem


def require_sandbox() -> None:
    """Skip (locally) or fail (CI) when this machine has no working sandbox."""
    problem = sandbox_problem()
    if problem is not None:
        services.unavailable("the bubblewrap sandbox", RuntimeError(problem))
