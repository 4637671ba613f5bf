"""A session shared read-only by a link (issue 48 item 2; docs/sharing.md).

- links.py: a link made, listed, revoked; a token checked and each opening audited;
  the team's setting of who may open a link (ShareSettings).
- fork.py: "Continue in a new session": the shared events copied, through ADK's
  session service, into a session of the viewer's own.
- errors.py: a link revoked or expired (410), a link that wants a signed-in reader.
"""
