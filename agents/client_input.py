"""The input rule's door for the apps above agents: what a client may send (JSON,
text), the REST parser and renderer that apply it to every body, and the ids and
numbers read from URLs and query strings. Importing it registers the URL path
converters (<id:...>, <name:...>) as agents.params does.

Part of agents' public door (agents.runtime says which modules it is).
"""

from agents.api.inputs import JSONParser, JSONRenderer, validated
from agents.inputs import (
    REPLACEMENT,
    BadJson,
    BadText,
    ClientInput,
    StoredText,
    check_json,
    load_json,
    replace_surrogates,
)
from agents.params import (
    ID_CONVERTER,
    NAME_CONVERTER,
    id_list_param,
    parse_whole_number,
    whole_number_param,
)

__all__ = [
    # The one rule for what a client sends.
    "BadJson",
    "BadText",
    "ClientInput",
    "REPLACEMENT",
    "StoredText",
    "check_json",
    "load_json",
    "replace_surrogates",
    # The same rule on every REST body, and stored text rendered safely.
    "JSONParser",
    "JSONRenderer",
    "validated",
    # Ids and numbers in URLs and query strings.
    "ID_CONVERTER",
    "NAME_CONVERTER",
    "id_list_param",
    "parse_whole_number",
    "whole_number_param",
]
