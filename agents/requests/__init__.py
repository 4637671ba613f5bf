"""Every pause for a person, one mechanism: a Request with a kind.

A turn pauses when a call waits for a person: a long-running tool's call (kind
"call"), ADK's tool confirmation (kind "approval") or its credential request
(kind "credential"). The modules, imported one way (answer -> turns.start ->
... -> turns.drive -> record):

- kinds.py: what each kind records from an ADK event, and the FunctionResponse
  its answer (or its expiry) becomes;
- record.py: the one recorder, called by turns/drive.py for each stored event;
- rules.py: the one rule of who may answer (and see) a request;
- inbox.py: what a user sees: their inbox, a session's requests, one request;
- answer.py: the one answer path, for REST, the socket and trusted code;
- expiry.py + tasks.py: the one expiry sweep, on time, at worker start;
- errors.py: the refusals, one set for every kind.
"""
