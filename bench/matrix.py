"""Benchmark: opening the staff Access page's matrix with 200 users × 500 tools.

Builds 200 users, 20 groups, 25 toolsets of 20 tools (500) and 2,000 grants inside
a transaction that is rolled back, then times, as a signed-in staff member, the API
calls the matrix makes when it opens (frontend/static/frontend/access.js): the
groups, the first page of users, the toolsets, the tools, the grants of the columns
shown (`/api/grants/?users=&groups=`), and one `/api/access/?users=` for the page's
users. The page asks some of them at once; this asks them one after another, so the
total is an upper bound. Target: under 500 ms. Then the same for a search by name
(`/api/users/?search=`) and the next page.

For comparison, in the same run, what the page asked before: every grant
(`/api/grants/`) and one `/api/access/?user=` per user ("total before").

    .venv/bin/python -m bench.matrix [--rounds 10] [--page 20]
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
from django.test import Client, override_settings

from toolsets import access
from toolsets.models import Grant, Tool, Toolset

USERS, GROUPS, TOOLSETS, TOOLS_PER_TOOLSET, GRANTS = 200, 20, 25, 20, 2000
PAGE = 12  # access.js: PAGE users a page of the matrix
TARGET_MS = 500


class Rollback(Exception):
    """Raised to roll the benchmark's rows back."""


class Command(BaseCommand):
    help = "Time the API calls that open the Access page's matrix (200 × 500)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--rounds", type=int, default=10)
        parser.add_argument("--page", type=int, default=PAGE)
        parser.add_argument("--seed", type=int, default=18)

    def handle(self, *args, rounds: int, page: int, seed: int, **options):
        rng = random.Random(seed)
        try:
            with transaction.atomic(), override_settings(ALLOWED_HOSTS=["testserver"]):
                staff, prefix = build_world(rng)
                client = Client()
                client.force_login(staff)
                self.run(client, prefix, rounds, page)
                raise Rollback
        except Rollback:
            pass

    def run(self, client: Client, prefix: str, rounds: int, page: int) -> None:
        def get(path: str, **query) -> list | dict:
            response = client.get(path, query)
            assert response.status_code == 200, (path, response.status_code)
            return response.json()

        def open_matrix(search: str = "", pages: int = 1) -> dict[str, float]:
            times: dict[str, float] = {}

            def timed(name: str, path: str, **query):
                start = time.perf_counter()
                body = get(path, **query)
                times[name] = times.get(name, 0) + (time.perf_counter() - start) * 1000
                return body

            groups = timed("groups", "/api/groups/")
            users = timed("users", "/api/users/", search=search, limit=page * pages + 1)
            users = users[page * (pages - 1) : page * pages]
            timed("toolsets", "/api/toolsets/")
            timed("tools", "/api/tools/")
            ids = ",".join(str(user["id"]) for user in users)
            group_ids = ",".join(str(group["id"]) for group in groups)
            timed("grants (columns shown)", "/api/grants/", users=ids, groups=group_ids)
            matrices = timed("access (?users=, one call)", "/api/access/", users=ids)
            assert len(matrices) == len(users)
            shared = sum(
                times[name] for name in ("groups", "users", "toolsets", "tools")
            )
            times["total"] = sum(times.values())
            timed("before: grants (all)", "/api/grants/")
            for user in users:
                timed("before: access (per user)", "/api/access/", user=user["id"])
            times["total before"] = (
                shared
                + times["before: grants (all)"]
                + times["before: access (per user)"]
            )
            return times

        open_matrix()  # warm up: the catalog snapshot, the grants cache
        cases = {
            "open (first page)": lambda: open_matrix(),
            "find a user by name": lambda: open_matrix(search=f"{prefix}-u17"),
            "next page": lambda: open_matrix(pages=2),
        }
        self.stdout.write(
            f"{USERS} users, {GROUPS} groups, {TOOLSETS * TOOLS_PER_TOOLSET} tools, "
            f"{GRANTS} grants; {page} users a page; target total < {TARGET_MS} ms"
        )
        for label, case in cases.items():
            samples = [case() for _ in range(rounds)]
            self.stdout.write(f"{label}:")
            for name in samples[0]:
                values = sorted(sample[name] for sample in samples)
                worst = values[-1]
                self.stdout.write(
                    f"  {name:<28} p50 {statistics.median(values):7.1f} ms"
                    f"  max {worst:7.1f} ms"
                )


def build_world(rng: random.Random):
    User = get_user_model()
    prefix = f"bench{time.time_ns()}"
    staff = User.objects.create_user(f"{prefix}-staff", is_staff=True)
    User.objects.bulk_create(User(username=f"{prefix}-u{i}") for i in range(USERS))
    users = list(User.objects.filter(username__startswith=f"{prefix}-u"))
    Group.objects.bulk_create(Group(name=f"{prefix}-g{i}") for i in range(GROUPS))
    groups = list(Group.objects.filter(name__startswith=prefix))
    Membership = User.groups.through
    Membership.objects.bulk_create(
        Membership(user_id=u.pk, group_id=g.pk)
        for u in users
        for g in rng.sample(groups, 2)
    )
    Toolset.objects.bulk_create(
        Toolset(
            name=f"{prefix}-ts{i}", default_policy=rng.choice(["open", "granted_only"])
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
    seen = set()
    grants = []
    while len(grants) < GRANTS:
        subject = (
            ("user", rng.choice(users))
            if rng.random() < 0.7
            else ("group", rng.choice(groups))
        )
        target = (
            ("tool", rng.choice(tools))
            if rng.random() < 0.8
            else ("toolset", rng.choice(toolsets))
        )
        key = (subject[0], subject[1].pk, target[0], target[1].pk)
        if key in seen:
            continue
        seen.add(key)
        grants.append(
            Grant(
                **{subject[0]: subject[1], target[0]: target[1]},
                effect="deny" if rng.random() < 0.3 else "allow",
            )
        )
    Grant.objects.bulk_create(grants)
    access.invalidate()
    return staff, prefix


if __name__ == "__main__":
    import sys

    Command().run_from_argv(["manage.py", "bench_matrix", *sys.argv[1:]])
