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


def test_tool_threads_of_one_turn_noting_secrets_at_once_each_see_theirs_masked():
    values = redaction.SecretValues()  # one turn's, shared by its tool threads

    def tool(index: int) -> list[str]:
        said = []
        for n in range(20):
            secret = f"sk-thread{index}-call{n}-0123456789"
            values.note({"api_key": secret})
            said.append(values.mask(f"the key was {secret}, keep it"))
        return said

    masked = at_once(tool)

    assert masked == [[f"the key was {redaction.REDACTED}, keep it"] * 20] * 8
    assert values.mask("sk-thread3-call7-0123456789") == redaction.REDACTED
