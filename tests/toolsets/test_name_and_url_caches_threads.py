"""toolsets' pure caches under threads: the look-alike keys of group names
(confusables.py) and the normalized URL prefixes of grant conditions (urls.py)
kept per process are each text's own, however many requests work them out at
once; a text that is no URL is refused every time, never kept."""

import pytest

from tests.threads import at_once
from toolsets import confusables, urls

pytestmark = pytest.mark.django_db  # tests/toolsets/conftest.py needs the db

NAMES = [f"Team {n}" for n in range(100)] + [f"tEAM {n}" for n in range(100)]
PREFIXES = [f"HTTPS://Example.test/{n}/" for n in range(100)] + ["no url"]


def test_requests_working_out_keys_and_prefixes_at_once_get_each_texts_own():
    alone = (
        [confusables.lookalike_keys(name) for name in NAMES],
        [urls.url_prefix(text) for text in PREFIXES[:-1]],
    )
    confusables.lookalike_keys.cache_clear()
    urls.url_prefix.cache_clear()

    def work(index: int):
        keys = [confusables.lookalike_keys(name) for name in NAMES]
        prefixes = [urls.url_prefix(text) for text in PREFIXES[:-1]]
        with pytest.raises(urls.NotNormalizable):
            urls.url_prefix(PREFIXES[-1])
        return keys, prefixes

    assert at_once(work) == [alone] * 8
    assert confusables.look_alike("Team 1", "tEAM 1")
