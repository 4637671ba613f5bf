"""Benchmark: the cost of tool filtering for one model step.

Builds 1,000 users, 200 groups, 1,000 tools (50 toolsets) and 10,000 grants inside a
transaction that is rolled back, then times what GovernancePlugin does per model
step: decide the agent's tools for the user (access.explain_many) and prune the
request. Prints p50/p99, warm and right after an invalidation (of the grants: one
query for the user; of the catalog: the 1,000-tool snapshot is read again too).

    .venv/bin/python -m bench.access [--steps 2000] [--tools-per-agent 10]
"""

import bench.django_setup  # noqa: F401 - before any Django import

# isort: split

import random
import statistics
import time

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone
from google.adk.models import LlmRequest
from google.genai import types

from toolsets import access
from toolsets.governance.checks import prune_request
from toolsets.models import Grant, Tool, Toolset

USERS, GROUPS, TOOLSETS, TOOLS_PER_TOOLSET, GRANTS = 1000, 200, 50, 20, 10_000


class Rollback(Exception):
    """Raised to roll the benchmark's rows back."""


class Command(BaseCommand):
    help = "Time per-step tool filtering (p50/p99), warm and after an invalidation."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--steps", type=int, default=2000)
        parser.add_argument("--tools-per-agent", type=int, default=10)
        parser.add_argument("--seed", type=int, default=4)

    def handle(self, *args, steps: int, tools_per_agent: int, seed: int, **options):
        rng = random.Random(seed)
        try:
            with transaction.atomic():
                users, tools = build_world(rng)
                self.run(rng, users, tools, steps, tools_per_agent)
                raise Rollback
        except Rollback:
            pass

    def run(self, rng, users, tools, steps: int, per_agent: int) -> None:
        agents = [rng.sample(tools, per_agent) for _ in range(50)]

        def step() -> float:
            user, names = rng.choice(users), rng.choice(agents)
            request = request_for(names)
            start = time.perf_counter()
            decisions = access.explain_many(user_id=user, tools=names)
            refused = {n for n, d in decisions.items() if not d.allowed}
            prune_request(request, refused)
            return (time.perf_counter() - start) * 1000

        for user in users:  # warm every user up
            access.explain_many(user_id=user, tools=rng.choice(agents))
        warm = [step() for _ in range(steps)]
        rounds = max(steps // 10, 50)
        after_grant, after_catalog = [], []
        for _ in range(rounds):
            access.invalidate_grants()
            after_grant.append(step())
        for _ in range(rounds):
            access.invalidate()
            after_catalog.append(step())
        self.stdout.write(
            f"{USERS} users, {GROUPS} groups, {len(tools)} tools, {GRANTS} grants; "
            f"{per_agent} tools per step"
        )
        self.stdout.write(f"warm:                   {summary(warm)}")
        self.stdout.write(f"after a grant change:   {summary(after_grant)}")
        self.stdout.write(f"after a catalog change: {summary(after_catalog)}")


def build_world(rng: random.Random) -> tuple[list[int], list[str]]:
    User = get_user_model()
    prefix = f"bench{time.time_ns()}"
    User.objects.bulk_create(User(username=f"{prefix}-u{i}") for i in range(USERS))
    users = list(User.objects.filter(username__startswith=prefix))
    Group.objects.bulk_create(Group(name=f"{prefix}-g{i}") for i in range(GROUPS))
    groups = list(Group.objects.filter(name__startswith=prefix))
    Membership = User.groups.through
    Membership.objects.bulk_create(
        Membership(user_id=u.pk, group_id=g.pk)
        for u in users
        for g in rng.sample(groups, 3)
    )
    Toolset.objects.bulk_create(
        Toolset(
            name=f"{prefix}-ts{i}",
            default_policy=rng.choice(["open", "granted_only"]),
        )
        for i in range(TOOLSETS)
    )
    toolsets = list(Toolset.objects.filter(name__startswith=prefix))
    Tool.objects.bulk_create(
        Tool(toolset=ts, name=f"t{j}", full_name=f"{ts.name}.t{j}")
        for ts in toolsets
        for j in range(TOOLS_PER_TOOLSET)
    )
    tools = list(Tool.objects.filter(toolset__in=toolsets))
    Grant.objects.bulk_create(
        random_grant(rng, users, groups, toolsets, tools) for _ in range(GRANTS)
    )
    access.invalidate()
    return [u.pk for u in users], [t.full_name for t in tools]


def random_grant(rng, users, groups, toolsets, tools) -> Grant:
    subject = (
        {"user": rng.choice(users)}
        if rng.random() < 0.7
        else {"group": rng.choice(groups)}
    )
    target = (
        {"tool": rng.choice(tools)}
        if rng.random() < 0.6
        else {"toolset": rng.choice(toolsets)}
    )
    expires = None
    if rng.random() < 0.1:
        expires = timezone.now() + timezone.timedelta(days=rng.choice([-1, 1]))
    return Grant(
        **subject,
        **target,
        effect="deny" if rng.random() < 0.3 else "allow",
        expires_at=expires,
    )


def request_for(names: list[str]) -> LlmRequest:
    declarations = [types.FunctionDeclaration(name=n.split(".")[-1]) for n in names]
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=declarations)]
    )
    return LlmRequest(config=config)


def summary(durations: list[float]) -> str:
    ordered = sorted(durations)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        f"p50 {statistics.median(ordered):.3f} ms  p99 {p99:.3f} ms  (n={len(ordered)})"
    )


if __name__ == "__main__":
    import sys

    Command().run_from_argv(["manage.py", "bench_access", *sys.argv[1:]])
