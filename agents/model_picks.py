"""A session's model, picked by its owner among those its agent offers.

An agent may list models its users may pick among (`AgentSpec.model_choices`),
besides its own (its `model`, or TOOLCRIB_DEFAULT_MODEL). In a session the owner
picks one (PATCH /api/sessions/{id}/ {"model": ...}; "" goes back to the agent's
own): the pick is checked here, once, and the session's next turns run on it.
A pick is refused, with why, when the agent does not offer the model or a model
grant does not let her use it (agents.model_grants). A turn checks again as it
starts: the agent may have dropped the model, or her grant expired, since.
"""

from dataclasses import dataclass

from django.utils.translation import gettext as _

from agents.adk.providers import effective_model
from agents.model_grants import ModelNotGranted, explain
from agents.models import AgentSpec, Session
from project.errors import DomainError, ForbiddenError


class ModelNotOffered(DomainError):
    """The session's agent does not offer the model picked."""

    code = "MODEL_NOT_OFFERED"
    field = "model"


@dataclass(frozen=True)
class ModelOption:
    """A model the session's owner may pick, and whether it is the agent's own."""

    name: str
    default: bool


def offered(agent: AgentSpec) -> list[str]:
    """The agent's own model first, then the others it lets users pick; [] when
    it offers no pick (no list, or not a model-calling agent of rows)."""
    if not agent.model_choices or not can_pick(agent):
        return []
    own = effective_model(agent.model)
    return [own, *(m for m in agent.model_choices if m != own)]


def can_pick(agent: AgentSpec) -> bool:
    """Whether the agent's root calls a model a pick can replace."""
    return agent.source == AgentSpec.Source.DATABASE and (
        agent.kind == AgentSpec.Kind.LLM
    )


def options_for(*, session: Session, user_id: int) -> list[ModelOption]:
    """The models the user may pick in the session: offered and granted to her."""
    agent = session.agent
    if agent is None:
        return []
    models = offered(agent)
    own = models[0] if models else ""
    return [
        ModelOption(name=m, default=m == own)
        for m in models
        if explain(user_id=user_id, model=m).allowed
    ]


def pick_model(*, session: Session, user, model: str) -> Session:
    """Run the session's next turns on `model` ("" for the agent's own), or refuse
    it with why: not the owner's session to pick for, not offered, not granted."""
    if session.owner_id != user.pk:
        raise ForbiddenError(_("Only the session's owner picks its model."))
    if model:
        check_pick(session=session, user_id=user.pk, model=model)
    session.model = model or None
    session.save(update_fields=["model", "updated_at"])
    return session


def check_pick(*, session: Session, user_id: int, model: str) -> None:
    """Raise ModelNotOffered or ModelNotGranted unless the user may run the
    session on `model`."""
    agent = session.agent
    models = offered(agent) if agent is not None else []
    if model not in models:
        name = agent.name if agent is not None else "this session's agent"
        choices = ", ".join(models) if models else "none: it runs on its own model"
        raise ModelNotOffered(
            _(
                "The agent %(name)s does not offer the model %(model)s (it offers %(choices)s)."
            )
            % {"name": name, "model": model, "choices": choices}
        )
    decision = explain(user_id=user_id, model=model)
    if not decision.allowed:
        raise ModelNotGranted(decision.refusal(model))


def turn_model(*, session: Session, user_id: int) -> str:
    """The model the session's next turn runs on, if its owner picked one ("":
    the agent's own), checked again now (ModelNotOffered, ModelNotGranted)."""
    if not session.model:
        return ""
    check_pick(session=session, user_id=user_id, model=session.model)
    return session.model
