"""The connections' snapshot is read from many threads at once while staff change
it: every reader sees a whole snapshot, and after the change only the new one."""

import pytest

from agents.connections import save_connection
from agents.model_table import forget, snapshot, target_for
from tests.threads import at_once

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _fresh():
    forget()
    yield
    forget()


def lab(base_url: str):
    return {"name": "lab", "kind": "openai_compatible", "base_url": base_url}


def test_many_threads_read_the_change_and_never_a_stale_connection():
    connection = save_connection(
        connection=None, fields=lab("http://old.example/v1"), key="k1"
    )
    assert (
        at_once(lambda i: target_for("lab/m").api_base, threads=8)
        == ["http://old.example/v1"] * 8
    )

    save_connection(
        connection=connection, fields=lab("http://new.example/v1"), key="k2"
    )

    def read(i: int) -> tuple[str, str]:
        target = target_for("lab/m")
        return target.api_base, target.api_key

    assert at_once(read, threads=8) == [("http://new.example/v1", "k2")] * 8
    stamps = {id(s) for s in at_once(lambda i: snapshot(), threads=8)}
    assert len(stamps) == 1  # loaded once, then shared


def test_a_removed_connection_is_gone_for_every_thread():
    from agents.connections import remove_connection

    connection = save_connection(
        connection=None, fields=lab("http://x.example"), key=""
    )
    assert target_for("lab/m") is not None

    remove_connection(connection)

    assert at_once(lambda i: target_for("lab/m"), threads=8) == [None] * 8
