"""A first run and files, in a real browser: an empty session introduces its agent (what it
does, its tools, its starters, the offline model's rules) and a starter runs a turn; files
attached in the composer become artifacts named in the message; artifacts preview in place
(text, Markdown, an image, a PDF, HTML in a sandbox whose script cannot reach the page), and
an artifact's URL opened directly runs nothing; another user gets 404."""

import base64

import pytest
from playwright.sync_api import Page, expect

from demo.weather import STARTERS
from tests.browser.pages import start_session
from tests.live.server import ROOT

pytestmark = pytest.mark.browser

# A 1x1 red PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
# Each tries to reach the page that shows it, or the app's origin, as soon as it runs.
EVIL_HTML = (
    b"<!doctype html><html><body><h1>Hello from a file</h1>"
    b"<script>parent.window.pwned = 'script'; top.pwned = 'script';"
    b"localStorage.setItem('pwned', 'script');</script>"
    b"<img src=x onerror=\"parent.window.pwned = 'onerror'\"></body></html>"
)
EVIL_SVG = (
    b'<svg xmlns="http://www.w3.org/2000/svg"><script>'
    b"localStorage.setItem('pwned', 'svg')</script></svg>"
)
MARKDOWN = b"# Quarterly notes\n\n- revenue up\n- costs **down**\n"
AXE = ROOT / "frontend" / "vendor" / "node_modules" / "axe-core" / "axe.min.js"
RUN_AXE = """async () => (await axe.run(document, {
  runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21aa", "wcag22aa", "best-practice"] },
  resultTypes: ["violations"],
})).violations.filter((v) => ["serious", "critical"].includes(v.impact))
  .map((v) => `${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)"""


def minimal_pdf(text: str) -> bytes:
    """A one-page PDF showing `text`, with a correct cross-reference table."""
    stream = f"BT /F1 18 Tf 20 80 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 144] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\n" % (len(objects) + 1)
    return out + b"startxref\n%d\n%%%%EOF\n" % xref


def file_payload(name: str, content: bytes, mime: str) -> dict:
    return {"name": name, "mimeType": mime, "buffer": content}


def test_an_empty_session_introduces_its_agent_and_a_starter_runs_a_turn(
    sign_in, shoot
):
    alice = sign_in("alice")
    start_session(alice, "weather_sentiment")
    intro = alice.locator("#session-intro")

    expect(intro).to_be_visible()
    expect(alice.locator("#intro-description")).to_have_text(
        "Gives the weather in a city and acknowledges how you feel about it."
    )
    tool = alice.locator(
        '#intro-tools li[data-tool="weather_sentiment.get_weather_report"]'
    )
    expect(tool).to_contain_text(
        "Retrieves the current weather report for a specified city."
    )
    expect(alice.locator("#starters button")).to_have_text(
        STARTERS["weather_sentiment"]
    )
    offline = alice.locator("#offline-note")
    expect(offline).to_contain_text("runs on the offline demo model")
    expect(offline).to_contain_text("needs 3 points to be called")
    shoot(alice, "session-empty-intro")
    assert axe_violations(alice) == []

    alice.get_by_role("button", name="What's the weather in London?").click()

    card = alice.locator('#timeline .card.call[data-tool="get_weather_report"]')
    expect(card).to_have_count(1)
    expect(alice.locator("#timeline li.user .bubble-text")).to_have_text(
        "What's the weather in London?"
    )
    expect(alice.locator("#timeline")).to_contain_text("cloudy")
    expect(intro).to_have_count(0)


def test_a_closed_empty_session_introduces_its_agent_without_starters(sign_in, api):
    alice = sign_in("alice")
    session = start_session(alice, "calculator")
    closed = api("alice").post(f"/api/sessions/{session}/close/")
    assert closed.status_code == 200, closed.text

    alice.reload()

    expect(alice.locator("#intro-description")).to_be_visible()
    expect(alice.locator('#intro-tools li[data-tool*="add_numbers"]')).to_be_visible()
    expect(alice.locator("#starters")).to_have_count(0)


def test_attached_files_become_artifacts_named_in_the_message(sign_in, shoot):
    alice = sign_in("alice")
    start_session(alice, "document_analyst")
    chips = alice.locator("#attachments li")

    alice.set_input_files(
        "#attach-input",
        [
            file_payload("notes.txt", b"the revenue target is 5 million", "text/plain"),
            file_payload("draft.txt", b"not this one", "text/plain"),
        ],
    )
    drop(alice, "readme.md", "# Read me")
    expect(chips).to_have_count(3)
    expect(chips.nth(0)).to_contain_text("notes.txt")
    expect(chips.nth(0)).to_contain_text("31 bytes")
    alice.get_by_role("button", name="Remove draft.txt").click()
    expect(chips).to_have_count(2)
    shoot(alice, "composer-attachments")
    assert axe_violations(alice) == []

    alice.fill("#message", "Please read these")
    alice.press("#message", "Enter")

    expect(chips).to_have_count(0)
    names = alice.locator("#artifact-list li")
    expect(names).to_have_count(2)
    expect(
        alice.locator('#artifact-list li[data-artifact="notes.txt"]')
    ).to_be_visible()
    expect(
        alice.locator('#artifact-list li[data-artifact="readme.md"]')
    ).to_be_visible()
    message = alice.locator("#timeline li.user .bubble-text")
    expect(message).to_have_text(
        'Please read these\n\n[Uploaded Artifact: "notes.txt"]\n'
        '[Uploaded Artifact: "readme.md"]'
    )


def test_a_pasted_file_alone_is_a_message(sign_in):
    alice = sign_in("alice")
    start_session(alice, "document_analyst")

    alice.evaluate(
        """() => {
          const data = new DataTransfer();
          data.items.add(new File(["pasted"], "clip.txt", { type: "text/plain" }));
          const paste = new ClipboardEvent("paste", { clipboardData: data, bubbles: true });
          document.getElementById("message").dispatchEvent(paste);
        }"""
    )
    expect(alice.locator("#attachments li")).to_have_count(1)
    alice.click("#composer button[type=submit]")

    expect(alice.locator("#timeline li.user .bubble-text")).to_have_text(
        '[Uploaded Artifact: "clip.txt"]'
    )
    expect(alice.locator('#artifact-list li[data-artifact="clip.txt"]')).to_be_visible()


def test_artifacts_preview_in_place_and_html_cannot_touch_the_page(sign_in, api, shoot):
    alice = sign_in("alice")
    session = start_session(alice, "document_analyst")
    client = api("alice")
    for name, content, mime in [
        ("notes.txt", b"plain words\nsecond line", "text/plain"),
        ("notes.md", MARKDOWN, "text/markdown"),
        ("pixel.png", PIXEL, "image/png"),
        ("scan.pdf", minimal_pdf("Hello PDF"), "application/pdf"),
        ("evil.html", EVIL_HTML, "text/html"),
    ]:
        saved = client.post(
            f"/api/sessions/{session}/artifacts/", files={"file": (name, content, mime)}
        )
        assert saved.status_code == 201, saved.text
    expect(alice.locator("#artifact-list li")).to_have_count(5)
    dialog = alice.locator("#artifact-preview")
    body = alice.locator("#preview-body")

    preview(alice, "notes.txt")
    expect(body.locator("pre")).to_have_text("plain words\nsecond line")
    assert axe_violations(alice) == []
    close(alice)

    preview(alice, "notes.md")
    expect(body.locator(".markdown h2")).to_have_text("Quarterly notes")
    expect(body.locator(".markdown li")).to_have_text(["revenue up", "costs down"])
    expect(body.locator(".markdown strong")).to_have_text("down")
    close(alice)

    preview(alice, "pixel.png")
    image = body.locator("img.preview-image")
    expect(image).to_have_attribute("alt", "pixel.png")
    alice.wait_for_function(
        "() => document.querySelector('#preview-body img').naturalWidth === 1"
    )
    close(alice)

    preview(alice, "scan.pdf")
    expect(body.locator("iframe")).to_have_attribute(
        "src", f"/api/sessions/{session}/artifacts/scan.pdf/?version=0&inline=1"
    )
    pdf = wait_for_frame(alice, "scan.pdf")
    assert pdf.evaluate("document.contentType") == "application/pdf"
    shoot(alice, "artifact-preview-pdf")
    close(alice)

    preview(alice, "evil.html")
    frame = body.locator("iframe")
    expect(frame).to_have_attribute("sandbox", "")
    expect(alice.frame_locator("#preview-body iframe").locator("h1")).to_have_text(
        "Hello from a file"
    )
    alice.wait_for_timeout(500)  # time for a script or an onerror to have run
    assert alice.evaluate("window.pwned") is None
    assert alice.evaluate("localStorage.getItem('pwned')") is None
    shoot(alice, "artifact-preview-html")
    close(alice)
    expect(dialog).to_be_hidden()


def test_an_artifact_chip_in_the_timeline_opens_its_preview(sign_in, api):
    alice = sign_in("alice")
    session = start_session(alice, "document_analyst")

    saved = api("alice").post(
        f"/api/sessions/{session}/artifacts/",
        files={"file": ("notes.txt", b"from the chip", "text/plain")},
    )
    assert saved.status_code == 201, saved.text
    chip = alice.locator(
        '#timeline button.chip.artifact[data-artifact-chip="notes.txt"]'
    )
    chip.click()

    expect(alice.locator("#preview-title")).to_have_text("notes.txt · v0")
    expect(alice.locator("#preview-body pre")).to_have_text("from the chip")
    alice.keyboard.press("Escape")
    expect(alice.locator("#artifact-preview")).to_be_hidden()
    expect(chip).to_be_focused()


def test_opening_a_scripted_artifact_url_directly_runs_nothing(sign_in, api):
    alice = sign_in("alice")
    session = start_session(alice, "document_analyst")
    client = api("alice")
    for name, content, mime in [
        ("evil.html", EVIL_HTML, "text/html"),
        ("evil.svg", EVIL_SVG, "image/svg+xml"),
    ]:
        client.post(
            f"/api/sessions/{session}/artifacts/", files={"file": (name, content, mime)}
        )

    for path in ("evil.html/", "evil.html/?inline=1", "evil.svg/?inline=1"):
        url = f"/api/sessions/{session}/artifacts/{path}"
        with alice.expect_download() as download:
            try:
                alice.goto(url)
            except Exception as error:  # Playwright: "Download is starting"
                assert "Download is starting" in str(error), error
        assert download.value.suggested_filename == path.split("/")[0]

    alice.goto("/")
    assert alice.evaluate("localStorage.getItem('pwned')") is None


def test_another_user_cannot_fetch_or_preview_the_artifacts(sign_in, api):
    alice = sign_in("alice")
    session = start_session(alice, "document_analyst")
    api("alice").post(
        f"/api/sessions/{session}/artifacts/",
        files={"file": ("scan.pdf", minimal_pdf("secret"), "application/pdf")},
    )
    bob = sign_in("bob")

    for path in ("", "scan.pdf/", "scan.pdf/?inline=1"):
        response = bob.request.get(f"/api/sessions/{session}/artifacts/{path}")
        assert response.status == 404, path
    page = bob.goto(f"/sessions/{session}/")
    assert page.status == 404


def axe_violations(page: Page) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    return page.evaluate(RUN_AXE)


def preview(page: Page, name: str) -> None:
    page.get_by_role("button", name=f"Preview {name}").click()
    expect(page.locator("#artifact-preview")).to_be_visible()
    expect(page.locator("#preview-title")).to_contain_text(name)


def close(page: Page) -> None:
    page.click("#preview-close")
    expect(page.locator("#artifact-preview")).to_be_hidden()


def wait_for_frame(page: Page, name: str):
    for _ in range(50):
        for frame in page.frames:
            if name in frame.url and "inline=1" in frame.url:
                return frame
        page.wait_for_timeout(100)
    raise AssertionError(f"no frame shows {name}")


def drop(page: Page, name: str, text: str) -> None:
    """Drop a file on the composer, as a file dragged from the desktop."""
    page.evaluate(
        """([name, text]) => {
          const data = new DataTransfer();
          data.items.add(new File([text], name, { type: "text/markdown" }));
          const composer = document.getElementById("composer");
          for (const type of ["dragover", "drop"]) {
            composer.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }));
          }
        }""",
        [name, text],
    )
