"""Writing the CLI's output: stdout, or a file that appears whole or not at all.

A file is written through a temporary sibling renamed over it when complete (see
:mod:`condense._files`): it gets the mode a new file gets under the umask, or keeps the
mode of the file it replaces, and a failed or interrupted run leaves nothing behind.
Rejected lines go to a rejects file next to a file output, or to stderr
(:class:`Rejects`). A directory, a missing directory, an unwritable place or a closed
stdout is an :class:`InputError` raised before any work starts.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import IO, Any

from condense import _files
from condense.cli.inputs import Rejected
from condense.exceptions import InputError


def say(text: str) -> None:
    """Print one line to stderr (nothing when stderr is closed)."""
    if sys.stderr is not None:
        print(text, file=sys.stderr, flush=True)


def stdout_bytes() -> IO[bytes]:
    """The binary stdout; :class:`InputError` when it is closed."""
    if sys.stdout is None:
        raise InputError("stdout is closed; give an output file with -o FILE")
    sys.stdout.flush()
    return sys.stdout.buffer


class Output:
    """Where the data goes: stdout (``None`` or ``-``) or a file; see the module docstring.

    ``jsonl``: one record per line, written as it comes; else the records are held and
    written as one document (``array``: a JSON array of them) by :meth:`commit`.
    """

    def __init__(self, path: str | None) -> None:
        self.path = None if path in (None, "-") else path
        self._target: Path | None = None
        self._temporary: Path | None = None
        self._handle: IO[bytes] | None = None
        self._held: list[Any] = []
        if self.path is None:
            self._handle = stdout_bytes()
            return
        self._target = Path(os.path.realpath(self.path))  # write through a symlink
        _check_writable(self.path, self._target)
        try:
            self._temporary = _files.temporary_sibling(self._target)
            self._handle = open(self._temporary, "wb")  # noqa: SIM115 (closed in commit/discard)
        except OSError as error:
            _files.remove(self._temporary)
            raise InputError(f"{self.path}: cannot write: {error.strerror or error}") from None

    def write(self, native: Any, *, jsonl: bool) -> None:
        """Add one record's native document."""
        if not jsonl:
            self._held.append(native)
            return
        assert self._handle is not None
        self._handle.write(json.dumps(native, ensure_ascii=False).encode() + b"\n")
        if self.path is None:
            self._handle.flush()  # a reader at the other end of a pipe gets each record now

    def commit(self, *, array: bool = False) -> None:
        """Write the held document (if any) and put the file in place."""
        assert self._handle is not None
        if self._held:
            document = self._held if array else self._held[0]
            self._handle.write(json.dumps(document, ensure_ascii=False, indent=2).encode() + b"\n")
            self._held = []
        self._handle.flush()
        if self._temporary is None or self._target is None:
            return
        self._handle.close()
        _files.replace(self._temporary, self._target)
        self._temporary = None

    def discard(self) -> None:
        """Drop what was written to a file (a failed or interrupted run)."""
        if self._temporary is not None and self._handle is not None:
            self._handle.close()
        _files.remove(self._temporary)
        self._temporary = None

    def __enter__(self) -> Output:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()


def _check_writable(shown: str, target: Path) -> None:
    if target.is_dir():
        raise InputError(f"{shown}: is a directory; give the name of the file to write")
    parent = target.parent
    if not parent.is_dir():
        raise InputError(f"{shown}: cannot write: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise InputError(f"{shown}: cannot write: permission denied")


class Rejects:
    """Where rejected lines go: a JSONL file (``{"source", "line", "reason", "text"}``
    per line, as ``compress-dataset`` writes them) or stderr."""

    def __init__(self, path: str | None, output: Output, *, jsonl: bool) -> None:
        """``path`` (``--rejects``) or, for a JSONL input written to a file, the file
        next to it; a document input has no lines to reject and gets no file."""
        if path is None and output.path is not None:
            path = str(_files.sidecar(Path(output.path), ".rejects.jsonl"))
        self.count = 0
        self.file = Output(path) if jsonl and path not in (None, "-") else None

    def add(self, item: Rejected) -> None:
        self.count += 1
        if self.file is None:
            say(f"condense: {item.where()}: rejected: {item.reason}")
            return
        entry = {"source": item.source, "line": item.line, "reason": item.reason, "text": item.text}
        self.file.write(entry, jsonl=True)

    def commit(self) -> None:
        if self.file is not None:
            self.file.commit()

    def discard(self) -> None:
        if self.file is not None:
            self.file.discard()

    def describe(self) -> str:
        """``", 2 rejected (see X)"`` or ``""``."""
        if not self.count:
            return ""
        shown = f" (see {self.file.path})" if self.file is not None else ""
        return f", {self.count} rejected{shown}"
