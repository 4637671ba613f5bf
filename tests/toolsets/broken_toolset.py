"""A toolset module whose own code fails on import (tests/toolsets/test_broken_toolsets.py)."""

raise RuntimeError("the module of this toolset is broken")
