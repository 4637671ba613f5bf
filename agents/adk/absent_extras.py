"""ADK's optional modules whose extras are not installed, said absent once a process.

ADK builds a node for the agent it runs, every step, and each time it tries
`from google.adk.agents.remote_a2a_agent import RemoteA2aAgent`, which needs the
`a2a-sdk` extra. Python keeps a module once imported, not an import that failed:
without the extra each try found, loaded and ran the module again until it failed
(0.3 ms a try; about 2% of an embedded turn's CPU). None in `sys.modules` is
Python's own mark for a module known to be absent: an import of it fails at once.
A module whose extra is installed imports as usual and is left alone.
"""

import importlib
import sys

OPTIONAL_MODULES = ("google.adk.agents.remote_a2a_agent",)


def mark_absent(names=OPTIONAL_MODULES) -> list[str]:
    """Try each module once; mark those that cannot be imported. The names marked."""
    marked = []
    for name in names:
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except ImportError:
            sys.modules[name] = None
            marked.append(name)
    return marked
