"""demo.inventory under a worker's threads: restocks of one item at once all count.

ADK runs a sync tool on its tool threads (RunConfig.tool_thread_pool_config), and
the inventory is one dict per process, shared by every session.
"""

from demo import inventory
from tests.threads import at_once

RESTOCKS = 20000  # each thread's


def test_restocks_of_one_item_at_once_all_count(monkeypatch):
    monkeypatch.setattr(inventory, "STOCK", {"bolts": 0})

    def restock(index: int) -> list[int]:
        return [inventory.restock_item("bolts", 1)["in_stock"] for _ in range(RESTOCKS)]

    seen = at_once(restock)

    assert inventory.find_item("bolts")["in_stock"] == 8 * RESTOCKS
    # Each restock reports the stock it made: no two report the same.
    assert sorted(n for counts in seen for n in counts) == list(
        range(1, 8 * RESTOCKS + 1)
    )
