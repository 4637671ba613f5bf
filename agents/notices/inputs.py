"""What clients send about notices: preferences, and staff's webhook destinations.

One pydantic model per input, as agents.inputs holds the others."""

from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, model_validator

from agents.inputs import ClientInput, StoredText

Kind = Literal["approval", "credential", "call"]
Strict = Annotated[bool, Field(strict=True)]


class ChannelsInput(ClientInput):
    """Whether mail and her own webhooks tell her of a kind of request."""

    mail: Strict
    webhook: Strict


class PreferencesInput(ClientInput):
    """The channels of the kinds given; a kind left out stays as it was."""

    # Left out when unchanged (a default, never validated): null is no channels.
    approval: ChannelsInput = None  # type: ignore[assignment]
    credential: ChannelsInput = None  # type: ignore[assignment]
    call: ChannelsInput = None  # type: ignore[assignment]

    @model_validator(mode="after")
    def _something(self) -> "PreferencesInput":
        if not self.model_fields_set:
            raise ValueError("give the channels of approval, credential or call")
        return self


def _web_address(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ValueError("give an http:// or https:// address")
    if parts.username or parts.password:
        raise ValueError("give the address without a user name or password")
    return value


WebAddress = Annotated[
    StoredText, Field(min_length=1, max_length=2000), AfterValidator(_web_address)
]


class DestinationInput(ClientInput):
    """A webhook destination: a person's (`user`), or a team's (`group`, or all)."""

    name: Annotated[StoredText, Field(min_length=1, max_length=100)]
    url: WebAddress
    format: Literal["generic", "slack", "teams"] = "generic"
    kinds: Annotated[list[Kind], Field(min_length=1, max_length=3)]
    user: Annotated[int, Field(strict=True, ge=1)] | None = None
    group: Annotated[StoredText, Field(max_length=150)] = ""
    # The generic format's signing secret; left out on a change: kept.
    secret: Annotated[StoredText, Field(min_length=16, max_length=200)] | None = None
    enabled: Strict = True

    @model_validator(mode="after")
    def _consistent(self) -> "DestinationInput":
        if self.user is not None and self.group:
            raise ValueError("a destination is a person's (user) or a team's (group)")
        if self.secret and self.format != "generic":
            raise ValueError("only the generic format is signed: leave secret out")
        if len(set(self.kinds)) != len(self.kinds):
            raise ValueError("name each kind once")
        return self
