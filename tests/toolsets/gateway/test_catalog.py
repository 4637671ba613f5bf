"""How a catalog tool reads to an MCP client: its name and its input schema."""

from toolsets.gateway.catalog import input_schema, mcp_name


def test_a_catalog_name_is_its_mcp_name_and_unsafe_characters_are_spelled():
    assert mcp_name("math.calculate") == "math.calculate"
    assert mcp_name("files-v2.read_file") == "files-v2.read_file"
    assert mcp_name("my tools.séarch/all") == "my_tools.s_arch_all"


def test_genai_schemas_become_json_schemas():
    stored = {
        "type": "OBJECT",
        "properties": {
            "items": {"type": "ARRAY", "items": {"type": "STRING"}, "min_items": 1},
            "mode": {"any_of": [{"type": "INTEGER"}, {"type": "NULL"}]},
            "type": {"type": "STRING", "nullable": True},
        },
        "required": ["items"],
        "property_ordering": ["items", "mode"],
    }

    assert input_schema(stored) == {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "mode": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "type": {"type": "string"},
        },
        "required": ["items"],
    }


def test_a_tool_without_parameters_takes_an_empty_object():
    assert input_schema({}) == {"type": "object", "properties": {}}
