"""The proxy's settings: where requests go and how each upstream is treated.

A config file (JSON, or TOML when its name ends in ``.toml``) may route requests by path
and model to several upstreams, each with its provider and window::

    # condense-proxy.toml
    port = 8787
    log = "proxy.jsonl"

    [[upstream]]
    url = "https://api.anthropic.com"
    paths = ["/v1/messages*"]

    [[upstream]]
    url = "http://127.0.0.1:8000/v1-prefix"   # a local vLLM behind a path prefix
    models = ["qwen*", "local-*"]
    provider = "openai"
    context_window = 32768

The first upstream whose ``paths`` and ``models`` globs both match takes the request (no
globs: anything); ``--upstream`` on the command line is a catch-all after the file's
upstreams. Bad files are an ``InputError`` naming the file and the field.
"""

from __future__ import annotations

import fnmatch
import json
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from condense.exceptions import InputError
from condense.server.routing import AUTO, known_providers
from condense.tokens.families import bare_model

__all__ = ["ProxySettings", "Upstream", "load_config"]

DEFAULT_PORT = 8787


@dataclass(frozen=True, kw_only=True)
class Upstream:
    """One upstream: its base URL (may carry a path prefix), the provider its requests
    are checked against (``auto``: :func:`~condense.server.routing.choose_provider`), its
    window (``None``: per model, see ``windows``), and the globs it takes requests for."""

    url: str
    provider: str = AUTO
    context_window: int | None = None
    paths: tuple[str, ...] = ()
    models: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise InputError(f"upstream URL {self.url!r} must be http(s)://host[:port][/prefix]")
        if self.provider not in known_providers():
            names = ", ".join(known_providers())
            raise InputError(
                f"unknown provider {self.provider!r} for {self.url}; use one of {names}"
            )
        if self.context_window is not None and self.context_window <= 0:
            raise InputError(f"context_window of {self.url} must be a positive number of tokens")

    @property
    def base(self) -> str:
        """The URL without a trailing slash: request paths are appended to it."""
        return self.url.rstrip("/")

    def takes(self, path: str, model: str | None) -> bool:
        """Whether this upstream's globs match the request."""
        route = path.split("?", 1)[0]
        if self.paths and not any(fnmatch.fnmatchcase(route, p) for p in self.paths):
            return False
        if not self.models:
            return True
        if model is None:
            return False
        names = (model.lower(), bare_model(model))
        return any(fnmatch.fnmatchcase(n, p.lower()) for p in self.models for n in names)


@dataclass(frozen=True, kw_only=True)
class ProxySettings:
    """Everything the proxy app needs. ``margin`` is the share of a window kept free when
    deciding to compress; ``memory`` how many conversations are remembered (LRU) and
    ``memory_bytes`` the request bytes they may add up to (their parsed histories take a
    few times that in memory); ``recent`` how many requests the live page shows;
    ``timeout`` the seconds an upstream may stay silent."""

    upstreams: tuple[Upstream, ...]
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    log_path: str | None = None
    margin: float = 0.05
    memory: int = 256
    memory_bytes: int = 256 * 1024 * 1024
    recent: int = 200
    timeout: float = 600.0

    def __post_init__(self) -> None:
        if not self.upstreams:
            raise InputError("no upstream: pass --upstream URL or a --config file with one")
        if not 0 <= self.margin < 0.5:
            raise InputError(f"margin must be in [0, 0.5), not {self.margin}")

    def route(self, path: str, model: str | None) -> Upstream:
        """The upstream for a request: the first that takes its path and model, else the
        first whose paths take it whatever the model (a request with no model, such as
        ``GET /v1/models``), else the first."""
        for upstream in self.upstreams:
            if upstream.takes(path, model):
                return upstream
        route = path.split("?", 1)[0]
        for upstream in self.upstreams:
            if not upstream.paths or any(fnmatch.fnmatchcase(route, p) for p in upstream.paths):
                return upstream
        return self.upstreams[0]


def load_config(path: str) -> dict[str, Any]:
    """The settings in a config file, as keyword arguments for :class:`ProxySettings`
    (``upstreams`` as :class:`Upstream` objects)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as error:
        raise InputError(
            f"{path}: cannot read the config file ({error.strerror or error})"
        ) from None
    try:
        raw: Any = tomllib.loads(text) if file.suffix == ".toml" else json.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as error:
        raise InputError(
            f"{path}: not valid {'TOML' if file.suffix == '.toml' else 'JSON'} ({error})"
        ) from None
    if not isinstance(raw, dict):
        raise InputError(f"{path}: the config must be an object/table")
    known = {"upstream", "host", "port", "log", "margin", "memory", "timeout"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise InputError(
            f"{path}: unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    settings: dict[str, Any] = {}
    entries = raw.get("upstream", [])
    if not isinstance(entries, list):
        raise InputError(f"{path}: 'upstream' must be a list of tables/objects")
    settings["upstreams"] = tuple(_upstream(path, i, entry) for i, entry in enumerate(entries))
    for key, name, kind in (
        ("host", "host", str),
        ("port", "port", int),
        ("log", "log_path", str),
        ("margin", "margin", float),
        ("memory", "memory", int),
        ("timeout", "timeout", float),
    ):
        if key in raw:
            value = raw[key]
            if kind is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if not isinstance(value, kind) or isinstance(value, bool):
                raise InputError(f"{path}: '{key}' must be a {kind.__name__}")
            settings[name] = value
    return settings


def _upstream(path: str, index: int, entry: object) -> Upstream:
    where = f"{path}: upstream {index + 1}"
    if not isinstance(entry, dict):
        raise InputError(f"{where}: must be a table/object")
    unknown = sorted(set(entry) - {"url", "provider", "context_window", "paths", "models"})
    if unknown:
        raise InputError(f"{where}: unknown key(s) {', '.join(unknown)}")
    url = entry.get("url")
    if not isinstance(url, str):
        raise InputError(f"{where}: 'url' is required")
    window = entry.get("context_window")
    if window is not None and (not isinstance(window, int) or isinstance(window, bool)):
        raise InputError(f"{where}: 'context_window' must be an integer")
    try:
        return Upstream(
            url=url,
            provider=str(entry.get("provider", AUTO)),
            context_window=window,
            paths=_globs(where, entry.get("paths")),
            models=_globs(where, entry.get("models")),
        )
    except InputError as error:
        raise InputError(f"{where}: {error}") from None


def _globs(where: str, value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise InputError(f"{where}: 'paths' and 'models' must be strings or lists of strings")
