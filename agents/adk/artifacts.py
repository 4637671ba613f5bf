"""DjangoArtifactService: ADK artifacts as Artifact rows, their content in storage.

Behaves like ADK's InMemoryArtifactService (a parity test runs both): versions
count from 0 per (app, user, scope, filename); a filename starting `user:` belongs
to the user across sessions, any other to one session; listing a session's keys
includes the user's `user:` keys; a deleted artifact starts again at version 0.

Content goes through Django's storage API (the `artifacts` alias of STORAGES:
local files under MEDIA_ROOT by default, any django-storages backend by setting),
under a random name, so no filename ever becomes a path. A row keeps the ADK Part
without its payload, the mime type and the size.
"""

import uuid
from typing import Any

from asgiref.sync import sync_to_async
from django.core.files.base import ContentFile
from django.core.files.storage import Storage, storages
from django.db import IntegrityError, transaction
from django.db.models import Max, Q, QuerySet
from google.adk.artifacts import artifact_util
from google.adk.artifacts.base_artifact_service import (
    ArtifactVersion,
    BaseArtifactService,
    ensure_part,
)
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.platform import time as platform_time
from google.genai import types

from agents.models import Artifact

STORAGE_ALIAS = "artifacts"
USER_PREFIX = "user:"
USER_SCOPE = ""
SAVE_ATTEMPTS = 5


def artifact_storage() -> Storage:
    """The storage that holds artifact content (read when called, never at import)."""
    return storages[STORAGE_ALIAS]


def is_user_scoped(filename: str) -> bool:
    """True for a `user:` artifact: the user's across sessions."""
    return filename.startswith(USER_PREFIX)


class DjangoArtifactService(BaseArtifactService):
    """ADK's artifact service on the Django ORM and storage API."""

    async def save_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        artifact: types.Part | dict[str, Any],
        session_id: str | None = None,
        custom_metadata: dict[str, Any] | None = None,
    ) -> int:
        """Store a new version of an artifact; returns its version (first is 0)."""
        return await sync_to_async(save_artifact, thread_sensitive=True)(
            app_name=app_name,
            user_id=user_id,
            filename=filename,
            artifact=artifact,
            session_id=session_id,
            custom_metadata=custom_metadata,
        )

    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> types.Part | None:
        """A version (the latest if None) as an ADK Part, or None if there is none."""
        return await sync_to_async(load_artifact, thread_sensitive=True)(
            app_name=app_name,
            user_id=user_id,
            filename=filename,
            session_id=session_id,
            version=version,
        )

    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str | None = None
    ) -> list[str]:
        """Filenames of the session's artifacts and of the user's `user:` ones."""
        return await sync_to_async(list_artifact_keys, thread_sensitive=True)(
            app_name=app_name, user_id=user_id, session_id=session_id
        )

    async def delete_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
    ) -> None:
        """Delete every version of an artifact, and its content."""
        await sync_to_async(delete_artifact, thread_sensitive=True)(
            app_name=app_name, user_id=user_id, filename=filename, session_id=session_id
        )

    async def list_versions(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
    ) -> list[int]:
        """The versions of an artifact, oldest first."""
        rows = await sync_to_async(_version_rows, thread_sensitive=True)(
            app_name=app_name, user_id=user_id, filename=filename, session_id=session_id
        )
        return [row.version for row in rows]

    async def list_artifact_versions(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
    ) -> list[ArtifactVersion]:
        """Metadata of every version of an artifact, oldest first."""
        rows = await sync_to_async(_version_rows, thread_sensitive=True)(
            app_name=app_name, user_id=user_id, filename=filename, session_id=session_id
        )
        return [artifact_version(row) for row in rows]

    async def get_artifact_version(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> ArtifactVersion | None:
        """Metadata of one version (the latest if None), or None."""
        row = await sync_to_async(_version_row, thread_sensitive=True)(
            app_name=app_name,
            user_id=user_id,
            filename=filename,
            session_id=session_id,
            version=version,
        )
        return None if row is None else artifact_version(row)


def save_artifact(
    *,
    app_name: str,
    user_id: str,
    filename: str,
    artifact: types.Part | dict[str, Any],
    session_id: str | None,
    custom_metadata: dict[str, Any] | None,
) -> int:
    """See DjangoArtifactService.save_artifact()."""
    if not is_user_scoped(filename):
        if session_id is None:
            raise InputValidationError(
                "Session ID must be provided for session-scoped artifacts."
            )
        artifact_util._validate_session_id_for_flat_storage(session_id)
    part = ensure_part(artifact).model_copy(deep=True)
    scope = _scope(app_name, user_id, filename, session_id)
    mime_type = _mime_type(part, app_name, user_id, session_id)
    stored, payload = _split(part)
    path = _store(payload)
    try:
        return _insert_version(
            key={
                "app_name": app_name,
                "user_id": user_id,
                "session_key": scope,
                "filename": filename,
            },
            fields={
                "mime_type": mime_type or "",
                "size": len(payload or b""),
                "storage_path": path,
                "part": stored,
                "custom_metadata": dict(custom_metadata or {}),
            },
        )
    except BaseException:
        delete_files([path])
        raise


def load_artifact(
    *,
    app_name: str,
    user_id: str,
    filename: str,
    session_id: str | None,
    version: int | None,
    remaining_depth: int = artifact_util._MAX_ARTIFACT_REFERENCE_DEPTH,
) -> types.Part | None:
    """See DjangoArtifactService.load_artifact(); follows `artifact://` references."""
    row = _version_row(
        app_name=app_name,
        user_id=user_id,
        filename=filename,
        session_id=session_id,
        version=version,
    )
    if row is None:
        return None
    part = part_of(row)
    if artifact_util.is_artifact_ref(part):
        target = artifact_util.resolve_artifact_reference(
            file_uri=part.file_data.file_uri,
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            remaining_depth=remaining_depth,
        )
        return load_artifact(
            app_name=target.app_name,
            user_id=target.user_id,
            filename=target.filename,
            session_id=target.session_id,
            version=target.version,
            remaining_depth=remaining_depth - 1,
        )
    if part == types.Part() or artifact_util._is_rewind_tombstone(part):
        return None
    return part


def list_artifact_keys(
    *, app_name: str, user_id: str, session_id: str | None
) -> list[str]:
    """See DjangoArtifactService.list_artifact_keys()."""
    artifact_util.validate_path_segment(app_name, "app_name")
    artifact_util.validate_path_segment(user_id, "user_id")
    scopes = Q(session_key=USER_SCOPE)
    if session_id is not None:
        artifact_util.validate_path_segment(session_id, "session_id")
        scopes |= Q(session_key=session_id)
    rows = Artifact.objects.filter(scopes, app_name=app_name, user_id=user_id)
    return sorted(set(rows.values_list("filename", flat=True)))


def delete_artifact(
    *, app_name: str, user_id: str, filename: str, session_id: str | None
) -> None:
    """See DjangoArtifactService.delete_artifact()."""
    scope = _scope(app_name, user_id, filename, session_id)
    with transaction.atomic():
        rows = _rows(app_name, user_id, scope, filename)
        paths = [path for path in rows.values_list("storage_path", flat=True) if path]
        rows.delete()
        transaction.on_commit(lambda: delete_files(paths))


def part_of(row: Artifact) -> types.Part:
    """The stored ADK Part of a version, payload read back from storage."""
    data = dict(row.part)
    payload = _read(row.storage_path)
    if "inline_data" in data:
        data["inline_data"] = {**data["inline_data"], "data": payload}
    elif "file_data" not in data:
        data["text"] = payload.decode("utf-8")
    return types.Part.model_validate(data)


def read_content(row: Artifact) -> bytes:
    """The stored content of a version: text as UTF-8, inline data as is."""
    return _read(row.storage_path)


def artifact_version(row: Artifact) -> ArtifactVersion:
    """ADK's metadata of one stored version."""
    session_id = None if row.session_key == USER_SCOPE else row.session_key
    return ArtifactVersion(
        version=row.version,
        canonical_uri=artifact_util.get_artifact_uri(
            app_name=row.app_name,
            user_id=row.user_id,
            filename=row.filename,
            version=row.version,
            session_id=session_id,
        ),
        custom_metadata=dict(row.custom_metadata),
        create_time=row.create_time,
        mime_type=row.mime_type or None,
    )


def _scope(app_name: str, user_id: str, filename: str, session_id: str | None) -> str:
    """The session key of an artifact, validated as InMemory validates its path."""
    artifact_util.validate_path_segment(app_name, "app_name")
    artifact_util.validate_path_segment(user_id, "user_id")
    if is_user_scoped(filename):
        return USER_SCOPE
    if session_id is None:
        raise InputValidationError(
            "Session ID must be provided for session-scoped artifacts."
        )
    artifact_util.validate_path_segment(session_id, "session_id")
    return session_id


def _rows(app_name: str, user_id: str, scope: str, filename: str) -> QuerySet[Artifact]:
    return Artifact.objects.filter(
        app_name=app_name, user_id=user_id, session_key=scope, filename=filename
    )


def _version_rows(
    *, app_name: str, user_id: str, filename: str, session_id: str | None
) -> list[Artifact]:
    scope = _scope(app_name, user_id, filename, session_id)
    return list(_rows(app_name, user_id, scope, filename).order_by("version"))


def _version_row(
    *,
    app_name: str,
    user_id: str,
    filename: str,
    session_id: str | None,
    version: int | None,
) -> Artifact | None:
    rows = _rows(
        app_name, user_id, _scope(app_name, user_id, filename, session_id), filename
    )
    if version is None:
        return rows.order_by("-version").first()
    return rows.filter(version=version).first()


def _mime_type(
    part: types.Part, app_name: str, user_id: str, session_id: str | None
) -> str | None:
    """The mime type InMemory records for a part; rejects what it rejects."""
    if part.inline_data is not None:
        return part.inline_data.mime_type
    if part.text is not None:
        return "text/plain"
    if part.file_data is None:
        raise InputValidationError("Not supported artifact type.")
    if not artifact_util.is_artifact_ref(part):
        return part.file_data.mime_type
    target = artifact_util.parse_artifact_uri(part.file_data.file_uri)
    if not target:
        raise InputValidationError(
            f"Invalid artifact reference URI: {part.file_data.file_uri}"
        )
    artifact_util.validate_artifact_reference_scope(
        app_name=app_name, user_id=user_id, session_id=session_id, parsed_uri=target
    )
    return None  # A reference's mime type is its target's, known when loaded.


def _split(part: types.Part) -> tuple[dict[str, Any], bytes | None]:
    """The part without its payload (as JSON), and the payload to store."""
    if part.inline_data is not None:
        stored = part.model_dump(
            mode="json", exclude_none=True, exclude={"inline_data": {"data"}}
        )
        return stored, part.inline_data.data or b""
    if part.text is not None:
        stored = part.model_dump(mode="json", exclude_none=True, exclude={"text"})
        return stored, part.text.encode("utf-8")
    return part.model_dump(mode="json", exclude_none=True), None


def _insert_version(*, key: dict[str, str], fields: dict[str, Any]) -> int:
    """Insert the next version; a concurrent save of the same version retries."""
    for _ in range(SAVE_ATTEMPTS - 1):
        try:
            return _insert_once(key, fields)
        except IntegrityError:
            continue
    return _insert_once(key, fields)


def _insert_once(key: dict[str, str], fields: dict[str, Any]) -> int:
    with transaction.atomic():
        last = Artifact.objects.filter(**key).aggregate(last=Max("version"))["last"]
        version = 0 if last is None else last + 1
        Artifact.objects.create(
            **key, **fields, version=version, create_time=platform_time.get_time()
        )
    return version


def _store(payload: bytes | None) -> str:
    if payload is None:
        return ""
    name = uuid.uuid4().hex
    return artifact_storage().save(f"{name[:2]}/{name}", ContentFile(payload))


def _read(path: str) -> bytes:
    if not path:
        return b""
    with artifact_storage().open(path, "rb") as handle:
        return handle.read()


def delete_files(paths: list[str]) -> None:
    """Delete stored content by storage path (after the rows are gone)."""
    storage = artifact_storage()
    for path in paths:
        if path:
            storage.delete(path)
