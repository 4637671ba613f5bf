"""Agents whose tools an allow grant narrows by a condition on their arguments
(toolsets.grant_conditions): the examples of issue 18, with side effects to check.

Each is a factory over a scripted OfflineLlm; a test registers it with
`settings.TOOLCRIB_AGENTS`.
"""

from google.adk.agents import LlmAgent

from agents.adk.offline import OfflineLlm, OfflineStep

RAN: list[tuple[str, dict]] = []


def fetch(url: str, method: str = "GET") -> dict:
    """Fetch a web page.

    Args:
        url: The page's address.
        method: The HTTP method.
    """
    RAN.append(("fetch", {"url": url}))
    return {"status": 200, "url": url}


def read_file(path: str) -> dict:
    """Read a file of the workspace.

    Args:
        path: The file's path.
    """
    RAN.append(("read_file", {"path": path}))
    return {"path": path, "text": "..."}


def query_table(table: str, where: str = "") -> dict:
    """Run a read-only query on one table.

    Args:
        table: The table.
        where: A filter.
    """
    RAN.append(("query_table", {"table": table}))
    return {"rows": []}


def wire_money(amount: float, to: str) -> dict:
    """Wire money to an account.

    Args:
        amount: How much, in euros.
        to: The account.
    """
    RAN.append(("wire_money", {"amount": amount, "to": to}))
    return {"status": "sent", "amount": amount}


def guard() -> LlmAgent:
    """Fetches outside the corporate hosts, then within them, then answers."""
    script = [
        OfflineStep.call("fetch", url="https://evil.example/steal"),
        OfflineStep.call("fetch", url="https://wiki.corp.example/page"),
        OfflineStep.say("done"),
    ]
    return LlmAgent(
        name="guard_agent",
        description="Uses tools an admin narrowed by conditions.",
        model=OfflineLlm(script=script),
        tools=[fetch, read_file, query_table, wire_money],
    )


def teller() -> LlmAgent:
    """Wires a large amount, then answers."""
    script = [
        OfflineStep.call("wire_money", amount=5000, to="acme"),
        OfflineStep.say("done"),
    ]
    return LlmAgent(
        name="teller_agent",
        description="Wires money.",
        model=OfflineLlm(script=script),
        tools=[wire_money],
    )
