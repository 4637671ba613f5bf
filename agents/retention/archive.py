"""What a run of the retention job removes, written before it is removed.

One file per run, `retention-<UTC time>-<holder>.jsonl.gz` in
TOOLCRIB_RETENTION_ARCHIVE_DIR: Django's JSON Lines serialization (one row a line,
`{"model": ..., "pk": ..., "fields": ...}`), gzipped, so `manage.py loaddata
<file>` puts the rows back. An artifact's content is copied beside it, under
`retention-<...>-files/<storage path>`.

Each batch is written and flushed to the disk before the transaction that deletes
it, outside it, so its writing holds no lock: if writing fails, nothing of the
batch is deleted. A row written but then not deleted (its session came back into
use meanwhile, or the delete's commit failed) stays in the database too, and a
later run may archive it again: a file may hold a row that was not removed, never
miss one that was.
"""

import gzip
import io
import json
import os
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import IO

from django.core import serializers
from django.core.files.storage import Storage
from django.db.models import Model


class Archive:
    """A run's archive file, opened on the first write, removed if none came."""

    def __init__(self, *, folder: Path, started: datetime, holder: str) -> None:
        stem = f"retention-{started:%Y%m%dT%H%M%SZ}-{holder[:8]}"
        self.path = folder / f"{stem}.jsonl.gz"
        self.files = folder / f"{stem}-files"
        self.rows = 0
        self._text: IO[str] | None = None
        self._gzip: gzip.GzipFile | None = None

    def write(self, rows: Iterable[Model]) -> None:
        """Append rows, in order (not yet on the disk: see flush)."""
        rows = list(rows)
        if not rows:
            return
        serializers.serialize("jsonl", rows, stream=self._open())
        self.rows += len(rows)

    def copy_files(self, *, storage: Storage, paths: Iterable[str]) -> None:
        """Copy stored files (an artifact's content) beside the archive."""
        for path in paths:
            target = self.files / path
            target.parent.mkdir(parents=True, exist_ok=True)
            with storage.open(path, "rb") as source:
                target.write_bytes(source.read())

    def flush(self) -> None:
        """Put what was written on the disk: a crash after this leaves it readable."""
        if self._text is None or self._gzip is None:
            return
        self._text.flush()
        self._gzip.flush()
        os.fsync(self._gzip.fileobj.fileno())

    def close(self) -> Path | None:
        """Close the file; its path, or None (and no file) when nothing was written."""
        if self._text is None:
            return None
        self._text.close()
        return self.path

    def _open(self) -> IO[str]:
        if self._text is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._gzip = gzip.GzipFile(self.path, "wb")
            self._text = io.TextIOWrapper(self._gzip, encoding="utf-8", newline="\n")
        return self._text


def read_archive(path: Path) -> list[dict]:
    """An archive's rows, as serialized (`model`, `pk`, `fields`), in order."""
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]
