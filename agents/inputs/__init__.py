"""What a client may send: one model per message and one rule for text, on both edges.

A REST view and a socket frame that carry the same message validate it with the
same model from here (agents.realtime.frames wraps them in a `type`), so a rule
holds on both edges at once. Callers import every name from this package; its
modules, imported one way (rule.py below the others):

- rule.py: the rule for every text that will be stored and for the JSON a client
  sends (`text_problem`, `load_client_json`, `StoredText`), and `ClientInput`, the
  base of every model;
- agent_settings.py: an agent's settings as stored, and a message's tool choice;
- turns.py: what starts a turn (a message) and what stops one;
- answers.py: a person's answers to a pause: a call's result, a credential, a
  decision;
- sessions.py: a change to a session, and the query of the list of sessions;
- changes.py: the query of the change audit;
- prompts.py: a prompt of the library, and its variables.
"""

from agents.inputs.agent_settings import (
    HISTORY_MAX,
    STARTER_MAX_CHARS,
    STARTERS_MAX,
    TOOL_CHOICE_FORMS,
    TOOL_MODES,
    StoredToolChoice,
    ToolChoice,
    parse_history,
    parse_retention_days,
    parse_starters,
    parse_tool_choice,
)
from agents.inputs.answers import (
    COMMENT_MAX_CHARS,
    DECIDE_AT_ONCE,
    RESPONSE_MAX_CHARS,
    AnswerText,
    BulkDecisionInput,
    CallId,
    CallResult,
    CallResultInput,
    Comment,
    CredentialAnswer,
    DecisionInput,
    FunctionResponseInput,
    OptionalSecret,
    Secret,
)
from agents.inputs.changes import ChangeQuery
from agents.inputs.prompts import PromptInput, variables_of
from agents.inputs.rule import (
    NOT_FINITE,
    REPLACEMENT,
    BadJson,
    BadText,
    ClientInput,
    Path,
    StoredJson,
    StoredText,
    check_json,
    dotted,
    json_depth,
    load_client_json,
    load_json,
    replace_surrogates,
    text_problem,
    text_problems,
)
from agents.inputs.sessions import (
    NOT_IN_A_TITLE,
    SEARCH_MAX_CHARS,
    TITLE_MAX_CHARS,
    SessionChange,
    SessionQuery,
    SessionTitle,
)
from agents.inputs.turns import (
    CancelInput,
    MessageInput,
    QueueCancelInput,
)

__all__ = [
    "AnswerText",
    "ChangeQuery",
    "BadJson",
    "BadText",
    "BulkDecisionInput",
    "COMMENT_MAX_CHARS",
    "CallId",
    "CallResult",
    "CallResultInput",
    "CancelInput",
    "QueueCancelInput",
    "ClientInput",
    "Comment",
    "CredentialAnswer",
    "DECIDE_AT_ONCE",
    "DecisionInput",
    "FunctionResponseInput",
    "HISTORY_MAX",
    "MessageInput",
    "NOT_FINITE",
    "NOT_IN_A_TITLE",
    "OptionalSecret",
    "PromptInput",
    "Path",
    "REPLACEMENT",
    "RESPONSE_MAX_CHARS",
    "SEARCH_MAX_CHARS",
    "STARTERS_MAX",
    "STARTER_MAX_CHARS",
    "Secret",
    "SessionChange",
    "SessionQuery",
    "SessionTitle",
    "StoredJson",
    "StoredText",
    "StoredToolChoice",
    "TITLE_MAX_CHARS",
    "TOOL_CHOICE_FORMS",
    "TOOL_MODES",
    "ToolChoice",
    "check_json",
    "dotted",
    "json_depth",
    "load_client_json",
    "load_json",
    "parse_history",
    "parse_retention_days",
    "parse_starters",
    "parse_tool_choice",
    "replace_surrogates",
    "text_problem",
    "text_problems",
    "variables_of",
]
