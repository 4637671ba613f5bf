"""Tools the toolsets tests register: side effects they can check, and a revoker."""

import asyncio

from google.adk.tools import ToolContext

from toolsets import grants
from toolsets.models import Grant

LAUNCHES: list[str] = []


def launch_rocket(target: str) -> dict:
    """Launch the rocket at a target.

    Args:
        target: Where the rocket goes.
    """
    LAUNCHES.append(target)
    return {"status": "launched", "target": target}


def read_gauge(name: str = "fuel") -> dict:
    """Read a gauge of the rocket.

    Args:
        name: Which gauge.
    """
    return {"gauge": name, "value": 42}


def revoke_launch_access(tool_context: ToolContext) -> dict:
    """Revoke the caller's grants on launching the rocket."""
    rows = Grant.objects.filter(
        user_id=int(tool_context.user_id), tool__name="launch_rocket"
    )
    for grant in rows:
        grants.revoke(grant=grant)
    return {"status": "revoked"}


def login(username: str, password: str, api_token: str = "") -> dict:
    """Log in somewhere with a password.

    Args:
        username: Who.
        password: The password.
        api_token: A token, if any.
    """
    return {"status": "ok", "session_token": "s3cr3t", "user": username}


def delete_everything() -> dict:
    """Delete everything."""
    return {"status": "deleted"}


def audited_read() -> dict:
    """A tool that declares its risk."""
    return {}


audited_read.risk = "read"


def overheat_engine(level: int = 11) -> dict:
    """Overheat the engine; this always fails.

    Args:
        level: How hot.
    """
    raise RuntimeError(f"engine overheated at {level}")


async def stall_forever() -> dict:
    """Stall forever: never answers."""
    await asyncio.sleep(60)
    return {}
