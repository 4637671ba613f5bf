"""What a turn reads of its session: the agent's history, as ADK's recent-events window.

ADK loads a turn's session once, through `RunConfig.get_session_config`
(`GetSessionConfig.num_recent_events`), and sends the model every event it
loaded plus the turn's own. An agent's `history` (AgentSpec.history, HISTORY in a
code agent's module) is that number; None reads every event.

`HistoryWindow` is ADK's config with two things a plain count cannot say, which
DjangoSessionService reads (another session service reads the count alone):

- whole turns: the window starts at a message from the user, never inside a
  turn (where it could begin with a tool's result whose call it left out, or
  with a model turn, which providers refuse as a first content); if the newest
  turn alone is longer than the window, that turn is read whole;
- `resumes`: the invocations whose calls the turn answers (a long-running
  call's result, an approval, a credential). Their events are read too, however
  old, so ADK finds each call its answer names.

Session, user and app state are on their rows, never in the window.
"""

from collections.abc import Iterable

from google.adk.sessions.base_session_service import GetSessionConfig

from agents.models import AgentSpec, Request, Run


class HistoryWindow(GetSessionConfig):
    """ADK's recent-events window, in whole turns, plus the invocations a turn resumes."""

    resumes: tuple[str, ...] = ()


def window(*, events: int | None, resumes: Iterable[str] = ()) -> HistoryWindow | None:
    """The window of `events` latest events (None: no window, every event)."""
    if events is None:
        return None
    return HistoryWindow(
        num_recent_events=events, resumes=tuple(sorted(set(resumes) - {""}))
    )


async def aturn_window(*, agent: AgentSpec, run: Run) -> HistoryWindow | None:
    """What the Run's turn reads of its session: the agent's history, and the
    invocations of the requests it answers.

    A turn of function responses that answer no request Toolcrib recorded reads
    every event: nothing says where their calls are.
    """
    if agent.history is None or not run.message:
        return window(events=agent.history)
    answered = Request.objects.filter(answer_run_id=run.pk)
    resumes = [i async for i in answered.values_list("invocation_id", flat=True)]
    if not any(resumes):
        return None
    return window(events=agent.history, resumes=resumes)
