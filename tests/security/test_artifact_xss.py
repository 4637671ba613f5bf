"""A file a user uploads is never run as a page of the app's origin.

The attack: upload `evil.html` (or an SVG) holding a script, then send someone the
artifact's URL; opened directly, the script would run on the app's origin with the
victim's cookies. Every artifact download is therefore sandboxed (CSP `sandbox`:
no script, an opaque origin), never sniffed into another type, and a download
unless it is of a type shown in place (a PDF, an image other than SVG, plain
text). The browser side (a preview's frame and the URL opened directly) is proven in
tests/browser/test_first_run_and_files.py.
"""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

pytestmark = pytest.mark.django_db

SCRIPT_HTML = b"<html><body><script>document.title='pwned'</script>hi</body></html>"
SCRIPT_SVG = (
    b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.cookie)'
    b"</script></svg>"
)


@pytest.fixture(autouse=True)
def artifact_storage_dir(settings, tmp_path):
    settings.STORAGES = {
        **settings.STORAGES,
        "artifacts": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "artifacts")},
        },
    }


@pytest.fixture
def session(alice, demo_agents, start_session):
    return start_session(alice, "document_analyst")


@pytest.fixture
def upload(alice, session, api_for):
    def send(name: str, content: bytes, content_type: str) -> None:
        file = SimpleUploadedFile(name, content, content_type=content_type)
        response = api_for(alice).post(
            f"/api/sessions/{session}/artifacts/", {"file": file}, format="multipart"
        )
        assert response.status_code == 201, response.content

    return send


def assert_sandboxed_download(response, content_type: str) -> None:
    assert response.status_code == 200
    served = response["Content-Type"].split(";")[0].lower()
    assert served == content_type.split(";")[0].lower()
    assert response["Content-Disposition"].startswith("attachment;")
    assert response["Content-Security-Policy"] == "sandbox"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"


@pytest.mark.parametrize(
    ("name", "content", "content_type"),
    [
        ("evil.html", SCRIPT_HTML, "text/html"),
        ("evil.svg", SCRIPT_SVG, "image/svg+xml"),
        ("evil.xhtml", SCRIPT_HTML, "application/xhtml+xml"),
        ("EVIL.HTM", SCRIPT_HTML, "TEXT/HTML; charset=utf-8"),
    ],
)
def test_a_scripted_upload_is_a_sandboxed_download_even_asked_inline(
    alice, session, upload, api_for, name, content, content_type
):
    upload(name, content, content_type)
    url = f"/api/sessions/{session}/artifacts/{name}/"

    for query in ("", "?inline=1"):
        response = api_for(alice).get(url + query)

        assert_sandboxed_download(response, content_type)
        assert response.content == content


def test_html_disguised_as_a_pdf_is_shown_as_a_pdf_in_a_sandbox(
    alice, session, upload, api_for
):
    upload("report.pdf", SCRIPT_HTML, "application/pdf")

    response = api_for(alice).get(
        f"/api/sessions/{session}/artifacts/report.pdf/?inline=1"
    )

    # Never sniffed into HTML: the browser's PDF viewer refuses it, no script runs.
    assert response["Content-Type"] == "application/pdf"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"] == "sandbox"
    assert response["Content-Disposition"].startswith("inline;")
    assert response["X-Frame-Options"] == "SAMEORIGIN"


def test_another_user_cannot_fetch_or_preview_the_files(
    alice, bob, session, upload, api_for
):
    upload("evil.html", SCRIPT_HTML, "text/html")
    upload("report.pdf", b"%PDF-1.4", "application/pdf")

    for path in ("evil.html/", "report.pdf/?inline=1", ""):
        response = api_for(bob).get(f"/api/sessions/{session}/artifacts/{path}")

        assert response.status_code == 404, path
        assert b"pwned" not in response.content
