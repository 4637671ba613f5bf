"""Secrets at rest: Fernet tokens under a key derived from settings.

The key is TOOLCRIB_CREDENTIAL_KEY, or SECRET_KEY when that is unset, hashed with a
context (`purpose`) so each kind of secret has a key of its own. Changing the
setting makes every stored token unreadable: `unseal` returns None and the caller
asks for the secret again (a credential) or says what to re-enter (an import).
"""

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


def _fernet(purpose: str) -> Fernet:
    secret = settings.TOOLCRIB_CREDENTIAL_KEY or settings.SECRET_KEY
    digest = hashlib.sha256(f"{purpose}:".encode() + secret.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def seal(purpose: str, plain: str) -> str:
    """`plain` as an encrypted token (text)."""
    return _fernet(purpose).encrypt(plain.encode()).decode()


def unseal(purpose: str, token: str) -> str | None:
    """The plain text of a token, or None if the key changed (or it was tampered with)."""
    try:
        return _fernet(purpose).decrypt(token.encode()).decode()
    except InvalidToken:
        return None
