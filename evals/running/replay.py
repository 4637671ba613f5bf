"""Tools answer from the case's recorded results in an eval run's turns.

A plugin of TOOLCRIB_PLUGINS, after governance's (project/settings/tools.py), so a
call governance denies, holds or refuses still is, and is audited, in the eval's
session; a call it lets through is answered here from the case's recording
instead of running: matched by name and arguments, else the next unused call of
that name. A call with no recording answers an error ("no recorded result"). With
the run's `live_tools`, a tool the catalog says only reads runs for real.
Outside an eval run's turn the plugin does nothing.
"""

from collections.abc import Mapping
from typing import Any, Self

from asgiref.sync import sync_to_async
from google.adk.plugins import BasePlugin
from google.adk.tools.base_tool import BaseTool

from agents.models import Run
from evals.models import EvalCaseResult
from evals.running.recordings import recorded_calls
from toolsets.models import Tool

PLUGIN_NAME = "toolcrib_eval_replay"
NO_RECORDING = "no recorded result"


class ReplayPlugin(BasePlugin):
    """Answers an eval run's tool calls from the case's recorded results."""

    def __init__(self, name: str = PLUGIN_NAME, *, run: Run | None = None) -> None:
        super().__init__(name)
        self._eval = bool(run is not None and run.eval)
        self._session_id = run.session_id if run is not None else None
        self._recorded: list[dict[str, Any]] | None = None
        self._live: frozenset[str] = frozenset()

    @classmethod
    def for_run(cls, *, run: Run) -> Self:
        return cls(run=run)

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: Any
    ) -> dict | None:
        if not self._eval:
            return None
        if self._recorded is None:
            self._recorded, self._live = await sync_to_async(_load)(self._session_id)
        if tool.name in self._live:
            return None
        found = take(self._recorded, tool.name, tool_args)
        if found is None:
            return {"status": "error", "error": f"{NO_RECORDING} for {tool.name}"}
        response = found.get("response")
        return dict(response) if isinstance(response, Mapping) else {"result": response}


def take(
    recorded: list[dict[str, Any]], name: str, args: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The first unused recording of this call (same name and arguments), else the
    first unused of that name; marked used."""
    unused = [call for call in recorded if not call.get("used")]
    found = next(
        (c for c in unused if c["name"] == name and (c.get("args") or {}) == args),
        None,
    ) or next((c for c in unused if c["name"] == name), None)
    if found is not None:
        found["used"] = True
    return found


def _load(session_id: str | None) -> tuple[list[dict[str, Any]], frozenset[str]]:
    result = (
        EvalCaseResult.objects.filter(session_id=session_id)
        .select_related("run")
        .first()
    )
    if result is None:
        return [], frozenset()
    calls = recorded_calls(result.case_snapshot.get("conversation") or [])
    live: frozenset[str] = frozenset()
    if result.run.live_tools:
        names = {call["name"] for call in calls}
        risks: dict[str, set[str]] = {}
        for tool_name, risk in Tool.objects.filter(name__in=names).values_list(
            "name", "risk"
        ):
            risks.setdefault(tool_name, set()).add(risk)
        live = frozenset(n for n, r in risks.items() if r == {Tool.Risk.READ})
    return calls, live
