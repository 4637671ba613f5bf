"""`toolcrib watch`: follow a session's events live from any Toolcrib server, with a token.

`toolcrib GROUP ACTION ...` (say `toolcrib eval run ...`) runs the management
command `GROUP_ACTION` of this installation (`manage.py eval_run ...`): an app
adds a command to the CLI by adding a management command, never by agents
importing it.

Also `python manage.py watch`. It is an outside client of the documented websocket
protocol (docs/events.md): it reconnects with `after=<last seq>` and never prints an
event twice.
"""

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from typing import Any, TextIO
from urllib.parse import urlencode, urlsplit, urlunsplit

import websockets

RETRY_SECONDS = 1.0


def stream_url(server: str, session_id: str, after: int) -> str:
    """ws(s)://host/ws/sessions/<id>/?after=<seq> for an http(s) or ws(s) server URL."""
    parts = urlsplit(server)
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme or "ws")
    path = parts.path.rstrip("/") + f"/ws/sessions/{session_id}/"
    return urlunsplit((scheme, parts.netloc, path, urlencode({"after": after}), ""))


def describe(frame: dict[str, Any]) -> str | None:
    """One line per frame; None for frames not worth a line."""
    if frame.get("type") != "event":
        return (
            f"-- {frame.get('type')}: {json.dumps(frame)}"
            if frame.get("type") != "pong"
            else None
        )
    event = frame["event"]
    head = f"#{frame['seq']}" if frame["seq"] is not None else "  ~"
    body = event.get("text") or ""
    if event.get("function_calls"):
        body = ", ".join(
            f"{c['name']}({json.dumps(c['args'])})" for c in event["function_calls"]
        )
    elif event.get("function_responses"):
        body = ", ".join(
            f"{r['name']} -> {json.dumps(r['response'])}"
            for r in event["function_responses"]
        )
    elif event.get("transfer"):
        body = f"{event['transfer']['from']} -> {event['transfer']['to']}"
    elif event.get("error"):
        body = event["error"]["message"]
    elif event.get("run"):
        run = event["run"]
        waiting_for = run.get("waiting_for")
        body = f"{run['status']} for {waiting_for}" if waiting_for else run["status"]
    return f"{head} {event['kind']} {event['author']}: {body}".rstrip()


async def watch(
    *,
    server: str,
    session_id: str,
    token: str,
    after: int = 0,
    out: TextIO = sys.stdout,
    until: Callable[[dict[str, Any]], bool] | None = None,
    partials: bool = False,
) -> int:
    """Print a session's events until `until(frame)` is true (or forever); return the last seq."""
    headers = {"Authorization": f"Token {token}"}
    while True:
        try:
            async with websockets.connect(
                stream_url(server, session_id, after), additional_headers=headers
            ) as socket:
                async for raw in socket:
                    frame = json.loads(raw)
                    if frame.get("type") == "event" and frame["seq"] is not None:
                        if frame["seq"] <= after:
                            continue
                        after = frame["seq"]
                    if (
                        frame.get("type") == "event"
                        and frame["seq"] is None
                        and not partials
                    ):
                        continue
                    line = describe(frame)
                    if line:
                        print(line, file=out, flush=True)
                    if until and until(frame):
                        return after
        except websockets.ConnectionClosedError as exc:
            if exc.rcvd and exc.rcvd.code >= 4000:
                raise SystemExit(f"refused: close code {exc.rcvd.code}") from exc
        except OSError:
            pass
        await asyncio.sleep(RETRY_SECONDS)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolcrib",
        epilog="toolcrib GROUP ACTION ... runs manage.py GROUP_ACTION ...,"
        " e.g. toolcrib eval run SET --agent A (docs/eval-runs.md).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    watch_cmd = commands.add_parser("watch", help="print a session's events live")
    add_watch_arguments(watch_cmd)
    return parser


def add_watch_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session_id")
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="server URL")
    parser.add_argument(
        "--token", required=True, help="API token (POST /api/auth/token/)"
    )
    parser.add_argument("--after", type=int, default=0, help="start after this seq")
    parser.add_argument(
        "--partials", action="store_true", help="also print streamed text"
    )


def run_management_command(group: str, argv: list[str]) -> None:
    """`toolcrib GROUP ACTION args` as `manage.py GROUP_ACTION args`."""
    import os

    from django.core.management import execute_from_command_line

    if not argv or argv[0].startswith("-"):
        raise SystemExit(f"usage: toolcrib {group} ACTION [arguments]")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
    execute_from_command_line(["toolcrib", f"{group}_{argv[0]}", *argv[1:]])


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] not in ("watch", "-h", "--help"):
        run_management_command(argv[0], argv[1:])
        return
    args = build_parser().parse_args(argv)
    try:
        asyncio.run(
            watch(
                server=args.url,
                session_id=args.session_id,
                token=args.token,
                after=args.after,
                partials=args.partials,
            )
        )
    except KeyboardInterrupt:
        pass
