"""What a tool tells the model about itself, as one digest.

A tool's description and the JSON schema of its arguments are what the model reads
before it calls: an imported server that changes them changes what the model is
told to do (a poisoned description). Staff approve an imported tool's declaration
by its digest (toolsets.reviews), and governance compares the digest of what the
server declares now with it (toolsets.governance.checks.Review).
"""

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def digest_of(description: str, parameters: Mapping[str, Any] | None) -> str:
    """The SHA-256 of a description and an argument schema, key order aside."""
    canonical = json.dumps(
        {"description": description or "", "parameters": dict(parameters or {})},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
