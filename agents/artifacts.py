"""Artifacts as users see them: a session's files, uploads and downloads.

The agent sees the same files through DjangoArtifactService: what a user uploads
into a session, a tool there can load, and what a tool saves, the user can
download. A session shows its own artifacts and its user's `user:` ones.
"""

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils.translation import gettext as _
from google.genai import types

from agents.adk.artifacts import (
    USER_SCOPE,
    delete_files,
    load_artifact,
    save_artifact,
)
from agents.events.log import record_and_publish
from agents.models import Artifact, Session
from project.errors import DomainError, NotFoundError, SessionClosed

UPLOAD_AUTHOR = "user"
# Types a browser may show in place (a preview's frame) without running a script:
# never HTML, SVG or XML, which carry scripts, whatever their name says.
INLINE_TYPES = frozenset(
    {
        "application/pdf",
        "image/avif",
        "image/bmp",
        "image/gif",
        "image/jpeg",
        "image/png",
        "image/webp",
        "text/plain",
    }
)


class NotStoredHere(DomainError):
    status_code = 404
    code = "not_stored_here"


@dataclass(frozen=True)
class Download:
    """One version's content, ready to send."""

    filename: str
    version: int
    content: bytes
    content_type: str


def session_artifacts(*, session: Session) -> QuerySet[Artifact]:
    """Every version of the session's artifacts and of its user's `user:` ones."""
    # Artifacts are ADK's: keyed by the session's ADK id within its (app, user).
    scopes = Q(session_key=session.adk_id) | Q(session_key=USER_SCOPE)
    return Artifact.objects.filter(
        scopes, app_name=session.app_name, user_id=session.user_id
    ).order_by("filename", "version")


def upload_artifact(
    *, session: Session, filename: str, content: bytes, mime_type: str
) -> Artifact:
    """Save an uploaded file as the next version of an artifact, and say so on the stream."""
    if session.closed_at:
        raise SessionClosed()
    version = save_artifact(
        app_name=session.app_name,
        user_id=session.user_id,
        filename=filename,
        artifact=types.Part(inline_data=types.Blob(mime_type=mime_type, data=content)),
        session_id=session.adk_id,
        custom_metadata={"uploaded": True},
    )
    record_and_publish(
        session=session,
        kind="artifact",
        author=UPLOAD_AUTHOR,
        data={"artifact_delta": {filename: version}},
    )
    return session_artifacts(session=session).get(filename=filename, version=version)


def download_artifact(
    *, session: Session, filename: str, version: int | None
) -> Download:
    """A version's content (the latest if None), following artifact references."""
    row = _version_row(session, filename, version)
    part = load_artifact(
        app_name=session.app_name,
        user_id=session.user_id,
        filename=filename,
        session_id=session.adk_id,
        version=row.version,
    )
    if part is None:
        raise NotFoundError(_("No such artifact."))
    if part.inline_data is not None:
        blob = part.inline_data
        content_type = blob.mime_type or "application/octet-stream"
        return Download(filename, row.version, blob.data or b"", content_type)
    if part.text is not None:
        content = part.text.encode("utf-8")
        return Download(filename, row.version, content, "text/plain; charset=utf-8")
    raise NotStoredHere(
        _(
            "This version points to %(part_file_data_file_uri)s; its content is not stored in Toolcrib."
        )
        % {"part_file_data_file_uri": part.file_data.file_uri}
    )


def may_show_inline(content_type: str) -> bool:
    """Whether a download of this type may be shown in place rather than saved."""
    return content_type.split(";", 1)[0].strip().lower() in INLINE_TYPES


def delete_session_artifacts(*, session: Session) -> None:
    """Delete the session's own artifacts and their content (not `user:` ones)."""
    with transaction.atomic():
        rows = Artifact.objects.filter(
            app_name=session.app_name,
            user_id=session.user_id,
            session_key=session.adk_id,
        )
        paths = [path for path in rows.values_list("storage_path", flat=True) if path]
        rows.delete()
        transaction.on_commit(lambda: delete_files(paths))


def _version_row(session: Session, filename: str, version: int | None) -> Artifact:
    rows = session_artifacts(session=session).filter(filename=filename)
    row = (
        rows.order_by("-version").first()
        if version is None
        else rows.filter(version=version).first()
    )
    if row is None:
        raise NotFoundError(_("No such artifact."))
    return row
