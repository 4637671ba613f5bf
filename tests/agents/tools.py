"""Small tools the tests register as toolsets."""


def explode_reactor(reason: str) -> dict:
    """Explode the reactor for a reason; this always fails.

    Args:
        reason: Why the reactor should explode.
    """
    raise RuntimeError(f"reactor exploded: {reason}")


def note_fact(fact: str, tool_context) -> dict:
    """Note a fact in the session state.

    Args:
        fact: The fact to note.
    """
    tool_context.state["fact"] = fact
    return {"status": "noted", "fact": fact}


def count_users() -> dict:
    """Count the users of this Toolcrib with the Django ORM.

    A sync tool that uses the ORM works only off the event loop: ADK's tool threads.
    """
    import threading

    from django.contrib.auth import get_user_model

    return {
        "users": get_user_model().objects.count(),
        "thread": threading.current_thread().name,
    }
