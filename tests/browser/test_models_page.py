"""The Models page (staff): add a connection (a bad name refused next to its
field), see a bad key reported in plain words by Test, fix the key, fetch the
models, price one, test it, remove the connection; a user gets no such page."""

import pytest
from playwright.sync_api import expect

from tests.agents import fake_openai as fake

pytestmark = pytest.mark.browser


def test_staff_connect_test_price_and_remove_a_model_provider(sign_in, api, shoot):
    staff = api("admin")
    with fake.FakeOpenAI() as provider:
        provider.models = [fake.MODEL, "fake-mini"]
        admin = sign_in("admin")
        admin.goto("/staff/models/")
        expect(admin.get_by_role("link", name="Models")).to_have_attribute(
            "aria-current", "page"
        )

        admin.get_by_role("button", name="Add a connection").click()
        admin.fill("#connection-name", "openai")
        admin.select_option("#connection-kind", "openai_compatible")
        admin.fill("#connection-base-url", provider.url)
        admin.fill("#connection-api-key", "sk-wrong")
        admin.get_by_role("button", name="Add", exact=True).click()
        expect(admin.locator("#connection-name-error")).to_contain_text(
            "provider's own prefix"
        )

        admin.fill("#connection-name", "lab")
        admin.get_by_role("button", name="Add", exact=True).click()
        expect(admin.locator("#connection-title")).to_contain_text("lab")
        admin.get_by_role("button", name="Test").click()
        expect(admin.locator("#test-result")).to_have_text(
            "The provider rejected the key (HTTP 401): check the API key."
        )

        admin.get_by_role("button", name="Edit").click()
        admin.fill("#connection-api-key", fake.API_KEY)
        admin.get_by_role("button", name="Save").click()
        expect(admin.locator("#connection-title")).to_contain_text("lab")
        admin.get_by_role("button", name="Fetch models").click()
        row = admin.locator(f'#models-table tr[data-model="{fake.MODEL}"]')
        expect(row).to_contain_text(f"lab/{fake.MODEL}")
        row.get_by_label("input price").fill("2")
        row.get_by_label("output price").fill("8")
        row.get_by_role("button", name="Save").click()
        expect(admin.locator("#toasts")).to_contain_text(
            f"Prices of {fake.MODEL} saved"
        )
        listed = staff.get("/api/providers/lab/models/").json()
        priced = next(m for m in listed if m["model"] == fake.MODEL)
        assert (priced["input_price"], priced["output_price"]) == (
            "2.000000",
            "8.000000",
        )

        admin.select_option("#test-model", fake.MODEL)
        provider.play(fake.say("OK"))
        admin.get_by_role("button", name="Test").click()
        expect(admin.locator("#test-result")).to_have_text(
            f"Connected: {fake.MODEL} answered."
        )
        assert fake.API_KEY not in admin.content()
        shoot(admin, "models")

        admin.once("dialog", lambda dialog: dialog.accept())
        admin.get_by_role("button", name="Remove", exact=True).click()
        expect(admin.locator('#connection-list [data-connection="lab"]')).to_have_count(
            0
        )
        assert staff.get("/api/providers/lab/").status_code == 404


def test_a_user_gets_no_models_page(sign_in):
    alice = sign_in("alice")

    alice.goto("/staff/models/")

    expect(alice.get_by_role("link", name="Models")).to_have_count(0)
    expect(alice.locator("main")).to_contain_text("staff")


def test_the_overview_shows_what_a_priced_turn_cost(sign_in, api):
    staff, alice = api("admin"), api("alice")
    with fake.FakeOpenAI() as provider:
        added = staff.post(
            "/api/providers/",
            json={
                "name": "priced",
                "kind": "openai_compatible",
                "base_url": provider.url,
                "api_key": fake.API_KEY,
            },
        )
        assert added.status_code == 201, added.text
        staff.post(
            "/api/providers/priced/models/",
            json={"model": fake.MODEL, "input_price": "2", "output_price": "8"},
        )
        made = staff.post(
            "/api/agents/",
            json={
                "name": "priced_bot",
                "instruction": "Answer briefly.",
                "model": f"priced/{fake.MODEL}",
            },
        )
        assert made.status_code == 201, made.text
        provider.play(fake.say("A priced answer.", usage=(1000, 500)))
        session = alice.post("/api/sessions/", json={"agent": "priced_bot"}).json()
        run = alice.post(
            f"/api/sessions/{session['id']}/messages/?wait=1", json={"text": "hi"}
        ).json()
        assert run["status"] == "succeeded", run

        admin = sign_in("admin")
        admin.goto("/overview/")

        # 1000 x 2 + 500 x 8 per million tokens
        expect(admin.locator("#cost-total")).to_contain_text("0.006")
        expect(admin.locator("#cost-by-model")).to_contain_text(f"priced/{fake.MODEL}")
        expect(admin.locator("#cost-by-agent")).to_contain_text("priced_bot")
        expect(admin.locator("#cost-by-user")).to_contain_text("alice")
        staff.delete("/api/providers/priced/")
        staff.delete("/api/agents/priced_bot/")
