"""The one expiry sweep: every pending request past its time is answered as expired.

A request gets a time when it is recorded (an approval of a tool marked with
`approval_timeout`, or whose catalog entry has a timeout). The sweep runs:

- on time: the recorder schedules it for each request's expiry (agents/timers.py:
  on a worker when there is a broker, else on a timer of the server process);
- when a worker starts (tasks.py), since timers die with their process;
- and an answer to a request past its time expires that request first
  (answer.py).

Never while listing: reading requests changes none of them.
"""

from django.utils import timezone

from agents.answers import answer
from agents.models import Request


def expire_due() -> int:
    """Expire every pending request past its time; their agents are told.

    Returns:
        How many requests expired.
    """
    due = Request.objects.filter(
        status=Request.Status.PENDING, expires_at__lte=timezone.now()
    ).values_list("pk", flat=True)
    return sum(answer.expire(request_id=pk) for pk in list(due))
