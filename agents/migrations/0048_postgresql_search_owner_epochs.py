"""PostgreSQL: a search's words are keys of their owner's, by stretches of event ids
(issue 43).

0042's GIN index on (owner window, vector) held the owner and the words as two keys
of one index: a word's rows were found by reading its posting list, every user's
rows holding it (a prefix: every word it begins), and her windows' posting lists,
then keeping the rows in both. On a team's months both lists are tens of thousands
of rows for a word she writes daily, whatever she asks for.

Now each word of a message is indexed under a key of its own owner's and its
stretch ("epoch") of 2**16 event ids: `<owner>.<epoch>.<lexeme>`
(`agents_search_keys`, an expression GIN index, so no column and no trigger
changes). A word's prefix in one of her epochs is one key range of the index,
holding her rows of that epoch alone: a search reads her newest epochs first
and no row of anyone else's.

- `agents_search_newest(owner, lexemes, limit)` gives her newest `limit` messages
  holding every lexeme (each as a prefix), newest first: her newest epoch first,
  then older stretches, wider by what the last held, until `limit` are found or
  her oldest epoch is read. Epochs are disjoint ranges of event ids, so each
  stretch's newest rows come after every newer stretch's: the rows are exactly
  those of 0032's query (`tests/agents/test_search.py`).
- A message's rank is no longer its `ts_rank()`: agents.search counts a session's
  messages holding a word (and its title, TITLE_WEIGHT), as on SQLite.
- 0042's index on (owner window, vector) is dropped; its B-tree on OWNER_EVENT
  stays (her newest and oldest event).

On SQLite this migration does nothing.
"""

import importlib

from django.db import migrations

EPOCH_BITS = 16  # an epoch: 65,536 event ids
OWNER_EVENT = "((owner_id::bigint << 40) + event_id)"  # 0042's B-tree

# A key is at most 2,047 bytes (PostgreSQL's longest lexeme): a word is keyed by its
# first KEY_CHARS characters (4 bytes each at most, after an owner and epoch of 25
# at most), a search's word being 64 at most (agents.search.MAX_TERM_CHARS). A
# tsvector is at most 1 MiB: a message's keys are taken while they fit in KEYS_BYTES
# (8 bytes an entry counted; only a message of tens of thousands of distinct words
# comes near it).
KEY_CHARS = 500
KEYS_BYTES = 1_000_000

KEYS = f"""
CREATE FUNCTION agents_search_keys(p_owner integer, p_event bigint, p_vector tsvector)
RETURNS tsvector LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
SELECT array_to_tsvector(ARRAY(
    SELECT key FROM (
        SELECT key, sum(octet_length(key) + 8) OVER (ORDER BY key) AS size
        FROM (SELECT DISTINCT p_owner::text || '.' || (p_event >> {EPOCH_BITS})::text
                || '.' || left(lexeme, {KEY_CHARS}) AS key
            FROM unnest(tsvector_to_array(p_vector)) AS lexeme) AS keys) AS sized
    WHERE size <= {KEYS_BYTES}))
$$
"""

NEWEST = f"""
CREATE FUNCTION agents_search_newest(p_owner integer, p_lexemes text[], p_limit integer)
RETURNS TABLE (session_id varchar, event_id bigint)
LANGUAGE plpgsql STABLE SET max_parallel_workers_per_gather = 0 AS $$
#variable_conflict use_column
DECLARE
    first_event bigint := p_owner::bigint << 40;
    newest bigint;
    oldest bigint;
    lo bigint;
    hi bigint;
    span bigint := 1;
    want integer := p_limit;
    got integer;
    query tsquery;
BEGIN
    IF coalesce(cardinality(p_lexemes), 0) = 0 OR p_limit < 1 THEN
        RETURN;
    END IF;
    -- OWNER_EVENT holds owners below 2**23: past that, the table's own range.
    IF p_owner >= (1 << 23) OR p_owner < 0 THEN
        SELECT max(d.event_id) >> {EPOCH_BITS}, min(d.event_id) >> {EPOCH_BITS}
        INTO newest, oldest FROM agents_search_doc AS d;
    ELSE
        SELECT (max({OWNER_EVENT}) - first_event) >> {EPOCH_BITS},
            (min({OWNER_EVENT}) - first_event) >> {EPOCH_BITS}
        INTO newest, oldest FROM agents_search_doc
        WHERE {OWNER_EVENT} BETWEEN first_event AND first_event + (1::bigint << 40) - 1;
    END IF;
    IF newest IS NULL THEN
        RETURN;
    END IF;
    hi := newest;
    LOOP
        lo := greatest(oldest, hi - span + 1);
        -- Epochs lo..hi: each lexeme a prefix of her key in each, all in one row.
        SELECT string_agg(words, ' | ')::tsquery INTO query
        FROM (SELECT '(' || string_agg(
                '''' || replace(replace(p_owner::text || '.' || epoch::text || '.'
                    || lexeme, '\\', '\\\\'), '''', '''''') || ''':*', ' & ')
                || ')' AS words
            FROM generate_series(lo, hi) AS epoch, unnest(p_lexemes) AS lexeme
            GROUP BY epoch) AS each_epoch;
        RETURN QUERY SELECT d.session_id, d.event_id FROM agents_search_doc AS d
            WHERE agents_search_keys(d.owner_id, d.event_id, d.vector) @@ query
            ORDER BY d.event_id DESC LIMIT want;
        GET DIAGNOSTICS got = ROW_COUNT;
        want := want - got;
        IF want <= 0 OR lo <= oldest THEN
            RETURN;
        END IF;
        -- The next stretch: as many epochs as this one's yield says the rest
        -- takes, a quarter more (at most 64 times as many; four times, if none).
        span := CASE WHEN got = 0 THEN span * 4
            ELSE least(span * 64, greatest(1, ceil(1.25 * span * want / got)))::bigint
            END;
        hi := lo - 1;
    END LOOP;
END $$
"""

MAKE = [
    KEYS,
    """CREATE INDEX agents_search_doc_keys ON agents_search_doc
    USING gin (agents_search_keys(owner_id, event_id, vector))""",
    "DROP FUNCTION IF EXISTS agents_search_newest(integer, tsquery, integer)",
    NEWEST,
    "DROP INDEX IF EXISTS agents_search_doc_window_words",
    "ANALYZE agents_search_doc",
]
UNMAKE = [
    "DROP FUNCTION IF EXISTS agents_search_newest(integer, text[], integer)",
    "DROP INDEX IF EXISTS agents_search_doc_keys",
    "DROP FUNCTION IF EXISTS agents_search_keys(integer, bigint, tsvector)",
]


def make(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for statement in MAKE:
        schema_editor.execute(statement, params=None)


def unmake(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for statement in UNMAKE:
        schema_editor.execute(statement, params=None)
    before = importlib.import_module(
        "agents.migrations.0042_postgresql_search_newest_first"
    )
    for statement in before.MAKE:
        if "owner_event" not in statement:  # kept by this migration
            schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [("agents", "0047_run_eval")]

    operations = [migrations.RunPython(make, unmake)]
