"""The change audit: who changed which object staff govern, and when.

Part of agents' public door: the apps above record their own objects' changes here.

- `track(Model, exclude_fields=...)`, called once from an app's `ready()`: every save
  and delete of a Model made while a person is known to be acting (a view with
  `ActorFromRequest`, or `acting_as`) is recorded with its fields before and after,
  in the transaction of the save. A secret field shows as "[hidden]": named in
  `exclude_fields`, or named like one (agents.redaction's rule: password, api_key, token,
  ...), or sealed or digested, or bytes. Many-to-many changes are not saves: record them with `record`.
- `record(actor, target, action, detail)`: something done that is not a save (a
  provider tested, an invite sent, a version rolled back to).
- `ActorFromRequest`: a mixin for API views (first among the bases): the caller,
  however authenticated, is the actor of every tracked save the request makes.

Saves made by no person (migrations, `demo_setup`, the runtime marking a code agent
missing) are not recorded: the audit answers "who changed it", and nobody did.
"""

import hashlib
import json
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.db.models.signals import post_delete, post_save, pre_delete, pre_save

from agents.models import Change
from agents.models.changes import HIDDEN
from agents.redaction import is_secret_key

__all__ = [
    "HIDDEN",
    "ActorFromRequest",
    "acting_as",
    "current_actor",
    "record",
    "track",
]

# A stored form of a secret, whatever the field is called.
STORED_SECRET = re.compile(r"sealed|digest", re.I)
REPR_MAX = 200

# The person acting in this request or task, if any: a context variable, so each
# thread and each asyncio task sees only its own.
_actor: ContextVar[Any] = ContextVar("toolcrib_change_actor", default=None)
# Model -> the fields shown as hidden. Filled by `track` from AppConfig.ready();
# read by the signal receivers on any thread. The lock makes a late `track` (a test)
# safe beside saves on other threads: readers see the old dict or the new one.
_tracked: dict[type[models.Model], frozenset[str]] = {}
_tracking = threading.Lock()
_BEFORE = "_toolcrib_change_before"
_REPR = "_toolcrib_change_repr"


def current_actor() -> Any:
    """The person acting now, or None."""
    return _actor.get()


@contextmanager
def acting_as(user: Any) -> Iterator[None]:
    """Record the tracked saves inside the block as `user`'s (commands, tests)."""
    token = _actor.set(user if user is not None and user.is_authenticated else None)
    try:
        yield
    finally:
        _actor.reset(token)


class ActorFromRequest:
    """For API views: the authenticated caller is the actor of the request's saves."""

    def initial(self, request: Any, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # type: ignore[misc]
        user = getattr(request, "user", None)
        actor = user if user is not None and user.is_authenticated else None
        self._change_actor_token = _actor.set(actor)

    def finalize_response(
        self, request: Any, response: Any, *args: Any, **kwargs: Any
    ) -> Any:
        token = getattr(self, "_change_actor_token", None)
        if token is not None:
            self._change_actor_token = None
            try:
                _actor.reset(token)
            except ValueError:  # set in another context: that context ends with it
                _actor.set(None)
        return super().finalize_response(request, response, *args, **kwargs)  # type: ignore[misc]


def track(model: type[models.Model], *, exclude_fields: Iterable[str] = ()) -> None:
    """Record every save and delete of `model` a person makes (see the module)."""
    global _tracked
    label = model._meta.label_lower
    with _tracking:
        _tracked = {**_tracked, model: frozenset(exclude_fields)}
    pre_save.connect(_before_save, sender=model, dispatch_uid=f"changes-pre-{label}")
    pre_delete.connect(
        _before_delete, sender=model, dispatch_uid=f"changes-predel-{label}"
    )
    post_save.connect(_after_save, sender=model, dispatch_uid=f"changes-post-{label}")
    post_delete.connect(
        _after_delete, sender=model, dispatch_uid=f"changes-del-{label}"
    )


def is_tracked(model: type[models.Model]) -> bool:
    """Whether `model`'s saves are recorded."""
    return model in _tracked


def untrack(model: type[models.Model]) -> None:
    """Stop recording `model`'s saves (tests)."""
    global _tracked
    label = model._meta.label_lower
    with _tracking:
        _tracked = {m: f for m, f in _tracked.items() if m is not model}
    pre_save.disconnect(sender=model, dispatch_uid=f"changes-pre-{label}")
    post_save.disconnect(sender=model, dispatch_uid=f"changes-post-{label}")
    post_delete.disconnect(sender=model, dispatch_uid=f"changes-del-{label}")
    pre_delete.disconnect(sender=model, dispatch_uid=f"changes-predel-{label}")


def record(
    actor: Any, target: models.Model, action: str, detail: dict | None = None
) -> Change:
    """Record `action` done by `actor` to `target` that is not a save."""
    return _write(actor, target, action, _json_safe(detail or {}))


def _fields(model: type[models.Model]) -> list[models.Field]:
    return [
        f
        for f in model._meta.concrete_fields
        if not f.primary_key
        and not getattr(f, "auto_now", False)
        and not getattr(f, "auto_now_add", False)
    ]


def _is_secret(field: models.Field, hidden: frozenset[str], value: Any) -> bool:
    return (
        field.name in hidden
        or is_secret_key(field.name)
        or bool(STORED_SECRET.search(field.name))
        or isinstance(value, bytes | memoryview)
    )


def _hidden(model: type[models.Model]) -> frozenset[str]:
    """The fields `model`'s registration hides: read once a save, so its before
    and after are shown by the same rule whatever `track` does meanwhile."""
    return _tracked.get(model, frozenset())


def _values(instance: models.Model, hidden: frozenset[str]) -> dict[str, Any]:
    """The fields as the audit shows them: each secret as "[hidden]" (when set),
    with a digest beside it, kept in memory only, to tell whether it changed."""
    values: dict[str, Any] = {}
    for field in _fields(type(instance)):
        value = field.value_from_object(instance)
        if _is_secret(field, hidden, value):
            if value in (None, "", b""):
                values[field.name] = None
            else:
                raw = (
                    bytes(value)
                    if isinstance(value, bytes | memoryview)
                    else str(value).encode()
                )
                values[field.name] = (HIDDEN, hashlib.sha256(raw).hexdigest())
        else:
            values[field.name] = _json_safe(value)
    return values


def _shown(value: Any) -> Any:
    return HIDDEN if isinstance(value, tuple) else value


def _before_save(
    sender: type[models.Model], instance: models.Model, **kwargs: Any
) -> None:
    if _actor.get() is None or instance._state.adding or instance.pk is None:
        return
    old = sender._default_manager.filter(pk=instance.pk).first()
    if old is not None:
        hidden = _hidden(sender)
        instance.__dict__[_BEFORE] = (hidden, _values(old, hidden))


def _after_save(
    sender: type[models.Model], instance: models.Model, created: bool, **kwargs: Any
) -> None:
    actor = _actor.get()
    hidden, before = instance.__dict__.pop(_BEFORE, (_hidden(sender), None))
    if actor is None:
        return
    after = _values(instance, hidden)
    if created or before is None:
        changes = {
            name: [None, _shown(value)]
            for name, value in after.items()
            if value not in (None, "", [], {})
        }
        _write(actor, instance, "create", changes)
        return
    changes = {
        name: [_shown(before.get(name)), _shown(value)]
        for name, value in after.items()
        if before.get(name) != value
    }
    if changes:
        _write(actor, instance, "update", changes)


def _before_delete(
    sender: type[models.Model], instance: models.Model, **kwargs: Any
) -> None:
    # Named now: a cascade deletes what its name may read (a grant's group) before
    # post_delete is sent.
    if _actor.get() is not None:
        instance.__dict__[_REPR] = _repr(instance)


def _after_delete(
    sender: type[models.Model], instance: models.Model, **kwargs: Any
) -> None:
    actor = _actor.get()
    if actor is not None:
        values = _values(instance, _hidden(sender))
        _write(
            actor, instance, "delete", {n: [_shown(v), None] for n, v in values.items()}
        )


def _write(actor: Any, target: models.Model, action: str, changes: dict) -> Change:
    person = (
        actor
        if actor is not None and getattr(actor, "is_authenticated", False)
        else None
    )
    return Change.objects.create(
        actor=person,
        actor_name=person.get_username() if person is not None else "",
        kind=target._meta.label_lower,
        object_id=str(target.pk),
        object_repr=target.__dict__.pop(_REPR, None) or _repr(target),
        action=action[:32],
        changes=changes,
    )


def _repr(target: models.Model) -> str:
    try:
        return str(target)[:REPR_MAX]
    except ObjectDoesNotExist:  # its name reads a row already gone
        return f"{target._meta.verbose_name} {target.pk}"[:REPR_MAX]


def _json_safe(value: Any) -> Any:
    return json.loads(json.dumps(value, cls=DjangoJSONEncoder, default=str))
