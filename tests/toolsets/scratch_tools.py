"""A tool that saves an artifact and reads it back in one call, registered as a
code toolset (`"scratch": "tests.toolsets.scratch_tools.keep_note"`) by the direct-call
tests."""

from google.adk.tools import ToolContext
from google.genai import types


async def keep_note(text: str, tool_context: ToolContext) -> dict:
    """Saves a note as an artifact and reads it back.

    Args:
        text: The note.
    """
    version = await tool_context.save_artifact("note.txt", types.Part(text=text))
    part = await tool_context.load_artifact("note.txt")
    return {
        "version": version,
        "read_back": part.text,
        "kept": await tool_context.list_artifacts(),
    }
