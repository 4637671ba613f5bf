"""A server that takes connections and answers none (Daphne stopped with SIGSTOP, as a
frozen server or a stuck proxy would be): each websocket attempt of a page is given up
after stream.js's bound and retried, a person may retry at once while the page connects
or reconnects, and once the server answers the page goes live and replays what it missed.

The page's timers run on Playwright's clock, paused, so the bound is crossed by advancing
it, not by waiting; a frozen Daphne is thawed at the end of each test whatever happens.
"""

from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Page, Request, Route, WebSocket, expect

from tests.browser.pages import finished_runs, send, shown_seqs, start_session
from tests.browser.server import RestartableServer

pytestmark = pytest.mark.browser

# stream.js's CONNECT_WITHIN_MS, PING_EVERY_MS and PONG_WITHIN_MS.
CONNECT_WITHIN_MS = 10_000
PING_EVERY_MS = 20_000
PONG_WITHIN_MS = 8_000
# The longest first wait of the backoff after a failed attempt (500 ms, plus 30%).
FIRST_BACKOFF_MS = 650
# The longest wait after a failed reconnect (1000 ms, plus 30%).
SECOND_BACKOFF_MS = 1_300


class FrozenReload:
    """Reloads a page with the server frozen once it has served the page's document.

    A frozen server answers no request: the page's other requests are answered with
    what a first load fetched, so that only its sockets meet the frozen server. (The
    document itself comes from the server: to Chromium's Local Network Access checks a
    document Playwright answered is public, and its sockets to 127.0.0.1 are refused.)
    """

    def __init__(self, server: RestartableServer) -> None:
        self.server = server
        self.pages: list[Page] = []
        self.responses: dict[str, dict] = {}
        self.replaying = False
        self.frozen = False

    def record(self, page: Page) -> None:
        """Keep what the page fetches from now on."""
        self.pages.append(page)
        page.route("**/*", self.handle)

    def handle(self, route: Route, request: Request) -> None:
        key = f"{request.method} {request.url}"
        if request.resource_type == "document" or request.method != "GET":
            route.continue_()
            return
        if not self.replaying:
            response = route.fetch()
            self.responses[key] = {
                "status": response.status,
                "headers": response.headers,
                "body": response.body(),
            }
            route.fulfill(response=response)
            return
        if not self.frozen:
            self.server.freeze()  # the document has come: nothing else will
            self.frozen = True
        if key in self.responses:
            route.fulfill(**self.responses[key])
            return
        route.continue_()  # to the frozen server, which answers once thawed

    def reload(self, page: Page) -> None:
        self.replaying = True
        page.reload()

    def thaw(self) -> None:
        self.replaying = self.frozen = False
        self.server.thaw()

    def stop(self) -> None:
        # A fetch still under way when the page closes would raise in the handler.
        for page in self.pages:
            page.unroute_all(behavior="ignoreErrors")


@pytest.fixture
def frozen(server: RestartableServer) -> Iterator[RestartableServer]:
    """The live server, for a test to freeze; thawed at the end whatever happens."""
    yield server
    server.thaw()


@pytest.fixture
def frozen_reload(frozen: RestartableServer) -> Iterator[FrozenReload]:
    reload = FrozenReload(frozen)
    yield reload
    reload.stop()


def watch_session_sockets(page: Page) -> list[WebSocket]:
    """The session sockets of the page from now on, as Chromium starts each handshake.

    Chromium starts one handshake at a time per server (RFC 6455, 4.1): while the
    page's inbox socket waits on a frozen server, its session socket waits behind it.
    """
    sockets: list[WebSocket] = []
    page.on("websocket", lambda socket: is_session(socket) and sockets.append(socket))
    return sockets


def is_session(socket: WebSocket) -> bool:
    return "/ws/sessions/" in socket.url


def open_sockets(sockets: list[WebSocket]) -> list[WebSocket]:
    return [socket for socket in sockets if not socket.is_closed()]


def pause_clock(page: Page) -> None:
    # pause_at may not go back: a second ahead of the page's time.
    page.clock.pause_at(page.evaluate("Date.now()") / 1000 + 1)


def open_session_recorded(
    sign_in: Callable[..., Page], frozen_reload: FrozenReload
) -> tuple[Page, str]:
    """A session page of alice's with one finished turn, what it fetches recorded."""
    page = sign_in("alice")
    page.clock.install()
    frozen_reload.record(page)
    session_id = start_session(page, "weather_sentiment")
    send(page, "weather in london?")
    expect(finished_runs(page)).to_have_count(1)
    # Loaded again on the live server: what a reload fetches is recorded.
    page.reload()
    expect(page.locator("#live-status")).to_have_attribute("data-status", "live")
    expect(finished_runs(page)).to_have_count(1)
    return page, session_id


def test_a_first_connection_the_server_never_answers_is_given_up_and_retried(
    sign_in, frozen_reload, api
):
    page, session_id = open_session_recorded(sign_in, frozen_reload)
    indicator = page.locator("#live-status")
    sockets = watch_session_sockets(page)
    pause_clock(page)
    frozen_reload.reload(page)
    expect(indicator).to_have_attribute("data-status", "connecting")
    expect(indicator).to_have_text("Connecting…")
    # A second short of the bound, the first attempt still waits.
    page.clock.run_for(CONNECT_WITHIN_MS - 1_000)
    expect(indicator).to_have_text("Connecting…")

    page.clock.run_for(1_000)
    expect(indicator).to_have_attribute("data-status", "reconnecting")
    expect(indicator).to_have_text("Reconnecting in 1s…")

    # The server answers again while the page waits out its backoff: a turn it misses.
    frozen_reload.thaw()
    alice = api("alice")
    ran = alice.post(
        f"/api/sessions/{session_id}/messages/?wait=1",
        json={"text": "weather in paris?"},
    )
    assert ran.status_code == 200, ran.text
    assert page.locator("#timeline").inner_text().count("Paris") == 0
    page.clock.run_for(FIRST_BACKOFF_MS)
    expect(indicator).to_have_attribute("data-status", "live")
    page.clock.resume()  # the timeline may defer drawing a long text to a timer
    expect(finished_runs(page)).to_have_count(2)
    expect(page.locator("#timeline")).to_contain_text("The weather in Paris is sunny")
    stored = alice.get(f"/api/sessions/{session_id}/events/").json()
    assert shown_seqs(page) == [frame["seq"] for frame in stored]
    # The attempt given up was closed: only the live socket is open.
    assert open_sockets(sockets) == sockets[-1:]


def test_connecting_can_be_retried_at_once_with_a_click(sign_in, frozen_reload):
    page, _ = open_session_recorded(sign_in, frozen_reload)
    indicator = page.locator("#live-status")
    pause_clock(page)
    frozen_reload.reload(page)
    expect(indicator).to_have_text("Connecting…")
    expect(indicator).to_be_enabled()
    expect(indicator).to_have_attribute(
        "title", "Not connected yet. Click to retry now."
    )

    # No timer runs: the click alone gives up the waiting attempt and starts another.
    indicator.click()
    expect(indicator).to_have_attribute("data-status", "reconnecting")
    expect(indicator).to_have_text("Reconnecting…")
    frozen_reload.thaw()
    expect(indicator).to_have_attribute("data-status", "live")


def test_a_reconnect_the_server_never_answers_is_given_up_and_replays_once_it_does(
    sign_in, frozen, api
):
    page = sign_in("alice")
    page.clock.install()
    session_id = start_session(page, "weather_sentiment")
    send(page, "weather in london?")
    expect(finished_runs(page)).to_have_count(1)
    indicator = page.locator("#live-status")
    sockets = watch_session_sockets(page)
    # Loaded again on a paused clock: the socket is live at a known time, so its
    # ping, the missing pong and the reconnect after it come when the test says.
    pause_clock(page)
    page.reload()
    expect(indicator).to_have_attribute("data-status", "live")

    frozen.freeze()
    page.clock.run_for(PING_EVERY_MS + PONG_WITHIN_MS)
    expect(indicator).to_have_attribute("data-status", "reconnecting")
    expect(indicator).to_have_text("Reconnecting…")
    # A second short of the bound, the attempt still waits.
    page.clock.run_for(CONNECT_WITHIN_MS - 1_000)
    expect(indicator).to_have_text("Reconnecting…")

    page.clock.run_for(1_000)
    expect(indicator).to_contain_text("Reconnecting in ")

    frozen.thaw()
    alice = api("alice")
    ran = alice.post(
        f"/api/sessions/{session_id}/messages/?wait=1",
        json={"text": "weather in paris?"},
    )
    assert ran.status_code == 200, ran.text
    assert page.locator("#timeline").inner_text().count("Paris") == 0
    page.clock.run_for(SECOND_BACKOFF_MS)
    expect(indicator).to_have_attribute("data-status", "live")
    page.clock.resume()  # the timeline may defer drawing a long text to a timer
    expect(finished_runs(page)).to_have_count(2)
    expect(page.locator("#timeline")).to_contain_text("The weather in Paris is sunny")

    send(page, "I don't like rain")
    expect(finished_runs(page)).to_have_count(3)
    stored = alice.get(f"/api/sessions/{session_id}/events/").json()
    expected = [frame["seq"] for frame in stored]
    assert expected == list(range(1, len(expected) + 1))
    assert shown_seqs(page) == expected
    # The socket that went quiet and the attempt given up were closed.
    assert open_sockets(sockets) == sockets[-1:]
