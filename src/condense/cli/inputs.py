"""Reading the CLI's input: one JSON document or JSONL, from a file or stdin.

A ``.json`` file is a document (one record, or an array of records), a ``.jsonl`` /
``.ndjson`` file is JSONL, anything else is JSONL when its first line is a JSON value on
its own. JSONL is read one line at a time, so memory stays flat however long the input
is; a line that is not a record becomes a :class:`Rejected` and reading goes on. A
document that cannot be read is a :class:`FormatError` (nothing in it is usable), and a
missing file or a closed stdin fails when the :class:`Input` is opened, before any work.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from condense._files import JSONL_SUFFIXES
from condense.exceptions import FormatError, InputError
from condense.formats import Conversation, transcripts
from condense.formats.loading import TOO_DEEP, is_record_list


@dataclass(frozen=True)
class Rejected:
    """A line of a JSONL input that is not a usable record, and why."""

    source: str
    line: int | None
    reason: str
    text: str

    def where(self) -> str:
        return self.source if self.line is None else f"{self.source}:{self.line}"


def where(conversation: Conversation) -> str:
    """``file:line`` (or just the file) of a conversation, for messages to the user."""
    source = conversation.source or "<input>"
    return f"{source}:{conversation.line}" if conversation.line is not None else source


def rejected(conversation: Conversation, error: InputError) -> Rejected:
    """``conversation`` refused by the library (``error`` says why) as a rejected line."""
    reason = error.reason if isinstance(error, FormatError) else str(error)
    if isinstance(error, FormatError) and error.index is not None:
        reason = f"message {error.index}: {reason}"
    text = json.dumps(conversation.dump(), ensure_ascii=False)
    return Rejected(conversation.source or "<input>", conversation.line, reason, text)


class Input:
    """The records of one input; see the module docstring. Opened (and its kind read
    off its first line) on construction, so a missing file fails before any work."""

    def __init__(self, path: str, *, format: str) -> None:
        self.path = path
        self.name = "<stdin>" if path == "-" else path
        self.format = format
        self.position = 0  # bytes read so far
        self.size = None if path == "-" else _size(path)
        self._stream = _open(path)
        self._peeked: list[bytes] = []
        self.jsonl = self._is_jsonl()
        self.array = False  # a document holding an array of records (known once read)

    def close(self) -> None:
        if self.path != "-":
            self._stream.close()

    def items(self) -> Iterator[Conversation | Rejected]:
        """Every record in order (a :class:`Rejected` for each unusable JSONL line)."""
        if self.jsonl:
            yield from self._lines()
        else:
            yield from self._document()

    # -- the two kinds ---------------------------------------------------------------

    def _is_jsonl(self) -> bool:
        if self.path.endswith(JSONL_SUFFIXES):
            return True
        if self.path.endswith(".json"):
            return False
        for raw in self._read():
            self._peeked.append(raw)
            if raw.strip():
                return _is_json(raw)
        return False

    def _lines(self) -> Iterator[Conversation | Rejected]:
        if self.format == "auto":
            kind = self._transcript_kind()
            if kind is not None:  # an agent transcript: the requests of its contexts
                yield from self._transcript(kind)
                return
        for number, raw in enumerate(self._all(), start=1):
            if not raw.strip():
                continue
            yield _record(raw, self.name, number, self.format)

    def _transcript_kind(self) -> str | None:
        """The transcript kind of the first non-blank line (peeked, not consumed)."""
        for raw in self._peeked:
            if raw.strip():
                return transcripts.sniff(iter([raw.decode("utf-8", "replace")]))[0]
        for raw in self._read():
            self._peeked.append(raw)
            if raw.strip():
                return transcripts.sniff(iter([raw.decode("utf-8", "replace")]))[0]
        return None

    def _transcript(self, kind: str) -> Iterator[Conversation | Rejected]:
        lines = list(self._all())
        session = transcripts.read_transcript(
            transcripts.numbered(lines), kind=kind, source=self.name
        )
        for problem in session.problems:
            yield Rejected(self.name, problem.line, problem.reason, problem.text)
        yield from transcripts.conversations(session, source=self.name)

    def _document(self) -> Iterator[Conversation]:
        data = b"".join(self._all())
        if not data.strip():
            raise FormatError("is empty; expected a JSON document or JSON lines", source=self.name)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise FormatError(f"is not UTF-8 text ({error.reason})", source=self.name) from None
        single_line = text.strip().count("\n") == 0
        line = 1 if single_line else None
        try:
            document = json.loads(text)
        except RecursionError:
            raise FormatError(TOO_DEEP, source=self.name, line=line) from None
        except ValueError as error:
            at = getattr(error, "lineno", None)
            hint = "; JSON lines belong in a .jsonl file" if "Extra data" in str(error) else ""
            raise FormatError(f"invalid JSON ({error}){hint}", source=self.name, line=at) from None
        self.array = is_record_list(document)
        for record in document if self.array else [document]:
            yield Conversation.read(record, format=self.format, source=self.name, line=line)

    # -- reading -----------------------------------------------------------------------

    def _all(self) -> Iterator[bytes]:
        while self._peeked:
            raw = self._peeked.pop(0)
            self.position += len(raw)
            yield raw
        for raw in self._read():
            self.position += len(raw)
            yield raw

    def _read(self) -> Iterator[bytes]:
        try:
            for raw in self._stream:  # noqa: UP028 (yield from would close stdin with us)
                yield raw
        except OSError as error:
            raise FormatError(f"cannot read: {error.strerror or error}", source=self.name) from None


def _record(raw: bytes, source: str, number: int, format: str) -> Conversation | Rejected:
    text = raw.decode("utf-8", "replace").rstrip("\r\n")
    try:
        record = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        return Rejected(source, number, f"not UTF-8 text ({error.reason})", text)
    except RecursionError:
        return Rejected(source, number, TOO_DEEP, text)
    except ValueError as error:
        return Rejected(source, number, f"invalid JSON ({error})", text)
    try:
        return Conversation.read(record, format=format, source=source, line=number)
    except FormatError as error:
        reason = error.reason if error.index is None else f"message {error.index}: {error.reason}"
        return Rejected(source, number, reason, text)


def _is_json(raw: bytes) -> bool:
    try:
        json.loads(raw)
    except RecursionError:
        return True  # JSON, too deep to read: reported as a rejected line
    except ValueError:
        return False
    return True


def _open(path: str) -> IO[bytes]:
    if path == "-":
        if sys.stdin is None:
            raise InputError("stdin is closed; give an input file instead of -")
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise FormatError("no such file", source=path) from None
    except IsADirectoryError:
        raise FormatError("is a directory, expected a JSON or JSONL file", source=path) from None
    except OSError as error:
        raise FormatError(f"cannot read: {error.strerror or error}", source=path) from None


def _size(path: str) -> int | None:
    try:
        return os.path.getsize(path)
    except OSError:
        return None
