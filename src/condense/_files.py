"""Writing a file so that readers never see half of it and its mode is an ordinary one.

A file is written as a temporary sibling and renamed over the target when complete. The
temporary file is created with mode ``0o666`` less the umask, as ``open(path, "w")``
would; a target that already exists keeps its mode. Both the CLI and the dataset engine
write their outputs this way, and name the files they write next to an output (a rejects
file, the run's stats) with :func:`sidecar`.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

JSONL_SUFFIXES = (".jsonl", ".ndjson")
"""The names of a file of JSON lines (the CLI, the loaders and the dataset engine)."""


def sidecar(output: Path, suffix: str) -> Path:
    """``OUT.rejects.jsonl`` / ``OUT.stats.json``: a file named after ``output``, next to it
    (``.jsonl`` / ``.ndjson`` / ``.json`` dropped from the name first)."""
    stem = output.name
    for known in (*JSONL_SUFFIXES, ".json"):
        stem = stem.removesuffix(known)
    return output.with_name(stem + suffix)


def temporary_sibling(target: Path, *, tag: str = "tmp") -> Path:
    """A fresh hidden name next to ``target`` (``.NAME.<random>.<tag>``), created empty
    with the umask applied. Raises ``OSError`` when the directory is not writable."""
    while True:
        path = target.with_name(f".{target.name}.{secrets.token_hex(4)}.{tag}")
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        os.close(descriptor)
        return path


def replace(temporary: Path, target: Path) -> None:
    """Rename ``temporary`` over ``target``, giving it ``target``'s mode if it exists."""
    with contextlib.suppress(FileNotFoundError):
        os.chmod(temporary, stat.S_IMODE(os.stat(target).st_mode))
    os.replace(temporary, target)


def remove(path: Path | None) -> None:
    """Delete ``path`` if it exists (cleaning up after an interrupted write)."""
    if path is not None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
