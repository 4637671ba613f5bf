"""Toolcrib settings: every value comes from the environment, with an embedded default.

One module a concern, composed here in order (a later one reads what an earlier one
set): base (Django itself, the apps, files), patches_off, database, realtime
(Redis, Celery, the executor), agents, tools, auth, api, observability, notices.
docs/deployment.md names every variable; nothing else in the code base reads
os.environ. DJANGO_SETTINGS_MODULE stays `project.settings`.
"""

# isort: skip_file
# In this order: a later module imports what it reads from an earlier one.
from project.settings.base import *  # noqa: F403
from project.settings.patches_off import *  # noqa: F403
from project.settings.database import *  # noqa: F403
from project.settings.realtime import *  # noqa: F403
from project.settings.agents import *  # noqa: F403
from project.settings.tools import *  # noqa: F403
from project.settings.auth import *  # noqa: F403
from project.settings.api import *  # noqa: F403
from project.settings.observability import *  # noqa: F403
from project.settings.notices import *  # noqa: F403
