"""Reading conversations from objects, files, lines and text.

- ``load`` takes one conversation: a parsed object, or a path (``str`` or ``PathLike``;
  a string is always a path, never JSON text) to a ``.json`` file or to a ``.jsonl``
  file holding exactly one record.
- ``load_records`` streams every record of a JSONL file (or of any iterable of lines,
  such as an open file or ``sys.stdin``); a ``.json`` file may hold one record or an
  array of records.
- ``parse_text`` reads a whole text (a CLI's stdin) that is either one JSON document or
  JSONL.

A JSONL file (or list of objects) that is an agent transcript, a Claude Code session or a
Codex rollout (:mod:`condense.formats.transcripts`), is read whole into the requests of
its contexts: ``load`` gives the current one, ``load_records`` each in order.

Every failure is a FormatError naming the source, the line and the message index where
they are known, a record nested deeper than condense reads included (see
:mod:`condense._input`). Blank lines in JSONL are skipped (line numbers still count them).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from condense._files import JSONL_SUFFIXES
from condense._input import MAX_DEPTH
from condense.exceptions import FormatError
from condense.formats import transcripts
from condense.formats.conversation import Conversation, check_format

_RECORD_KEYS = ("messages", "conversations", "input")

Source = str | os.PathLike[str]
TOO_DEEP = f"is nested deeper than {MAX_DEPTH} levels"


def load(obj_or_path: object, *, format: str = "auto") -> Conversation:
    """One conversation from a parsed object (dict or list) or a path.

    A string is always taken as a path; use ``parse_text`` for JSON text. A ``.jsonl``
    file must hold exactly one record (use ``load_records`` for datasets).
    """
    check_format(format, auto=True)
    if isinstance(obj_or_path, list) and format == "auto":
        kind = transcripts.first_kind(obj_or_path)
        if kind is not None:
            events = transcripts.read_events(obj_or_path, kind=kind, source="<events>")
            return transcripts.conversations(events, source=None)[-1]
    if isinstance(obj_or_path, dict | list):
        return Conversation.read(obj_or_path, format=format)
    if not isinstance(obj_or_path, str | os.PathLike):
        raise FormatError(
            f"load() takes a dict, a list or a path, got {type(obj_or_path).__name__}"
        )
    path = os.fspath(obj_or_path)
    if not isinstance(path, str):
        raise FormatError("load() takes a text path, not bytes")
    session = _transcript(path, format)
    if session is not None:  # one session: its current request
        return transcripts.conversations(session, source=path)[-1]
    records = _file_records(path, format)
    first = next(records, None)
    if first is None:
        raise FormatError("holds no record", source=path)
    if next(records, None) is not None:
        raise FormatError(
            "holds more than one record; load() reads one conversation, "
            "use load_records() to read them all",
            source=path,
        )
    return first


def load_records(
    path_or_lines: Source | Iterable[str],
    *,
    format: str = "auto",
    source: str | None = None,
) -> Iterator[Conversation]:
    """Every record of a JSONL file or of an iterable of JSONL lines, lazily.

    A path ending in ``.json`` is one JSON document: a record, or an array of records.
    ``source`` names an iterable of lines in errors (default: its ``name``, e.g.
    ``"<stdin>"``, else ``"<lines>"``). Each Conversation has ``source`` and ``line`` set.
    """
    check_format(format, auto=True)
    if isinstance(path_or_lines, str | os.PathLike):
        return _file_records(os.fspath(path_or_lines), format, source=source)
    name = source or str(getattr(path_or_lines, "name", "<lines>"))
    return _jsonl_records(path_or_lines, name, format)


def parse_text(text: str, *, source: str, format: str = "auto") -> list[Conversation]:
    """Every conversation in ``text``: one JSON document (a record or an array of
    records) or JSONL. A single JSON line counts as JSONL (``line == 1``)."""
    check_format(format, auto=True)
    lines = text.split("\n")  # not splitlines(): U+2028 and friends may sit in JSON strings
    filled = [number for number, line in enumerate(lines, start=1) if line.strip()]
    if not filled:
        raise FormatError("is empty; expected a JSON document or JSON lines", source=source)
    if len(filled) > 1 and format == "auto":
        kind, _ = transcripts.sniff(iter(lines[filled[0] - 1 : filled[0]]))
        if kind is not None:
            session = transcripts.read_transcript(
                transcripts.numbered(lines), kind=kind, source=source
            )
            problem = transcripts.first_problem(session, source)
            if problem is not None:
                raise problem
            return transcripts.conversations(session, source=source)
    if len(filled) > 1 and _is_json(lines[filled[0] - 1]):
        return list(_jsonl_records(lines, source, format))
    return _document_records(text, source, format, line=filled[0] if len(filled) == 1 else None)


# --- internals --------------------------------------------------------------------------


def _file_records(path: str, format: str, *, source: str | None = None) -> Iterator[Conversation]:
    name = source or path
    session = _transcript(path, format, source=name)
    if session is not None:
        return iter(transcripts.conversations(session, source=name))
    if path.endswith(JSONL_SUFFIXES):
        return _jsonl_records(_read_lines(path, name), name, format)
    if path.endswith(".json"):
        return iter(_document_records(_read_text(path, name), name, format))
    return iter(parse_text(_read_text(path, name), source=name, format=format))


def _transcript(
    path: str, format: str, *, source: str | None = None
) -> transcripts.Transcript | None:
    """The agent transcript in a JSONL file, read whole; ``None`` when it is not one."""
    if format != "auto" or not path.endswith(JSONL_SUFFIXES):
        return None
    name = source or path
    kind, lines = transcripts.sniff(_read_lines(path, name))
    if kind is None:
        return None
    session = transcripts.read_transcript(transcripts.numbered(lines), kind=kind, source=name)
    problem = transcripts.first_problem(session, name)
    if problem is not None:
        raise problem
    return session


def _read_text(path: str, name: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise _unreadable(error, path, name) from error


def _read_lines(path: str, name: str) -> Iterator[str]:
    try:
        with open(path, encoding="utf-8") as handle:
            yield from handle
    except (OSError, UnicodeDecodeError) as error:
        raise _unreadable(error, path, name) from error


def _unreadable(error: OSError | UnicodeDecodeError, path: str, name: str) -> FormatError:
    if isinstance(error, UnicodeDecodeError):
        return FormatError(f"is not UTF-8 text ({error.reason})", source=name)
    reason = error.strerror or str(error)
    if isinstance(error, FileNotFoundError) and path.lstrip()[:1] in ("{", "["):
        reason += " (load() takes a path; use parse_text() for JSON text)"
    return FormatError(f"cannot read file: {reason}", source=name)


def _jsonl_records(lines: Iterable[str], source: str, format: str) -> Iterator[Conversation]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except RecursionError:
            raise FormatError(TOO_DEEP, source=source, line=number) from None
        except ValueError as error:
            raise FormatError(
                f"invalid JSON ({error}); expected one JSON record per line",
                source=source,
                line=number,
            ) from None
        yield Conversation.read(record, format=format, source=source, line=number)


def _document_records(
    text: str, source: str, format: str, *, line: int | None = None
) -> list[Conversation]:
    """The record (or array of records) in one JSON document; ``line`` for a record that
    is the only line of its text."""
    try:
        document = json.loads(text)
    except RecursionError:
        raise FormatError(TOO_DEEP, source=source, line=line) from None
    except ValueError as error:
        at = getattr(error, "lineno", None)
        hint = "; JSON lines belong in a .jsonl file" if "Extra data" in str(error) else ""
        raise FormatError(f"invalid JSON ({error}){hint}", source=source, line=at) from None
    if is_record_list(document):
        return [Conversation.read(record, format=format, source=source) for record in document]
    return [Conversation.read(document, format=format, source=source, line=line)]


def is_record_list(document: Any) -> bool:
    """True for an array of records (each holding a message list), not of messages."""
    return (
        isinstance(document, list)
        and bool(document)
        and all(
            isinstance(item, dict) and any(isinstance(item.get(k), list) for k in _RECORD_KEYS)
            for item in document
        )
    )


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
    except RecursionError:
        return True  # JSON, too deep to read: the caller's reader says so
    except ValueError:
        return False
    return True
