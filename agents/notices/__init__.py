"""Notices of requests where people are: mail and webhooks (docs/notices.md).

When a request is recorded (agents.requests.record), `enqueue.enqueue` writes one
Delivery per person and channel her preferences choose, and per webhook
destination that hears of it; `sending` sends them off the turn's path (a Celery
task, or a timer thread of this process), with retries, each attempt logged on
its Delivery. A mail (or a person's own webhook) of an approval carries approve /
reject links (`links`): one-time, bound to the request and the approver,
expiring with the request; opening one shows a page (`views`), and only its
form's POST decides, through the one answer path.

Imported one way: enqueue → recipients, preferences, tasks' name; sending →
messages, links; views → links → agents.answers.answer.
"""
