"""Model connections over /api/providers/: staff add, change, test and remove
them, and the very next turn uses them; keys are taken and never given back."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from google.adk.agents import LlmAgent

from agents.adk.offline import OfflineLlm
from agents.model_table import forget
from agents.models import ModelConnection
from tests.agents import fake_openai as fake

pytestmark = pytest.mark.django_db(transaction=True)

MODEL_NAME = f"lab/{fake.MODEL}"


@pytest.fixture(autouse=True)
def _fresh_table():
    forget()
    yield
    forget()


@pytest.fixture
def staff(make_user):
    return make_user("root", is_staff=True)


@pytest.fixture
def server(settings):
    """The local OpenAI-compatible server; agents run on `lab/fake-gpt`, a
    connection no one has made yet; the environment names no provider."""
    settings.TOOLCRIB_MODEL_RETRIES = 0
    settings.TOOLCRIB_MODEL_TIMEOUT = 5
    settings.TOOLCRIB_PROVIDER_ENV = {}
    settings.TOOLCRIB_DEFAULT_MODEL = MODEL_NAME
    LlmAgent.set_default_model(MODEL_NAME)
    with fake.FakeOpenAI() as running:
        yield running
    LlmAgent.set_default_model(OfflineLlm(model="offline/demo"))


def add_lab(api, server, **extra):
    body = {
        "name": "lab",
        "kind": "openai_compatible",
        "base_url": server.url,
        "api_key": fake.API_KEY,
        **extra,
    }
    return api.post("/api/providers/", body, format="json")


def test_a_connection_added_over_the_api_serves_the_very_next_turn(
    staff, alice, demo_agents, api_for, start_session, say, server
):
    session = start_session(alice, "weather_sentiment")
    refused = say(alice, session, "hello")
    assert refused["status"] == "failed"
    assert "no model connection is named lab" in refused["error"]

    added = add_lab(api_for(staff), server)
    assert added.status_code == 201, added.json()
    server.play(fake.say("Hello from the lab.", usage=(1000, 200)))

    run = say(alice, session, "hello again")

    assert run["status"] == "succeeded", run["error"]
    (request,) = server.requests
    assert request.headers["authorization"] == f"Bearer {fake.API_KEY}"
    assert request.body["model"] == fake.MODEL


def test_a_changed_key_is_used_from_the_next_turn(
    staff, alice, demo_agents, api_for, start_session, say, server
):
    api = api_for(staff)
    add_lab(api, server)
    session = start_session(alice, "weather_sentiment")
    server.play(fake.say("one"))
    assert say(alice, session, "one")["status"] == "succeeded"

    api.patch("/api/providers/lab/", {"api_key": "sk-wrong"}, format="json")
    failed = say(alice, session, "two")

    assert failed["status"] == "failed"
    assert failed["error"] == (
        f"The provider of {MODEL_NAME} rejected the credentials (HTTP 401). "
        "Check its connection's key on the Models page."
    )
    assert server.requests[-1].headers["authorization"] == "Bearer sk-wrong"


def test_the_key_is_never_given_back(staff, api_for, server):
    api = api_for(staff)
    created = add_lab(api, server).json()
    listed = api.get("/api/providers/").json()
    read = api.get("/api/providers/lab/").json()

    for shown in (created, read, *listed):
        assert "api_key" not in shown
        assert fake.API_KEY not in str(shown)
    assert read["has_key"] is True and read["read_only"] is False
    stored = ModelConnection.objects.get(name="lab").sealed_key
    assert stored and fake.API_KEY not in stored


def test_test_says_ok_when_the_model_answers(staff, api_for, server):
    api = api_for(staff)
    add_lab(api, server)
    server.play(fake.say("OK"))

    result = api.post(
        "/api/providers/lab/test/", {"model": fake.MODEL}, format="json"
    ).json()

    assert result == {
        "ok": True,
        "message": f"Connected: {fake.MODEL} answered.",
        "model": fake.MODEL,
    }


def test_test_says_the_key_was_rejected(staff, api_for, server):
    api = api_for(staff)
    add_lab(api, server, api_key="sk-wrong")

    result = api.post(
        "/api/providers/lab/test/", {"model": fake.MODEL}, format="json"
    ).json()

    assert result["ok"] is False
    assert result["message"] == (
        "The provider rejected the key (HTTP 401): check the API key."
    )
    assert "sk-wrong" not in result["message"]


def test_test_says_the_host_is_unreachable(staff, api_for, server):
    api = api_for(staff)
    # A port nothing listens on: the server's, once it is closed.
    with fake.FakeOpenAI() as gone:
        url = gone.url
    add_lab(api, server, base_url=url)

    result = api.post(
        "/api/providers/lab/test/", {"model": fake.MODEL}, format="json"
    ).json()

    assert result["ok"] is False
    assert result["message"].startswith(f"Cannot reach {url}")


def test_models_are_fetched_and_priced(staff, api_for, server):
    api = api_for(staff)
    add_lab(api, server)
    server.models = ["fake-gpt", "fake-mini"]

    fetched = api.post("/api/providers/lab/models/fetch/").json()
    assert [m["full_name"] for m in fetched] == ["lab/fake-gpt", "lab/fake-mini"]

    first = fetched[0]["id"]
    priced = api.patch(
        f"/api/providers/lab/models/{first}/",
        {"input_price": "2.5", "output_price": "10"},
        format="json",
    ).json()
    assert (priced["input_price"], priced["output_price"]) == ("2.500000", "10.000000")

    typed = api.post("/api/providers/lab/models/", {"model": "by-hand"}, format="json")
    assert typed.status_code == 201
    again = api.post("/api/providers/lab/models/", {"model": "by-hand"}, format="json")
    assert again.status_code == 400 and "listed already" in again.json()["model"][0]


def test_cost_of_a_turn_shows_in_usage(
    staff, alice, demo_agents, api_for, start_session, say, server
):
    api = api_for(staff)
    add_lab(api, server)
    api.post(
        "/api/providers/lab/models/",
        {"model": fake.MODEL, "input_price": "2", "output_price": "8"},
        format="json",
    )
    server.play(fake.say("Priced answer.", usage=(1000, 500)))
    session = start_session(alice, "weather_sentiment")

    run = say(alice, session, "what does this cost?")

    assert run["status"] == "succeeded", run["error"]
    usage = api.get("/api/usage/", {"group_by": "model"}).json()
    (row,) = usage["rows"]
    # 1000 x 2 + 500 x 8 per million tokens: 0.006
    assert row["key"] == MODEL_NAME
    assert row["cost"] == "0.006000"
    assert usage["total"]["cost"] == "0.006000"
    mine = api_for(alice).get("/api/usage/", {"group_by": "user"}).json()
    assert mine["rows"][0]["cost"] == "0.006000"


def test_bad_input_is_a_400_with_field_errors(staff, api_for):
    api = api_for(staff)
    response = api.post(
        "/api/providers/",
        {"name": "openai", "kind": "openai_compatible", "base_url": "ftp://x"},
        format="json",
    )
    assert response.status_code == 400
    errors = response.json()
    assert "provider's own prefix" in errors["name"][0]
    assert "http://" in errors["base_url"][0]

    response = api.post(
        "/api/providers/", {"name": "claude", "kind": "anthropic"}, format="json"
    )
    assert response.json() == {"api_key": ["This provider needs an API key."]}


def test_environment_providers_are_listed_read_only(staff, api_for, settings):
    settings.TOOLCRIB_PROVIDER_ENV = {"OPENAI_API_KEY": "sk-env-secret"}
    api = api_for(staff)

    listed = api.get("/api/providers/").json()

    (openai,) = [c for c in listed if c["name"] == "openai"]
    assert openai["read_only"] is True and openai["has_key"] is True
    assert openai["variables"] == ["OPENAI_API_KEY"]
    assert "sk-env-secret" not in str(listed)
    refused = api.patch(
        "/api/providers/openai/", {"base_url": "http://x"}, format="json"
    )
    assert refused.status_code == 400
    assert api.delete("/api/providers/openai/").status_code == 400


def test_removed_connection_fails_the_next_turn_in_plain_words(
    staff, alice, demo_agents, api_for, start_session, say, server
):
    api = api_for(staff)
    add_lab(api, server)
    assert api.delete("/api/providers/lab/").status_code == 204
    session = start_session(alice, "weather_sentiment")

    run = say(alice, session, "hello")

    assert run["status"] == "failed"
    assert "no model connection is named lab" in run["error"]
    assert server.requests == []


def test_an_environment_providers_model_is_priced_too(
    staff, alice, demo_agents, api_for, start_session, say, server, settings
):
    settings.TOOLCRIB_PROVIDER_ENV = server.env()
    settings.TOOLCRIB_DEFAULT_MODEL = f"openai/{fake.MODEL}"
    LlmAgent.set_default_model(f"openai/{fake.MODEL}")
    api = api_for(staff)
    priced = api.post(
        "/api/providers/openai/models/",
        {"model": fake.MODEL, "input_price": "1", "output_price": "1"},
        format="json",
    )
    assert priced.json()["full_name"] == f"openai/{fake.MODEL}"
    server.play(fake.say("From the environment.", usage=(3000, 1000)))
    session = start_session(alice, "weather_sentiment")

    assert say(alice, session, "hi")["status"] == "succeeded"

    usage = api.get("/api/usage/", {"group_by": "model"}).json()
    assert usage["rows"] == [
        {
            "key": f"openai/{fake.MODEL}",
            "runs": 1,
            "prompt_tokens": 3000,
            "completion_tokens": 1000,
            "total_tokens": 4000,
            "cost": "0.004000",
        }
    ]


def test_a_gemma_4_tool_result_reaches_an_openai_compatible_server_as_tool(
    staff, alice, demo_agents, api_for, start_session, say, server, settings
):
    """ADK sends Gemma 4's tool results as `tool_responses` unless it knows the
    server is OpenAI-compatible: a connection tells it, so vLLM or LM Studio
    serving Gemma 4 gets the role it takes."""
    server.models = ["gemma-4-e4b"]
    settings.TOOLCRIB_DEFAULT_MODEL = "lab/gemma-4-e4b"
    LlmAgent.set_default_model("lab/gemma-4-e4b")
    add_lab(api_for(staff), server)
    server.play(
        fake.call("get_weather_report", city="London"),
        fake.say("Cloudy in London."),
    )
    session = start_session(alice, "weather_sentiment")

    run = say(alice, session, "weather in london?")

    assert run["status"] == "succeeded", run["error"]
    assert server.requests[-1].messages[-1]["role"] == "tool"


def test_an_agent_on_a_connection_not_made_yet_shows_not_configured(
    staff, alice, demo_agents, api_for, server
):
    api = api_for(alice)
    info = api.get("/api/agents/weather_sentiment/").json()["model_info"]
    assert info["name"] == MODEL_NAME and info["configured"] is False
    assert info["problem"] == (
        "No model connection is named lab. Staff add connections on the Models page."
    )

    add_lab(api_for(staff), server)

    listed = {a["name"]: a["model_info"] for a in api.get("/api/agents/").json()}
    assert listed["weather_sentiment"]["configured"] is True
    assert listed["weather_sentiment"]["problem"] == ""


def test_the_agents_list_reads_the_connections_once(
    staff, alice, demo_agents, api_for, server
):
    add_lab(api_for(staff), server)
    api = api_for(alice)
    api.get("/api/agents/")  # the snapshot is loaded
    with CaptureQueriesContext(connection) as queries:
        listed = api.get("/api/agents/").json()
    stamps = [q for q in queries.captured_queries if "connectionsversion" in q["sql"]]
    assert len(listed) > 3 and len(stamps) == 1


def test_a_connection_agents_use_cannot_be_renamed_from_under_them(
    staff, api_for, server
):
    api = api_for(staff)
    add_lab(api, server)
    api.post(
        "/api/agents/",
        {"name": "helper", "instruction": "x", "model": "lab/fake-gpt"},
        format="json",
    )

    refused = api.patch("/api/providers/lab/", {"name": "lab2"}, format="json")

    assert refused.status_code == 400
    assert refused.json() == {
        "name": [
            "Agents name this connection's models by its name (helper, the default "
            "model): change their model first, or add a connection under the new "
            "name."
        ]
    }
    assert api.get("/api/providers/lab/").status_code == 200


def test_a_connection_no_agent_uses_is_renamed_with_its_models(staff, api_for):
    api = api_for(staff)
    api.post(
        "/api/providers/",
        {"name": "spare", "kind": "ollama", "base_url": "http://127.0.0.1:9"},
        format="json",
    )
    api.post("/api/providers/spare/models/", {"model": "m"}, format="json")

    renamed = api.patch("/api/providers/spare/", {"name": "home"}, format="json")

    assert renamed.status_code == 200, renamed.json()
    assert [m["full_name"] for m in renamed.json()["models"]] == ["home/m"]


def test_an_unknown_litellm_provider_is_400_on_its_field(staff, api_for):
    answer = api_for(staff).post(
        "/api/providers/",
        {"name": "odd", "kind": "litellm", "litellm_provider": "zzz"},
        format="json",
    )
    assert answer.status_code == 400
    assert answer.json()["litellm_provider"] == [
        "LiteLLM has no provider named zzz: use its prefix as LiteLLM's "
        "documentation gives it (groq, bedrock, mistral...)."
    ]
    known = api_for(staff).post(
        "/api/providers/",
        {"name": "fast", "kind": "litellm", "litellm_provider": "groq", "api_key": "k"},
        format="json",
    )
    assert known.status_code == 201, known.json()


class WebPage(BaseHTTPRequestHandler):
    """A web server's page where a model list was expected."""

    def do_GET(self) -> None:
        page = b"<html><body>Welcome</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def web_page():
    server = ThreadingHTTPServer(("127.0.0.1", 0), WebPage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    yield f"http://127.0.0.1:{port}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("kind", ["openai_compatible", "ollama"])
def test_a_base_url_that_answers_no_model_list_is_said_in_words(
    staff, api_for, web_page, kind
):
    api = api_for(staff)
    api.post(
        "/api/providers/",
        {"name": "wrong", "kind": kind, "base_url": web_page},
        format="json",
    )

    fetched = api.post("/api/providers/wrong/models/fetch/")

    assert fetched.status_code == 400
    assert fetched.json()["detail"].endswith(
        "answered, but not with a list of models: check the base URL (an "
        "OpenAI-compatible server's usually ends in /v1; Ollama's does not)."
    )
