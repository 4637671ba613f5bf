"""Two agents, each in its own module with its own `AdminTools` class: one class
name, two toolsets (toolsets.toolset_names.class_toolset_name)."""

CLOSED: list[str] = []
