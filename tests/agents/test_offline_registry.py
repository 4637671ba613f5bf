"""`offline/...` names the offline model in every process, whatever imported first:
the connections' catch-all pattern (any `prefix/model`, LiteLLM) must not take it."""

import subprocess
import sys

from tests.live.server import ROOT, server_env

CHECK = """
from google.adk.agents import LlmAgent
from google.adk.models import LLMRegistry
print(LLMRegistry.resolve("offline/demo").__name__)
print(type(LlmAgent(name="x", model="offline/other").canonical_model).__name__)
print(LLMRegistry.resolve("lab/llama3").__name__)
"""


def test_a_fresh_process_runs_offline_names_on_the_offline_model():
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", CHECK],
        cwd=ROOT,
        env=server_env({}),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    lines = done.stdout.strip().splitlines()[-3:]
    assert lines == ["OfflineLlm", "OfflineLlm", "ToolcribLiteLlm"], done.stdout
