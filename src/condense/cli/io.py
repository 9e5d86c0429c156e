"""Reading inputs and writing outputs for the CLI: ``-`` is stdin/stdout, files are
written atomically, and every unreadable input becomes a FormatError naming the file."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from condense.exceptions import FormatError
from condense.formats import Conversation, parse_text


def read_conversations(path: str, *, format: str = "auto") -> list[Conversation]:
    """Every conversation in ``path`` (a JSON document or JSONL; ``-`` for stdin)."""
    if path == "-":
        return parse_text(sys.stdin.read(), source="<stdin>", format=format)
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FormatError("no such file", source=path) from None
    except IsADirectoryError:
        raise FormatError("is a directory, expected a JSON or JSONL file", source=path) from None
    except UnicodeDecodeError as error:
        raise FormatError(f"not UTF-8 text ({error.reason})", source=path) from None
    except OSError as error:
        raise FormatError(error.strerror or str(error), source=path) from None
    return parse_text(text, source=path, format=format)


def render(conversations: Iterable[tuple[Conversation, Any]], *, jsonl: bool) -> str:
    """Serialize native documents: one JSON document, or one JSON line per record."""
    documents = [native for _, native in conversations]
    if jsonl:
        return "".join(json.dumps(doc, ensure_ascii=False) + "\n" for doc in documents)
    (document,) = documents
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def write_output(text: str, path: str | None) -> None:
    """Write ``text`` to ``path`` atomically (``None`` or ``-``: stdout)."""
    if path is None or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=directory, prefix=f".{target.name}.", delete=False
    ) as handle:
        handle.write(text)
        temporary = handle.name
    os.replace(temporary, target)


def is_jsonl(path: str, conversations: list[Conversation]) -> bool:
    """Write JSONL when the input was JSONL (or held several records)."""
    if path.endswith(".jsonl"):
        return True
    if path.endswith(".json"):
        return len(conversations) != 1
    return len(conversations) != 1 or conversations[0].line is not None


def where(conversation: Conversation) -> str:
    """``file:line`` (or just the file) of a conversation, for messages to the user."""
    source = conversation.source or "<input>"
    return f"{source}:{conversation.line}" if conversation.line is not None else source
