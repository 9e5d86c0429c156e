"""The titles of the digest's sections: what both built-in summarizers write, what the
fact selection sorts its facts into, and what a previous summary is read back by."""

from __future__ import annotations

SCOPE = "Scope"
EARLIER = "Earlier"
ASKS = "User asks"
LAST_STATE = "Last state"
ERRORS = "Errors"
DECISIONS = "Decisions"
KEY = "Key facts"
IDS = "Identifiers"
COMMANDS = "Commands"
FILES = "Files"
TOOLS = "Tool calls"

FACTS = (ERRORS, DECISIONS, KEY)
"""The facts, chosen together and written in three sections."""
