"""Who is told of a new request: the people who may answer it, by name.

The one rule (agents.requests.rules) read as "whom to address":

- a credential, or a call or approval with no answer group: its requester (staff
  may answer an ungrouped one too, but it is not addressed to them);
- with an answer group: the group's active members, not the requester unless
  the catalog lets her decide her own calls (`self_approval`). Staff outside the
  group may answer, but are not told: a team's notices go to the team.

Each recipient may answer the request (tests/agents/notices check it against
rules.may_answer).
"""

from django.contrib.auth import get_user_model
from django.db.models import Q

from agents.models import Request


def recipients(request: Request) -> list:
    """The active users told of `request`, by id (one query)."""
    users = get_user_model().objects.filter(is_active=True)
    requester_id = request.requester_id
    if request.kind == Request.Kind.CREDENTIAL or not request.answer_group:
        users = users.filter(pk=requester_id)
    elif request.self_approval:
        users = users.filter(Q(groups__name=request.answer_group) | Q(pk=requester_id))
    else:
        users = users.filter(groups__name=request.answer_group)
        users = users.exclude(pk=requester_id)
    return list(users.distinct().order_by("pk"))
