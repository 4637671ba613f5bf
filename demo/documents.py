"""Document analysis with artifacts and memory: the seed's ``process_document`` example.

Reproduces the ADK tools docs example that loads an artifact, searches the user's
memory for context, and saves the analysis as a new artifact ``analysis_<name>``.
ADK 2.13's Context methods are async, so the tool is too. With the offline model:

1. In a first session, tell it something worth remembering, e.g. ``our revenue
   target is 5 million``, then close the session (``POST
   /api/sessions/{id}/close/``): it joins your memory of this agent.
2. In a new session, upload ``report.txt`` (``POST /api/sessions/{id}/artifacts/``)
   and type ``analyze "report.txt" for "revenue"``: ``process_document`` loads it,
   finds the remembered target, and saves ``analysis_report.txt`` (download it from
   ``GET /api/sessions/{id}/artifacts/analysis_report.txt/``).
3. ``list my documents`` calls ``list_documents``.
"""

import re

from google.adk.agents import LlmAgent
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.tools import ToolContext
from google.genai import types

MAX_LINES = 5


async def process_document(
    document_name: str, analysis_query: str, tool_context: ToolContext
) -> dict:
    """Analyzes a document using context from memory.

    Args:
        document_name: The name of the document (an artifact), e.g. "report.txt".
        analysis_query: What the analysis is about, e.g. "revenue".
    """
    document = await tool_context.load_artifact(document_name)
    if document is None:
        return {
            "status": "error",
            "error_message": f"Document '{document_name}' not found.",
        }
    text = document_text(document)
    found = await tool_context.search_memory(
        f"Context for analyzing document about {analysis_query}"
    )
    context = [excerpt(memory) for memory in found.memories]
    analysis = analyze(document_name, text, analysis_query, context)
    name = f"analysis_{document_name}"
    version = await tool_context.save_artifact(
        name, types.Part.from_text(text=analysis)
    )
    return {
        "status": "success",
        "analysis_artifact": name,
        "version": version,
        "memory_context": context,
    }


async def list_documents(tool_context: ToolContext) -> dict:
    """Lists the documents (artifacts) this session can use."""
    return {"documents": await tool_context.list_artifacts()}


def document_text(part: types.Part) -> str:
    """A document's text, whether it was saved as text or uploaded as bytes."""
    if part.text is not None:
        return part.text
    if part.inline_data is not None and part.inline_data.data:
        return part.inline_data.data.decode("utf-8", errors="replace")
    return ""


def excerpt(memory: MemoryEntry) -> str:
    """One remembered message as `author: text`."""
    words = " ".join(p.text for p in memory.content.parts or [] if p.text)
    return f"{memory.author or 'someone'}: {words}"


def analyze(name: str, text: str, query: str, context: list[str]) -> str:
    """A plain report: size, the lines that mention the query, remembered context."""
    terms = [t for t in re.findall(r"\w+", query.lower()) if len(t) > 2] or [query]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    hits = [line for line in lines if any(t in line.lower() for t in terms)]
    report = [
        f"Analysis of '{name}' regarding '{query}'.",
        f"{len(text.split())} words, {len(lines)} lines; {len(hits)} mention it.",
        *[f"- {line}" for line in hits[:MAX_LINES]],
        "Context from memory:" if context else "No related memory.",
        *[f"- {item}" for item in context[:MAX_LINES]],
    ]
    return "\n".join(report)


document_analyst = LlmAgent(
    name="document_analyst",
    description="Analyzes your documents with what it remembers of past sessions.",
    instruction=(
        "You analyze documents the user uploaded. When the user asks to analyze a "
        "document, use 'process_document' with the document's name and what to "
        "look for. When the user asks which documents there are, use "
        "'list_documents'."
    ),
    tools=[process_document, list_documents],
)

# Conversation starters an empty session offers (agents.adk.builder.code_agent_starters):
# each works on the offline model (tests/demo/test_starters.py).
STARTERS = {
    "document_analyst": [
        "List my documents",
        'Analyze "report.txt" for "revenue"',
    ],
}
