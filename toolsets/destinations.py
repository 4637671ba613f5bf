"""Where a governed call's tool may go: every URL it fetches, redirect hops
included, judged by the condition of the grant that allowed the call.

Governance judges a call's arguments before it runs (checks.ArgumentConditions); a
redirect happens inside the tool, after that. So a tool that fetches URLs (the
built-in http and webpage tools) asks its `Destinations` before each request:
`start(url)` for the URL it was called with, `hop(url)` for each redirect's. Each
answers the URL to request, normalized as the condition judged it
(toolsets.urls), so what was judged is what is fetched; or raises
OutsideCondition with what the model reads, and the call's audit row says
`denied`, its rule naming the hop and the condition.

A call with no condition on that argument, or outside a governed turn, fetches
its URLs as they are. A call a person approved outside its condition (a grant's
`otherwise: approval`) fetches the URL she approved; its redirects are judged all
the same, since she saw none of them.
"""

from dataclasses import dataclass, replace
from typing import Any, Self

from toolsets.grant_conditions import ArgumentCondition, condition_feedback
from toolsets.models import ToolCall
from toolsets.turn import Call, call_of
from toolsets.urls import normalize_url


class OutsideCondition(Exception):
    """A URL outside the condition of the call's grant; the message is the model's."""


@dataclass
class Destinations:
    """The URLs one governed call may fetch, by the condition on one argument."""

    call: Call | None
    argument: str

    @classmethod
    def of(cls, context: Any, argument: str) -> Self:
        """The destinations of the governed call a tool's context runs."""
        return cls(call_of(context), argument)

    def start(self, url: str) -> str:
        """The URL to request for the call's own URL."""
        condition = self._condition()
        if condition is None or self.call.outside_condition is not None:
            return url
        return self._judged(url, condition, redirected=False)

    def hop(self, url: str) -> str:
        """The URL to request for a redirect to `url`."""
        condition = self._condition()
        if condition is None:
            return url
        return self._judged(url, condition, redirected=True)

    def _condition(self) -> ArgumentCondition | None:
        decision = self.call.decision if self.call is not None else None
        if decision is None or decision.condition is None:
            return None
        return decision.condition.root.get(self.argument)

    def _judged(
        self, url: str, condition: ArgumentCondition, *, redirected: bool
    ) -> str:
        failed = condition.failure(self.argument, url, as_url=True)
        if failed is None:
            return normalize_url(url)
        raise self._refusal(url, failed, redirected=redirected)

    def _refusal(self, url: str, failed: str, *, redirected: bool) -> OutsideCondition:
        """The refusal the model reads; the call's audit reads it as `denied`."""
        call = self.call
        decision = call.decision
        where = f"redirect to {url}: " if redirected else ""
        rule = f"denied: {where}{failed}, outside the condition of {call.narrowed_by}"
        call.decision = replace(decision, allowed=False, rule=rule)
        call.outcome = ToolCall.Status.DENIED
        if not redirected:
            feedback = condition_feedback(call.tool.name, decision.condition, failed)
            return OutsideCondition(feedback)
        return OutsideCondition(
            f"Tool {call.tool.name} is allowed to you only if "
            f"{decision.condition.describe()}, and here it was redirected to {url}, "
            f"outside it: {failed}. The redirect was not followed: tell the user it "
            "is not allowed."
        )
