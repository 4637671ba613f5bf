"""agents.redaction under a worker's threads: the names it keeps of keys (the most
recent few thousand) are each key's own, so a secret is hidden and nothing else,
however many turns redact at once."""

from agents import redaction
from tests.threads import at_once

KEYS = 300  # each thread's


def test_turns_redacting_at_once_hide_every_secret_and_nothing_else():
    redaction._normalized_text.cache_clear()
    # Secrets and not, new to the cache: a scope prefix, cases, dashes.
    data = {
        **{f"user:Service-{n}_API_KEY": f"secret {n}" for n in range(KEYS)},
        **{f"app:token_count_{n}": n for n in range(KEYS)},
    }
    expected = {
        key: redaction.REDACTED if key.startswith("user:") else value
        for key, value in data.items()
    }

    redacted = at_once(lambda i: redaction.redact_secrets(data))

    assert redacted == [expected] * 8
