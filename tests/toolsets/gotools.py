"""The tools of the GoAgent tool API reference (seeds/003), written as ADK tools.

`my_tool`, `add` and `search` are the document's own examples (BaseTool,
NewFunctionTool, the builder's search tool). A GoAgent tool returns
`(output, error)`: here a tool that fails raises. Registered as a code toolset
(`"goagent": "tests.toolsets.gotools"`) by the tests that call them directly.
"""

SEARCHES: list[str] = []


def _process_input(text: str) -> str:
    """The document's `processInput`: fails on nothing to process."""
    if not text.strip():
        raise ValueError("input is empty: nothing to process")
    return text.strip().upper()


def my_tool(input: str) -> dict:  # noqa: A002 - the document's parameter name
    """执行自定义操作 (Run a custom operation).

    Args:
        input: 输入参数 (the input).
    """
    return {"result": _process_input(input), "success": True}


def add(a: float, b: float) -> float:
    """加法计算 (Add two numbers).

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


def search(query: str) -> dict:
    """搜索信息 (Search for information).

    Args:
        query: What to search for.
    """
    SEARCHES.append(query)
    return {"query": query, "results": [f"about {query}"]}
