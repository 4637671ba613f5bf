"""PostgreSQL: a search reads an owner's newest messages holding a word first (issue 43).

0032's GIN index on (owner, vector) found every one of the owner's messages holding
a word: a word she writes daily is tens of thousands, each read from the table to
keep the newest MAX_HITS (agents.search), and her own key's posting list, her every
message, was walked whole for each word. Now each row has one number for its owner
and its window of event ids, `owner << 32 + event_id / 1024` (owner_window):

- a GIN index on (owner_window, vector) finds her rows holding a word in a range
  of her windows, reading her rows of those windows alone, not all of hers;
- a B-tree on another number, `owner << 40 + event_id` (OWNER_EVENT), gives her
  newest and oldest event at once: no condition of a search is on it, so the
  planner can never read her rows through it rather than through the words' index
  (a B-tree on the owner, or on owner_window, would find her rows too);
- `agents_search_newest(owner, query, limit)` reads her rows holding the query in
  her newest windows first (FIRST_SPAN of them), widened only while they hold
  fewer than `limit` (by what the last ones held: usually once), then, if it must,
  all her windows; it gives each row kept with its rank (`ts_rank`), not its
  vector. A range of her newest windows holding `limit` rows holds her newest
  `limit`: the rows found are exactly those of 0032's query.

On SQLite this migration does nothing (FTS5 reads rowids newest first already).
"""

from django.db import migrations

WINDOW = 1024  # event ids a window spans
# An owner's windows are one range of numbers: 2**32 windows of event ids each.
OWNER_WINDOW = f"((owner_id::bigint << 32) + event_id / {WINDOW})"
OWNER_EVENT = "((owner_id::bigint << 40) + event_id)"  # 2**40 event ids an owner
FIRST_SPAN = 128  # windows read first: her newest 131,072 event ids

NEWEST = f"""
CREATE FUNCTION agents_search_newest(p_owner integer, p_query tsquery, p_limit integer)
RETURNS TABLE (session_id varchar, event_id bigint, score real)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
    first_window bigint := p_owner::bigint << 32;
    last_window bigint := ((p_owner::bigint + 1) << 32) - 1;
    first_event bigint := p_owner::bigint << 40;
    newest bigint;
    oldest bigint;
    since bigint;
    span bigint := {FIRST_SPAN};
    sessions varchar[];
    events bigint[];
    scores real[];
BEGIN
    -- OWNER_EVENT holds owners below 2**23 (and event ids below 2**40): past
    -- that, her windows all at once (the same rows, read as 0032 read them).
    IF p_owner >= (1 << 23) THEN
        oldest := first_window;
        newest := first_window;
        span := 0;
    ELSE
        SELECT first_window + (max({OWNER_EVENT}) - first_event) / {WINDOW},
            first_window + (min({OWNER_EVENT}) - first_event) / {WINDOW}
        INTO newest, oldest FROM agents_search_doc
        WHERE {OWNER_EVENT} BETWEEN first_event AND first_event + (1::bigint << 40) - 1;
    END IF;
    IF newest IS NULL THEN
        RETURN;
    END IF;
    LOOP
        since := CASE WHEN newest - span > oldest THEN newest - span
            ELSE first_window END;
        -- Her rows holding the query in windows `since` on, the newest `p_limit`
        -- (`event_id + 0`: sorted after the GIN index found them, never read down
        -- the event id's B-tree newest first), ranked by the stored vector.
        SELECT array_agg(s.session_id), array_agg(s.event_id),
            array_agg(ts_rank(s.vector, p_query))
        INTO sessions, events, scores
        FROM (SELECT d.session_id, d.event_id, d.vector FROM agents_search_doc AS d
            WHERE {OWNER_WINDOW} BETWEEN since AND last_window
                AND d.vector @@ p_query
            ORDER BY d.event_id + 0 DESC LIMIT p_limit) AS s;
        IF since = first_window OR coalesce(cardinality(events), 0) >= p_limit THEN
            RETURN QUERY SELECT * FROM unnest(sessions, events, scores);
            RETURN;
        END IF;
        -- Wider by what these windows held (a quarter more), at least twice.
        span := span * CASE WHEN events IS NULL THEN 16
            ELSE greatest(2, ceil(1.25 * p_limit / cardinality(events)))::bigint END;
    END LOOP;
END $$
"""

MAKE = [
    "DROP INDEX IF EXISTS agents_search_doc_words",
    f"""CREATE INDEX agents_search_doc_window_words ON agents_search_doc
    USING gin ({OWNER_WINDOW}, vector)""",
    f"CREATE INDEX agents_search_doc_owner_event ON agents_search_doc ({OWNER_EVENT})",
    NEWEST,
    "ANALYZE agents_search_doc",
]
UNMAKE = [
    "DROP FUNCTION IF EXISTS agents_search_newest(integer, tsquery, integer)",
    "DROP INDEX IF EXISTS agents_search_doc_owner_event",
    "DROP INDEX IF EXISTS agents_search_doc_window_words",
    """CREATE INDEX agents_search_doc_words ON agents_search_doc
    USING gin (owner_id, vector)""",
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


class Migration(migrations.Migration):
    dependencies = [("agents", "0041_model_grants_and_picks")]

    operations = [migrations.RunPython(make, unmake)]
