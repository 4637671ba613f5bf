"""`manage.py eval_run SET --agent A [--agent-version N] [--model M] [--as USER]
[--threshold 0.8] [--live-tools] [--json out.json] [--junit out.xml]`: run an eval
set for CI, in this process, to its end (also `toolcrib eval run ...`).

Exit codes: 0 the run's score reaches the threshold (default 1.0: every case
passed); 1 below it; 2 bad input (an unknown set, agent, version or user).
SET is a set's id, or its name (a name several owners use needs --as to pick).
"""

import json
from pathlib import Path
from xml.etree import ElementTree as ET

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from evals.models import EvalRun, EvalSet
from evals.running.runs import RunInputError, execute_run, start_run

BAD_INPUT = 2
BELOW_THRESHOLD = 1


class Command(BaseCommand):
    help = "Run an eval set against an agent, for CI (exit 1 below the threshold)."

    def add_arguments(self, parser):
        parser.add_argument("set", help="the eval set's id or name")
        parser.add_argument("--agent", required=True)
        parser.add_argument("--agent-version", type=int, dest="agent_version")
        parser.add_argument("--model", default="")
        parser.add_argument("--as", dest="as_user", help="username (default: owner)")
        parser.add_argument("--threshold", type=float)
        parser.add_argument("--live-tools", action="store_true")
        parser.add_argument("--json", dest="json_path")
        parser.add_argument("--junit", dest="junit_path")

    def handle(self, *args, **options):
        user = self._user(options["as_user"])
        eval_set = self._set(options["set"], user)
        user = user or eval_set.owner
        try:
            run = start_run(
                eval_set=eval_set,
                user=user,
                agent=options["agent"],
                agent_version=options["agent_version"],
                model=options["model"],
                live_tools=options["live_tools"],
                threshold=options["threshold"],
                dispatch_now=False,
            )
        except RunInputError as exc:
            raise CommandError(str(exc), returncode=BAD_INPUT) from None
        run = execute_run(run.pk)
        report = as_report(run)
        if options["json_path"]:
            Path(options["json_path"]).write_text(json.dumps(report, indent=2))
        if options["junit_path"]:
            Path(options["junit_path"]).write_bytes(as_junit(run, report))
        self._summary(report)
        if not run.passed:
            raise SystemExit(BELOW_THRESHOLD)

    def _user(self, username):
        if not username:
            return None
        found = get_user_model().objects.filter(username=username, is_active=True)
        if not found.exists():
            raise CommandError(f"No active user {username!r}.", returncode=BAD_INPUT)
        return found.get()

    def _set(self, key, user):
        sets = EvalSet.objects.all()
        found = sets.filter(pk=int(key)) if key.isdigit() else sets.filter(name=key)
        if user is not None and found.count() > 1:
            found = found.filter(owner=user)
        if found.count() != 1:
            raise CommandError(
                f"No single eval set {key!r} (give its id, or --as its owner).",
                returncode=BAD_INPUT,
            )
        return found.get()

    def _summary(self, report):
        for case in report["cases"]:
            line = f"{case['status']:7} {case['eval_id']}"
            if case["error"]:
                line += f": {case['error']}"
            self.stdout.write(line)
        self.stdout.write(
            f"run {report['id']}: score {report['score']} "
            f"(threshold {report['threshold']}) "
            f"{'passed' if report['passed'] else 'FAILED'}"
        )


def as_report(run: EvalRun) -> dict:
    """The run as JSON: its totals, and per case its status, scores and measures."""
    threshold = 1.0 if run.threshold is None else run.threshold
    return {
        "id": run.pk,
        "eval_set": run.eval_set.name,
        "agent": run.agent_name,
        "agent_version": run.agent_version,
        "model": run.model,
        "as_user": run.as_user.get_username(),
        "status": run.status,
        "score": run.score,
        "threshold": threshold,
        "passed": bool(run.passed),
        "totals": run.totals,
        "cases": [
            {
                "eval_id": result.eval_id,
                "status": result.status,
                "scores": result.scores,
                "error": result.error,
                "tokens_in": result.tokens_in,
                "tokens_out": result.tokens_out,
                "cost": float(result.cost),
                "latency_ms": result.latency_ms,
            }
            for result in run.results.all()
        ],
    }


def as_junit(run: EvalRun, report: dict) -> bytes:
    """JUnit XML: a testcase per eval case; a failure names its scores."""
    cases = report["cases"]
    suite = ET.Element(
        "testsuite",
        name=report["eval_set"],
        tests=str(len(cases)),
        failures=str(sum(1 for c in cases if c["status"] == "failed")),
        errors=str(sum(1 for c in cases if c["status"] in ("error", "pending"))),
        time=f"{sum(c['latency_ms'] for c in cases) / 1000:.3f}",
    )
    for case in cases:
        element = ET.SubElement(
            suite,
            "testcase",
            classname=report["eval_set"],
            name=case["eval_id"],
            time=f"{case['latency_ms'] / 1000:.3f}",
        )
        scores = "; ".join(
            f"{name}: {value.get('score', value.get('status'))}"
            f" (threshold {value.get('threshold')})"
            for name, value in case["scores"].items()
        )
        if case["status"] == "failed":
            ET.SubElement(element, "failure", message=scores).text = json.dumps(
                case["scores"], indent=2
            )
        elif case["status"] in ("error", "pending"):
            message = case["error"] or "not run"
            ET.SubElement(element, "error", message=message).text = message
    return ET.tostring(suite, encoding="utf-8", xml_declaration=True)
