"""What a notice says, and its forms: a mail (plain text and HTML), and a
webhook's JSON in the generic, Slack and Teams formats.

A notice names the tool, the requester, the agent (or MCP client) and the
arguments, redacted by the one rule (agents.redaction), and never carries a
secret: a credential request says which credential, never a value. Every text
is escaped for where it goes: Django's templates for HTML, Slack's three
characters for mrkdwn, JSON for the rest.
"""

import json
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.template.loader import render_to_string
from django.utils.translation import gettext as _

from agents.models import Request
from agents.notices.links import Links
from agents.redaction import redact_secrets
from agents.requests import wording

ARGS_CHARS = 2000
SUBJECT_CHARS = 150
INBOX_PATH = "/inbox/"


@dataclass(frozen=True)
class Notice:
    """One request, as every channel tells it."""

    id: int
    kind: str
    title: str
    reason: str
    tool: str
    requester: str
    agent: str
    arguments: str  # redacted JSON, cut at ARGS_CHARS
    who_may_answer: str
    expires_at: str  # ISO 8601, or ""
    inbox_url: str
    approve_url: str = ""
    reject_url: str = ""


def notice_of(request: Request, links: Links | None) -> Notice:
    """The notice of `request`, with the approver's links if she has them."""
    requester = request.requester
    return Notice(
        id=request.pk,
        kind=request.kind,
        title=wording.title(request),
        reason=wording.reason(request),
        tool=request.tool_name or "a tool",
        requester=requester.get_username() if requester is not None else "",
        agent=request.agent or (request.client if request.session_id is None else ""),
        arguments=_arguments(request),
        who_may_answer=wording.who_may_answer(request),
        expires_at=request.expires_at.isoformat() if request.expires_at else "",
        inbox_url=f"{settings.TOOLCRIB_PUBLIC_URL}{INBOX_PATH}",
        approve_url=links.approve if links else "",
        reject_url=links.reject if links else "",
    )


def mail_of(notice: Notice) -> tuple[str, str, str]:
    """The mail's subject, plain text and HTML (escaped by the template)."""
    asked = _("%(title)s, asked by %(requester)s") % {
        "title": notice.title,
        "requester": notice.requester,
    }
    subject = " ".join(asked.split())
    context = {"notice": notice}
    text = render_to_string("notices/mail.txt", context)
    html = render_to_string("notices/mail.html", context)
    return subject[:SUBJECT_CHARS], text, html


def generic_of(notice: Notice) -> dict[str, Any]:
    """The generic webhook's body: the request as data."""
    links = {"inbox": notice.inbox_url}
    if notice.approve_url:
        links |= {"approve": notice.approve_url, "reject": notice.reject_url}
    return {
        "event": "request.new",
        "request": {
            "id": notice.id,
            "kind": notice.kind,
            "title": notice.title,
            "reason": notice.reason,
            "tool": notice.tool,
            "requester": notice.requester,
            "agent": notice.agent,
            "arguments": notice.arguments,
            "who_may_answer": notice.who_may_answer,
            "expires_at": notice.expires_at or None,
        },
        "links": links,
    }


def slack_of(notice: Notice) -> dict[str, Any]:
    """A Slack incoming webhook's message: text for notifications, and blocks."""
    facts = _facts(notice)
    blocks: list[dict[str, Any]] = [
        _mrkdwn(f"*{_slack(notice.title)}*\n{_slack(notice.reason)}"),
        {
            "type": "section",
            "fields": [
                {"type": "mrkdwn", "text": f"*{name}*\n{_slack(value)}"}
                for name, value in facts
            ],
        },
    ]
    if notice.arguments:
        blocks.append(_mrkdwn(f"```{_slack(notice.arguments)}```"))
    blocks.append({"type": "actions", "elements": _slack_buttons(notice)})
    return {"text": f"{notice.title}, asked by {notice.requester}", "blocks": blocks}


def teams_of(notice: Notice) -> dict[str, Any]:
    """A Teams (Workflows) webhook's message: one Adaptive Card."""
    body: list[dict[str, Any]] = [
        {"type": "TextBlock", "text": notice.title, "weight": "Bolder", "wrap": True},
        {"type": "TextBlock", "text": notice.reason, "wrap": True},
        {
            "type": "FactSet",
            "facts": [
                {"title": name, "value": value} for name, value in _facts(notice)
            ],
        },
    ]
    if notice.arguments:
        body.append(
            {
                "type": "TextBlock",
                "text": notice.arguments,
                "fontType": "Monospace",
                "wrap": True,
            }
        )
    actions = [
        {"type": "Action.OpenUrl", "title": title, "url": url}
        for title, url in _buttons(notice)
    ]
    card = {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": body,
        "actions": actions,
    }
    return {
        "type": "message",
        "attachments": [
            {
                "contentType": "application/vnd.microsoft.card.adaptive",
                "contentUrl": None,
                "content": card,
            }
        ],
    }


FORMATS = {"generic": generic_of, "slack": slack_of, "teams": teams_of}


def _facts(notice: Notice) -> list[tuple[str, str]]:
    facts = [
        ("Requester", notice.requester),
        ("Agent", notice.agent),
        ("Tool", notice.tool),
        ("Who may answer", notice.who_may_answer),
    ]
    if notice.expires_at:
        facts.append(("Expires", notice.expires_at))
    return [(name, value) for name, value in facts if value]


def _buttons(notice: Notice) -> list[tuple[str, str]]:
    buttons = []
    if notice.approve_url:
        buttons += [("Approve…", notice.approve_url), ("Reject…", notice.reject_url)]
    return [*buttons, ("Open the inbox", notice.inbox_url)]


def _slack_buttons(notice: Notice) -> list[dict[str, Any]]:
    styles = {"Approve…": "primary", "Reject…": "danger"}
    elements = []
    for title, url in _buttons(notice):
        button = {
            "type": "button",
            "text": {"type": "plain_text", "text": title},
            "url": url,
        }
        if title in styles:
            button["style"] = styles[title]
        elements.append(button)
    return elements


def _mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _slack(text: str) -> str:
    """Text as Slack's mrkdwn shows it, not as markup: its three control characters."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _arguments(request: Request) -> str:
    if request.kind == Request.Kind.CREDENTIAL or not request.args:
        return ""
    text = json.dumps(
        redact_secrets(request.args), indent=2, sort_keys=True, ensure_ascii=False
    )
    if len(text) > ARGS_CHARS:
        return text[: ARGS_CHARS - 1] + "…"
    return text
