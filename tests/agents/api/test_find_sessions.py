"""Finding one's sessions over the API: titles, rename, archive, delete, status,
pages, the agent filter and full-text search (agents/session_list.py,
agents/search.py, agents/titles.py).

tests/agents/test_session_search_postgresql.py runs this file again on PostgreSQL.
"""

import itertools
import time
from urllib.parse import parse_qs, urlsplit

import pytest
from django.utils import timezone

from agents.models import Event, Request, Run, Session
from agents.session_list import PAGE_SIZE
from agents.sessions import create_session

pytestmark = pytest.mark.django_db
# A real turn runs on the turn loop's thread, outside the test's transaction.
turns = pytest.mark.django_db(transaction=True)

_seq = itertools.count(1)


def new_session(user, agent, *, title: str = "") -> Session:
    session = create_session(user=user, agent=agent)
    if title:
        Session.objects.filter(pk=session.pk).update(title=title)
    return session


def store(session: Session, text: str, *, kind: str = "text", **part) -> Event:
    """A stored message, as the session service stores one (the search reads it)."""
    role = "user" if kind == "user_message" else "model"
    seq = next(_seq)
    return Event.objects.create(
        session=session,
        seq=seq,
        event_id=f"e{seq}",
        author="user" if role == "user" else "bank",
        kind=kind,
        timestamp=time.time(),
        data={
            "author": "x",
            "content": {"role": role, "parts": [{"text": text, **part}]},
        },
    )


def listed(client, **params) -> list[str]:
    response = client.get("/api/sessions/", params)
    assert response.status_code == 200, response.content
    return [session["id"] for session in response.json()["results"]]


def found(client, words: str, **params) -> list[str]:
    return listed(client, search=words, **params)


# Titles


@turns
def test_the_first_message_names_the_session_and_the_next_ones_do_not(
    alice, demo_agents, start_session, say, api_for
):
    session = start_session(alice, "weather_sentiment")
    client = api_for(alice)
    assert client.get(f"/api/sessions/{session}/").json()["title"] == ""

    say(alice, session, "  weather in london?\nand a second line")
    say(alice, session, "weather in paris")

    shown = client.get(f"/api/sessions/{session}/").json()
    assert shown["title"] == "weather in london?"
    assert client.get("/api/sessions/").json()["results"][0]["title"] == (
        "weather in london?"
    )


@turns
def test_a_long_first_message_is_cut_at_a_word(
    alice, demo_agents, start_session, say, api_for
):
    session = start_session(alice, "weather_sentiment")
    words = "weather in london " + "and every other city of the kingdom " * 5

    say(alice, session, words)

    title = api_for(alice).get(f"/api/sessions/{session}/").json()["title"]
    assert len(title) <= 60
    assert title.endswith("…")
    assert words.startswith(title[:-1])
    assert title[-2] != " "


@turns
def test_a_session_renamed_before_its_first_message_keeps_its_name(
    alice, demo_agents, start_session, say, api_for
):
    session = start_session(alice, "weather_sentiment")
    client = api_for(alice)

    renamed = client.patch(
        f"/api/sessions/{session}/", {"title": "  Trip planning "}, format="json"
    )
    say(alice, session, "weather in london?")

    assert renamed.status_code == 200, renamed.content
    assert renamed.json()["title"] == "Trip planning"
    assert client.get(f"/api/sessions/{session}/").json()["title"] == "Trip planning"


def test_a_rename_keeps_the_lists_order(alice, demo_agents, api_for):
    older = new_session(alice, demo_agents["bank"], title="older")
    newer = new_session(alice, demo_agents["bank"], title="newer")
    client = api_for(alice)

    client.patch(f"/api/sessions/{older.pk}/", {"title": "renamed"}, format="json")

    assert listed(client) == [newer.pk, older.pk]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"title": ""}, "title"),
        ({"title": "   "}, "title"),
        ({"title": "two\nlines"}, "title"),
        ({"title": "tab\there"}, "title"),
        ({"title": "bell\x07"}, "title"),
        ({"title": "evil\u202eblue"}, "title"),
        ({"title": "x" * 121}, "title"),
        ({"title": 5}, "title"),
        ({"title": None}, "title"),
        ({"title": ["a"]}, "title"),
        ({"archived": "yes"}, "archived"),
        ({"title": "ok", "owner": 1}, "owner"),
        ({}, "non_field_errors"),
    ],
)
def test_a_bad_change_is_400_with_field_errors_and_changes_nothing(
    alice, demo_agents, api_for, body, field
):
    session = new_session(alice, demo_agents["bank"], title="kept")

    response = api_for(alice).patch(f"/api/sessions/{session.pk}/", body, format="json")

    assert response.status_code == 400, response.content
    assert field in response.json()
    session.refresh_from_db()
    assert (session.title, session.archived_at) == ("kept", None)


def test_a_title_of_120_characters_is_taken(alice, demo_agents, api_for):
    session = new_session(alice, demo_agents["bank"])

    response = api_for(alice).patch(
        f"/api/sessions/{session.pk}/", {"title": "é" * 120}, format="json"
    )

    assert response.status_code == 200
    assert response.json()["title"] == "é" * 120


# Archive, delete


def test_an_archived_session_leaves_the_list_and_comes_back(
    alice, demo_agents, api_for
):
    kept = new_session(alice, demo_agents["bank"])
    archived = new_session(alice, demo_agents["bank"])
    client = api_for(alice)

    response = client.patch(
        f"/api/sessions/{archived.pk}/", {"archived": True}, format="json"
    )

    assert response.status_code == 200
    assert response.json()["archived_at"]
    assert listed(client) == [kept.pk]
    assert listed(client, archived="true") == [archived.pk]
    assert client.get(f"/api/sessions/{archived.pk}/").status_code == 200

    back = client.patch(
        f"/api/sessions/{archived.pk}/", {"archived": False}, format="json"
    )

    assert back.json()["archived_at"] is None
    assert set(listed(client)) == {kept.pk, archived.pk}
    assert listed(client, archived="true") == []


def test_archiving_twice_keeps_the_first_time(alice, demo_agents, api_for):
    session = new_session(alice, demo_agents["bank"])
    client = api_for(alice)
    url = f"/api/sessions/{session.pk}/"

    first = client.patch(url, {"archived": True}, format="json").json()["archived_at"]
    again = client.patch(url, {"archived": True}, format="json").json()["archived_at"]

    assert first == again


def test_a_deleted_session_is_gone_with_its_messages_from_the_search(
    alice, demo_agents, api_for
):
    session = new_session(alice, demo_agents["bank"], title="budget")
    store(session, "the quarterly spreadsheet")
    client = api_for(alice)

    response = client.delete(f"/api/sessions/{session.pk}/")

    assert response.status_code == 204
    assert client.get(f"/api/sessions/{session.pk}/").status_code == 404
    assert found(client, "spreadsheet") == []
    assert found(client, "budget") == []
    assert not Event.objects.filter(session_id=session.pk).exists()


# Status, pages, agent


def test_each_session_says_whether_it_is_closed_waiting_running_or_idle(
    alice, demo_agents, api_for
):
    agent = demo_agents["bank"]
    idle, closed, waiting, pending, running = (
        new_session(alice, agent) for _ in range(5)
    )
    Session.objects.filter(pk=closed.pk).update(closed_at=timezone.now())
    Run.objects.create(session=idle, user=alice, status=Run.Status.SUCCEEDED)
    Run.objects.create(
        session=waiting,
        user=alice,
        status=Run.Status.WAITING,
        waiting_for=Run.WaitingFor.APPROVAL,
    )
    Request.objects.create(session=pending, kind=Request.Kind.CALL, call_id="c1")
    Run.objects.create(session=running, user=alice, status=Run.Status.RUNNING)

    results = api_for(alice).get("/api/sessions/").json()["results"]

    status = {session["id"]: session["status"] for session in results}
    assert status == {
        idle.pk: "idle",
        closed.pk: "closed",
        waiting.pk: "waiting",
        pending.pk: "waiting",
        running.pk: "running",
    }
    last_runs = {session["id"]: session["last_run"] for session in results}
    assert last_runs[waiting.pk]["waiting_for"] == "approval"
    assert last_runs[running.pk]["status"] == "running"
    assert last_runs[pending.pk] is None


def test_the_list_comes_a_page_at_a_time_latest_activity_first(
    alice, demo_agents, api_for
):
    made = [
        new_session(alice, demo_agents["bank"]).pk for _ in range(PAGE_SIZE * 2 + 3)
    ]
    client = api_for(alice)

    first = client.get("/api/sessions/").json()
    second = client.get(first["next"]).json()
    third = client.get(second["next"]).json()

    pages = [first, second, third]
    assert [len(page["results"]) for page in pages] == [PAGE_SIZE, PAGE_SIZE, 3]
    assert third["next"] is None
    assert set(parse_qs(urlsplit(first["next"]).query)) == {"cursor"}
    shown = [session["id"] for page in pages for session in page["results"]]
    assert shown == made[::-1]


def test_a_session_active_while_paging_is_shown_once(alice, demo_agents, api_for):
    made = [new_session(alice, demo_agents["bank"]).pk for _ in range(PAGE_SIZE + 5)]
    client = api_for(alice)
    first = client.get("/api/sessions/").json()

    # The oldest session speaks: it moves to the top, before the next page.
    store(Session.objects.get(pk=made[0]), "news")
    Session.objects.filter(pk=made[0]).update(updated_at=timezone.now())
    second = client.get(first["next"]).json()

    shown = [s["id"] for page in (first, second) for s in page["results"]]
    assert len(shown) == len(set(shown))
    assert made[0] not in shown  # it is on page 1 now, not again on page 2
    assert set(shown) | {made[0]} == set(made)


def test_a_page_number_still_pages_for_older_clients(alice, demo_agents, api_for):
    made = [new_session(alice, demo_agents["bank"]).pk for _ in range(PAGE_SIZE + 2)]

    second = api_for(alice).get("/api/sessions/", {"page": "2"}).json()

    assert [s["id"] for s in second["results"]] == made[::-1][PAGE_SIZE:]
    assert second["next"] is None


@pytest.mark.parametrize(
    "cursor", ["x", "!!", "W10", "WzEsMl0", "WyJhIiwiYiJd", "é", "A" * 500]
)
def test_a_cursor_not_from_the_list_is_400(alice, api_for, cursor):
    response = api_for(alice).get("/api/sessions/", {"cursor": cursor})

    assert response.status_code == 400, response.content
    assert "cursor" in response.json()


def test_another_users_cursor_shows_only_my_sessions(alice, bob, demo_agents, api_for):
    for _ in range(PAGE_SIZE + 1):
        new_session(bob, demo_agents["bank"])
    mine = new_session(alice, demo_agents["bank"])
    bobs_next = api_for(bob).get("/api/sessions/").json()["next"]
    (cursor,) = parse_qs(urlsplit(bobs_next).query)["cursor"]

    assert set(listed(api_for(alice), cursor=cursor)) <= {mine.pk}


def test_the_list_filters_by_agent(alice, demo_agents, api_for):
    bank = new_session(alice, demo_agents["bank"])
    new_session(alice, demo_agents["calculator"])

    assert listed(api_for(alice), agent="bank") == [bank.pk]
    assert listed(api_for(alice), agent="nobody") == []


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"page": "0"}, "page"),
        ({"page": "two"}, "page"),
        ({"page": "٣"}, "page"),
        ({"page": "99999999999999999999"}, "page"),
        ({"archived": "maybe"}, "archived"),
        ({"search": "x" * 201}, "search"),
    ],
)
def test_a_bad_query_is_400_with_field_errors(alice, api_for, params, field):
    response = api_for(alice).get("/api/sessions/", params)

    assert response.status_code == 400, response.content
    assert field in response.json()


def test_a_page_past_the_last_is_empty(alice, demo_agents, api_for):
    new_session(alice, demo_agents["bank"])

    body = api_for(alice).get("/api/sessions/", {"page": "7"}).json()

    assert body == {"results": [], "next": None}


# The token (2); the page (1); its sessions' runs and pending requests (2); and for
# a search, the ranking, the snippets and the sessions found (3, the page's 1 not).
LIST_QUERIES = 5
SEARCH_QUERIES = 7


@pytest.mark.parametrize("search", ["", "spreadsheet"], ids=["list", "search"])
def test_a_page_costs_the_same_queries_however_many_sessions_it_holds(
    alice, demo_agents, api_for, django_assert_num_queries, search
):
    client = api_for(alice)
    client.get("/api/sessions/")  # the token's first use is not the list's cost

    def costs(count: int) -> None:
        for _ in range(count):
            session = new_session(alice, demo_agents["bank"], title="spreadsheet")
            store(session, "the spreadsheet")
            Run.objects.create(session=session, user=alice, status="waiting")
            Run.objects.create(session=session, user=alice, status="succeeded")
            Request.objects.create(session=session, kind="call", call_id="c")
        expected = SEARCH_QUERIES if search else LIST_QUERIES
        with django_assert_num_queries(expected):
            response = client.get("/api/sessions/", {"search": search})
        assert response.status_code == 200

    costs(1)
    costs(PAGE_SIZE)


def test_a_deep_page_costs_the_queries_of_the_first(
    alice, demo_agents, api_for, django_assert_num_queries
):
    for _ in range(PAGE_SIZE * 4):
        session = new_session(alice, demo_agents["bank"])
        Run.objects.create(session=session, user=alice, status="running")
    client = api_for(alice)
    page = client.get("/api/sessions/").json()
    for _ in range(2):
        page = client.get(page["next"]).json()

    with django_assert_num_queries(LIST_QUERIES):
        deep = client.get(page["next"])

    assert len(deep.json()["results"]) == PAGE_SIZE
    assert {s["status"] for s in deep.json()["results"]} == {"running"}


# Search


@turns
def test_a_word_of_the_models_answer_finds_its_session(
    alice, demo_agents, start_session, say, api_for
):
    london = start_session(alice, "weather_sentiment")
    paris = start_session(alice, "weather_sentiment")
    say(alice, london, "weather in london?")  # the answer says "cloudy"
    say(alice, paris, "how is the mood today?")

    assert found(api_for(alice), "cloudy") == [london]
    assert found(api_for(alice), "London") == [london]


def test_words_find_sessions_in_any_order_across_messages(alice, demo_agents, api_for):
    agent = demo_agents["bank"]
    both = new_session(alice, agent)
    store(both, "Please move money to savings", kind="user_message")
    store(both, "The transfer to your savings account is done.")
    one = new_session(alice, agent)
    store(one, "What is my savings balance?", kind="user_message")
    client = api_for(alice)

    assert found(client, "transfer savings") == [both.pk]
    assert found(client, "SAVINGS   transfer") == [both.pk]
    assert found(client, "transf") == [both.pk]  # a word also finds what it begins
    assert set(found(client, "savings")) == {both.pk, one.pk}


def test_a_search_finds_a_title_and_ranks_it_first(alice, demo_agents, api_for):
    agent = demo_agents["bank"]
    # The better match is the older: the order is the rank's, not the activity's.
    named = new_session(alice, agent, title="Mortgage")
    mentioned = new_session(alice, agent)
    store(mentioned, "By the way, the mortgage offer arrived.")
    unrelated = new_session(alice, agent, title="Groceries")
    store(unrelated, "milk and bread")

    assert found(api_for(alice), "mortgage") == [named.pk, mentioned.pk]


def test_a_session_that_says_it_more_ranks_above_one_that_says_it_once(
    alice, demo_agents, api_for
):
    agent = demo_agents["bank"]
    often = new_session(alice, agent)
    store(often, "The loan.", kind="user_message")
    store(often, "Your loan is approved; the loan starts on Monday.")
    once = new_session(alice, agent)
    store(once, "A long letter about many things: rent, the car, holidays, a loan.")
    for _ in range(4):  # other sessions, so "loan" is a rare word
        store(new_session(alice, agent), "nothing to see here")

    assert found(api_for(alice), "loan") == [often.pk, once.pk]


def test_thoughts_and_tool_results_are_not_searched(alice, demo_agents, api_for):
    session = new_session(alice, demo_agents["bank"])
    store(session, "secret reasoning", thought=True)
    result = store(session, "", kind="function_response")
    result.data["content"]["parts"] = [
        {"function_response": {"name": "lookup", "response": {"found": "zeppelin"}}}
    ]
    result.save()
    store(session, "visible answer")
    client = api_for(alice)

    assert found(client, "reasoning") == []
    assert found(client, "zeppelin") == []
    assert found(client, "visible") == [session.pk]


def test_the_models_words_beside_a_call_are_searched(alice, demo_agents, api_for):
    session = new_session(alice, demo_agents["bank"])
    said = store(session, "Let me look up the exchange rate.", kind="function_call")
    said.data["content"]["parts"].append(
        {"function_call": {"name": "rate", "args": {"currency": "yen"}}}
    )
    said.save()

    assert found(api_for(alice), "exchange") == [session.pk]
    assert found(api_for(alice), "yen") == []


def test_a_search_never_finds_another_users_session(alice, bob, demo_agents, api_for):
    mine = new_session(alice, demo_agents["bank"], title="payroll")
    store(mine, "payroll for march")
    theirs = new_session(bob, demo_agents["bank"], title="payroll")
    store(theirs, "payroll for march")

    assert found(api_for(alice), "payroll march") == [mine.pk]
    assert found(api_for(bob), "payroll") == [theirs.pk]


def test_a_session_given_to_another_user_is_found_by_them_only(
    alice, bob, demo_agents, api_for
):
    session = new_session(alice, demo_agents["bank"], title="handover")
    store(session, "the quarterly payroll")

    Session.objects.filter(pk=session.pk).update(owner=bob)  # as the admin may

    assert found(api_for(bob), "payroll") == [session.pk]
    assert found(api_for(bob), "handover") == [session.pk]
    assert found(api_for(alice), "payroll handover") == []


def test_a_search_keeps_to_the_agent_and_the_archive(alice, demo_agents, api_for):
    bank = new_session(alice, demo_agents["bank"], title="invoice")
    calculator = new_session(alice, demo_agents["calculator"], title="invoice")
    archived = new_session(alice, demo_agents["bank"], title="invoice")
    Session.objects.filter(pk=archived.pk).update(archived_at=timezone.now())
    client = api_for(alice)

    assert found(client, "invoice", agent="calculator") == [calculator.pk]
    assert set(found(client, "invoice")) == {bank.pk, calculator.pk}
    assert found(client, "invoice", archived="true") == [archived.pk]


def test_a_renamed_session_is_found_by_its_new_title_only(alice, demo_agents, api_for):
    session = new_session(alice, demo_agents["bank"], title="draft")
    client = api_for(alice)

    client.patch(f"/api/sessions/{session.pk}/", {"title": "Quarterly"}, format="json")

    assert found(client, "quarterly") == [session.pk]
    assert found(client, "draft") == []


def test_a_found_session_shows_its_matching_text_with_the_words_marked(
    alice, demo_agents, api_for
):
    session = new_session(alice, demo_agents["bank"], title="Budget")
    store(session, "An older note about the ledger.")
    store(session, "Groceries, rent and the quarterly ledger review are due.")
    named = new_session(alice, demo_agents["bank"], title="ledger")

    results = api_for(alice).get("/api/sessions/", {"search": "ledger"}).json()

    snippets = {s["id"]: s["snippet"] for s in results["results"]}
    assert snippets[named.pk] is None  # found by its title alone
    parts = snippets[session.pk]
    assert "".join(p["text"] for p in parts).endswith("ledger review are due.")
    assert [p["text"] for p in parts if p["match"]] == ["ledger"]
    assert "rent" in "".join(p["text"] for p in parts if not p["match"])


def test_a_snippet_is_text_even_when_the_message_is_markup(alice, demo_agents, api_for):
    session = new_session(alice, demo_agents["bank"])
    store(session, '<img src=x onerror="alert(1)"> payroll <b>bold</b>')

    (found_,) = (
        api_for(alice).get("/api/sessions/", {"search": "payroll"}).json()["results"]
    )

    # Text parts for the page to show as text: SQLite keeps the tags as text,
    # PostgreSQL's headline drops them; neither marks anything but the word.
    text = "".join(part["text"] for part in found_["snippet"])
    assert "bold" in text
    assert [p["text"] for p in found_["snippet"] if p["match"]] == ["payroll"]


def test_every_word_searched_is_marked_in_the_snippet(alice, demo_agents, api_for):
    session = new_session(alice, demo_agents["bank"])
    store(session, "transfer the savings today")

    (hit,) = (
        api_for(alice)
        .get("/api/sessions/", {"search": "savings transf"})
        .json()["results"]
    )

    assert [p["text"] for p in hit["snippet"] if p["match"]] == ["transfer", "savings"]


def test_search_results_come_a_page_at_a_time(alice, demo_agents, api_for):
    for _ in range(PAGE_SIZE + 2):
        store(new_session(alice, demo_agents["bank"]), "ledger")
    client = api_for(alice)

    first = client.get("/api/sessions/", {"search": "ledger"}).json()
    second = client.get(first["next"]).json()

    assert len(first["results"]) == PAGE_SIZE
    assert len(second["results"]) == 2
    assert second["next"] is None
    ids = [s["id"] for s in first["results"] + second["results"]]
    assert len(set(ids)) == PAGE_SIZE + 2


ODD_SEARCHES = [
    '"',
    '""',
    "*",
    "a*",
    "NEAR(",
    "NEAR(a b, 2)",
    "-",
    "-payroll",
    "payroll -march",
    "a OR b",
    "NOT payroll",
    "AND",
    "^payroll",
    "title:payroll",
    "session_id:x",
    "(",
    ")",
    "{body}: x",
    "'; DROP TABLE agents_session; --",
    "' OR '1'='1",
    "payroll' --",
    "%",
    "_",
    "\\",
    "a:*",
    "a & b | !c <-> d",
    "😀",
    "mañana",
    "x" * 200,
    "the",
    "a b c d e f g h i j k l m n o p",
]


@pytest.mark.parametrize("words", ODD_SEARCHES)
def test_odd_search_strings_are_words_never_syntax(
    alice, bob, demo_agents, api_for, words
):
    mine = new_session(alice, demo_agents["bank"], title="payroll")
    store(mine, "payroll for march")
    store(new_session(bob, demo_agents["bank"]), "payroll for march")

    response = api_for(alice).get("/api/sessions/", {"search": words})

    assert response.status_code == 200, response.content
    assert set(s["id"] for s in response.json()["results"]) <= {mine.pk}
    assert Session.objects.count() == 2


def test_a_quoted_or_starred_word_is_still_found(alice, demo_agents, api_for):
    session = new_session(alice, demo_agents["bank"])
    store(session, "payroll for march")
    client = api_for(alice)

    assert found(client, '"payroll"') == [session.pk]
    assert found(client, "payroll*") == [session.pk]
    assert found(client, "-march") == [session.pk]
    assert found(client, "NEAR(payroll march)") == []  # "near" is a word too


def test_the_admin_finds_sessions_by_title_and_archive(
    alice, demo_agents, admin_client
):
    new_session(alice, demo_agents["bank"], title="Quarterly payroll")

    listed = admin_client.get(
        "/admin/agents/session/", {"q": "payroll", "archived_at__isnull": "True"}
    )

    assert listed.status_code == 200
    assert "Quarterly payroll" in listed.content.decode()
