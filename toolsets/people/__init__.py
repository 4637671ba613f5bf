"""People: staff create, invite, switch off and promote users (docs/permissions.md,
"People"). users.py holds the rules of a change; invites.py the links that make an
account; page.py the page an invitation's link opens."""
