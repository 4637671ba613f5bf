"""Eval runs in the browser: a set's run history, two runs picked and compared case
by case (status and score changes, the tool calls' diff, the answer's word diff),
at desktop and phone widths."""

import json
import subprocess
import sys

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import PHONE
from tests.live.server import ROOT

pytestmark = pytest.mark.browser

# Two runs of alice's set, stored as their driver stores them: in the first the
# agent asked London's weather and answered; in the second it asked Paris's.
RUNS = """
import django, json; django.setup()
from django.contrib.auth import get_user_model
from evals.models import EvalCaseResult, EvalRun, EvalSet
alice = get_user_model().objects.get(username="alice")
s = EvalSet.objects.create(owner=alice, name="compare-me")
expected = [{"user_content": {"role": "user", "parts": [{"text": "weather?"}]},
    "intermediate_data": {"tool_uses": [
        {"name": "get_weather_report", "args": {"city": "London"}}]},
    "final_response": {"role": "model", "parts": [{"text": "London is foggy."}]}}]
def turn(city, answer):
    return {"intermediate_data": {"tool_uses": [
        {"name": "get_weather_report", "args": {"city": city}}], "tool_responses": []},
        "final_response": {"role": "model", "parts": [{"text": answer}]},
        "status": "succeeded"}
ids = []
for city, answer, status, score in [
        ("London", "London is foggy today.", "passed", 1.0),
        ("Paris", "Paris is sunny today.", "failed", 0.0)]:
    run = EvalRun.objects.create(eval_set=s, agent_name="weather_sentiment",
        as_user=alice, status="succeeded", score=score, passed=score == 1.0,
        totals={"cases": {status: 1}})
    EvalCaseResult.objects.create(run=run, eval_id="london", status=status,
        case_snapshot={"conversation": expected},
        scores={"tool_trajectory_avg_score": {"score": score, "threshold": 1.0,
            "passed": score == 1.0, "status": status}},
        actual=[turn(city, answer)])
    ids.append(run.pk)
print(json.dumps({"set": s.pk, "runs": ids}))
"""


@pytest.fixture(scope="module")
def runs(live_env):
    done = subprocess.run(
        [sys.executable, "-c", RUNS],
        cwd=ROOT,
        env={**live_env, "DJANGO_SETTINGS_MODULE": "project.settings"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_pick_two_runs_and_compare_them_case_by_case(sign_in, runs, shoot):
    older, newer = runs["runs"]
    page = sign_in("alice")
    page.goto(f"/evals/sets/{runs['set']}/runs/")
    expect(page.locator("#run-history tbody tr")).to_have_count(2)
    compare = page.get_by_role("button", name="Compare")
    expect(compare).to_be_disabled()

    page.get_by_label(f"Pick run {newer}").check()
    page.get_by_label(f"Pick run {older}").check()
    compare.click()

    page.wait_for_url(f"**/evals/runs/{older}/compare/{newer}/")
    case = page.locator('[data-case="london"]')
    expect(case).to_contain_text("passed")
    expect(case).to_contain_text("failed")
    metric = case.locator('[data-metric="tool_trajectory_avg_score"]')
    expect(metric).to_have_text("tool_trajectory_avg_score: 1.00 → 0.00")
    changed = case.locator('[data-diff="changed"]')
    expect(changed).to_contain_text('get_weather_report({"city":"Paris"})')
    expect(changed).to_contain_text('was {"city":"London"}')
    expect(case.locator(".eval-expected")).to_contain_text("London")
    # Only the words that changed are marked; "is" and "today." are kept.
    expect(case.locator(".eval-answer del")).to_have_text(["London", "foggy"])
    expect(case.locator(".eval-answer ins")).to_have_text(["Paris", "sunny"])
    shoot(page, "eval-compare")


def test_the_compare_page_fits_a_phone(sign_in, runs):
    older, newer = runs["runs"]
    page = sign_in("alice", viewport=PHONE)
    page.goto(f"/evals/runs/{older}/compare/{newer}/")
    expect(page.locator('[data-case="london"]')).to_be_visible()

    overflow = page.evaluate(
        "document.documentElement.scrollWidth > document.documentElement.clientWidth"
    )
    assert not overflow


def test_another_user_sees_no_run(sign_in, runs):
    older, newer = runs["runs"]
    page = sign_in("bob")
    page.goto(f"/evals/runs/{older}/compare/{newer}/")

    expect(page.locator("#evalruns-body")).to_contain_text("No such eval run")
