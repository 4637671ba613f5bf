"""A credential request that signs in with OAuth2 shows a sign-in link, never fields.

The backend's flow (authorization URL, callback, code exchange, refresh) is tested
against a real OAuth2 server in tests/agents/test_oauth2.py; this checks what the
card offers for such a request: a link to the provider, and only to an http(s)
address (a `javascript:` URL falls back to the typed fields).
"""

CARD_SCRIPT = """
async (url) => {
  const { requestCard } = await import("/static/frontend/requests.js");
  const card = requestCard({
    id: 7, kind: "credential", status: "pending", session: "s", tool_name: "calendar",
    scheme: "oauth2", fields: ["access_token", "refresh_token"], may_answer: true,
    args: {}, authorization_url: url,
  });
  document.body.append(card);
  const link = card.querySelector(".credential-sign-in a");
  const result = {
    link: link ? link.getAttribute("href") : null,
    text: link ? link.textContent : null,
    inputs: card.querySelectorAll(".credential-form input").length,
  };
  card.remove();
  return result;
}
"""


def test_an_oauth2_request_offers_a_sign_in_link(sign_in):
    page = sign_in("alice")
    provider = "https://id.example/authorize?client_id=c&state=s1"

    signs_in = page.evaluate(CARD_SCRIPT, provider)
    hostile = page.evaluate(CARD_SCRIPT, "javascript:alert(1)")

    assert signs_in == {
        "link": provider,
        "text": "Sign in to give calendar access",
        "inputs": 0,
    }
    assert hostile == {"link": None, "text": None, "inputs": 2}
