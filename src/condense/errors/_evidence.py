"""Gather what an error says: HTTP status, provider codes, messages, headers, numbers.

Errors arrive as SDK exceptions (openai, anthropic), httpx/httpx2 responses and errors,
``(status, body)`` tuples, raw bodies or bare strings. Everything is duck-typed: neither
anthropic nor httpx is imported. Bodies are walked recursively, and any string that holds
JSON (or a Python ``repr`` of a dict, as SDK exception messages do) is decoded and walked
one level deeper: OpenRouter's ``error.metadata.raw``, Gemini errors relayed inside
another error's ``message``, ``"Error code: 400 - {...}"`` strings. The deepest message
wins, because it is the upstream provider's own words.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

_MAX_DEPTH = 6
_MAX_NODES = 400
_MAX_TEXT = 20_000

_MESSAGE_KEYS = (
    "message",
    "msg",
    "error_msg",
    "error_message",
    "errorMessage",
    "status_msg",
    "Message",
    "detail",
    "error_description",
)
# key, rank: ``code`` names the error more precisely than ``type``, ``type`` than ``status``
_CODE_KEYS: tuple[tuple[str, int], ...] = (
    ("code", 0),
    ("error_code", 0),
    ("Code", 0),
    ("type", 1),
    ("__type", 1),
    ("status", 2),
)
_SEARCH_ONLY_KEYS = ("param", "loc", "reason", "errors")
_HTTP_CODE_KEYS = ("http_code", "httpCode", "status_code", "HTTPStatusCode")
_IGNORED_CODES = frozenset({"", "error", "none", "null", "object"})

_TIMEOUT_NAMES = ("timeout", "deadlineexceeded")
_CONNECTION_NAMES = (
    "connecterror",
    "connectionerror",
    "networkerror",
    "readerror",
    "writeerror",
    "closeerror",
    "protocolerror",
    "proxyerror",
    "transporterror",
    "serverdisconnected",
    "clientconnector",
)

# anthropic and openai name their status errors alike; a class name stands in for a status
# when an exception (a test double, a re-raised copy) carries none.
_STATUS_BY_CLASS = {
    "badrequesterror": 400,
    "authenticationerror": 401,
    "permissiondeniederror": 403,
    "notfounderror": 404,
    "conflicterror": 409,
    "requesttoolargeerror": 413,
    "unprocessableentityerror": 422,
    "ratelimiterror": 429,
    "internalservererror": 500,
    "serviceunavailableerror": 503,
    "overloadederror": 529,
}

_STATUS_IN_TEXT = (
    re.compile(r"\berror code:?\s*(\d{3})\b", re.IGNORECASE),
    re.compile(r"\bstatus(?:[ _]code)?[:=]?\s*(\d{3})\b", re.IGNORECASE),
    re.compile(r"\bhttp(?:/\d(?:\.\d)?)?[ _:]*(\d{3})\b", re.IGNORECASE),
    # "404 …", "API Error: 404 …", "NotFoundError: 404 <html>…" (an SDK's class name first)
    re.compile(r"^\W*(?:api error\W*|[\w.]*error\W*)?(\d{3})(?=[\s:{(<\-]|$)", re.IGNORECASE),
)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


@dataclass
class Evidence:
    """Everything ``classify`` reads, flattened out of whatever the caller passed."""

    status: int | None = None
    body_status: int | None = None
    messages: list[tuple[int, str]] = field(default_factory=list)
    codes: list[tuple[int, int, str]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    numbers: dict[str, int] = field(default_factory=dict)
    retry_delay: str | None = None
    minimax_code: int | None = None
    kinds: set[str] = field(default_factory=set)
    unreadable_body: bool = False
    nodes: int = 0

    @property
    def effective_status(self) -> int | None:
        """The transport status, unless it is a 2xx carrying an error body."""
        if self.status is not None and not (200 <= self.status < 300 and self.body_status):
            return self.status
        return self.body_status if self.body_status is not None else self.status

    def message(self) -> str:
        """The deepest message: the upstream provider's own words."""
        if not self.messages:
            return ""
        deepest = max(depth for depth, _ in self.messages)
        return next(text for depth, text in self.messages if depth == deepest)

    def provider_code(self) -> str | None:
        """The most specific code: deepest first, then ``code`` over ``type`` over ``status``."""
        if not self.codes:
            return None
        order = sorted(
            range(len(self.codes)), key=lambda i: (-self.codes[i][0], self.codes[i][1], i)
        )
        return self.codes[order[0]][2]

    def haystack(self) -> str:
        """All text seen, lower-cased, for the keyword families."""
        parts = [text for _, text in self.messages] + [code for _, _, code in self.codes]
        return "\n".join(parts + self.texts).lower()[:_MAX_TEXT]


def gather(error: object) -> Evidence:
    """Read ``error``, whatever its shape, into :class:`Evidence`."""
    ev = Evidence()
    if isinstance(error, BaseException):
        _from_exception(error, ev)
    elif isinstance(error, tuple) and 2 <= len(error) <= 3:
        ev.status = _as_status(error[0])
        if len(error) == 3:
            _read_headers(error[2], ev)
        _read_body(error[1], ev)
    elif isinstance(error, str | bytes | bytearray):
        text = _decode(error)
        ev.status = _status_from_text(text)
        _text_value(text, ev, 0)
    elif isinstance(error, Mapping | list):
        _walk(error, ev, 0)
    elif _looks_like_response(error):
        _from_response(error, ev)
    elif error is not None:
        _text_value(str(error), ev, 0)
    return ev


def _from_exception(exc: BaseException, ev: Evidence) -> None:
    chain = list(_exception_chain(exc))
    for link in chain:
        ev.kinds.update(_kinds(link))
    source = next((link for link in chain if _has_api_attributes(link)), exc)
    status = _as_status(getattr(source, "status_code", None))
    if status is None:
        status = _as_status(getattr(source, "status", None))
    response = getattr(source, "response", None)
    if isinstance(response, Mapping):  # botocore ClientError
        _walk(response, ev, 0)
        metadata = response.get("ResponseMetadata")
        if status is None and isinstance(metadata, Mapping):
            status = _as_status(metadata.get("HTTPStatusCode"))
    elif response is not None:
        if status is None:
            status = _as_status(getattr(response, "status_code", None))
        _read_headers(getattr(response, "headers", None), ev)
    _read_headers(getattr(source, "headers", None), ev)
    ev.status = status
    body = getattr(source, "body", None)
    if body is not None:
        _read_body(body, ev)
    if response is not None and not isinstance(response, Mapping):
        payload = _response_body(response)
        if payload:
            _read_body(payload, ev, transport=body is None)
    for link in chain:
        text = str(link).strip()
        if text:
            _text_value(text, ev, -1)
    if ev.status is None and not ev.kinds:
        ev.status = _status_from_text(str(exc)) or _status_from_class(source)


def _from_response(response: object, ev: Evidence) -> None:
    ev.status = _as_status(getattr(response, "status_code", None))
    _read_headers(getattr(response, "headers", None), ev)
    _read_body(_response_body(response), ev, transport=True)


def _read_body(body: object, ev: Evidence, *, transport: bool = True) -> None:
    if isinstance(body, str | bytes | bytearray):
        text = _decode(body).strip()
        if transport and (not text or (text[:1] in "{[" and _load_json(text) is None)):
            ev.unreadable_body = True  # empty, or JSON cut off mid-way
        if text:
            _text_value(text, ev, 0)
    elif body is not None:
        _walk(body, ev, 0)


def _walk(node: object, ev: Evidence, depth: int) -> None:
    ev.nodes += 1
    if ev.nodes > _MAX_NODES or depth > _MAX_DEPTH:
        return
    if isinstance(node, str):
        _text_value(node, ev, depth)
    elif isinstance(node, list | tuple):
        for item in node[:50]:
            _walk(item, ev, depth)
    elif isinstance(node, Mapping):
        _walk_mapping(node, ev, depth)


def _walk_mapping(node: Mapping[object, object], ev: Evidence, depth: int) -> None:
    handled: set[object] = set()
    for key in _MESSAGE_KEYS:
        value = node.get(key)
        if isinstance(value, str):
            _text_value(value, ev, depth)
            handled.add(key)
    for key, rank in _CODE_KEYS:
        if key in node:
            _record_code(node[key], ev, depth, rank)
            handled.add(key)
    for key in _HTTP_CODE_KEYS:
        status = _as_status(node.get(key))
        if status is not None and ev.body_status is None:
            ev.body_status = status
    for key in _SEARCH_ONLY_KEYS:
        if key in node:
            ev.texts.append(str(node[key])[:2000])
            handled.add(key)
    for key in ("n_prompt_tokens", "n_ctx"):
        value = node.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            ev.numbers.setdefault(key, value)
    delay = node.get("retryDelay")
    if isinstance(delay, str):
        ev.retry_delay = delay
    base = node.get("base_resp")
    if isinstance(base, Mapping):
        code = base.get("status_code")
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            ev.minimax_code = code
            _record_code(code, ev, depth, 0)
        if isinstance(base.get("status_msg"), str) and code != 0:
            _text_value(str(base["status_msg"]), ev, depth)
        handled.add("base_resp")
    metadata = node.get("metadata")
    if isinstance(metadata, Mapping) and "raw" in metadata:
        raw = metadata["raw"]
        if isinstance(raw, str):
            _text_value(raw, ev, depth + 1)
        else:
            _walk(raw, ev, depth + 1)
    handled.add("metadata")
    for name, value in node.items():
        if name not in handled and isinstance(value, Mapping | list | tuple):
            _walk(value, ev, depth)
        elif name == "error" and isinstance(value, str):
            _text_value(value, ev, depth)


def _record_code(value: object, ev: Evidence, depth: int, rank: int) -> None:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int):
        if 100 <= value <= 599:
            if ev.body_status is None:
                ev.body_status = value
            return
        ev.codes.append((depth, rank, str(value)))
        return
    if isinstance(value, str):
        text = value.strip()
        if text.isdigit() and 100 <= int(text) <= 599 and rank == 0:
            if ev.body_status is None:
                ev.body_status = int(text)
            return
        if text.lower() not in _IGNORED_CODES and len(text) <= 80:
            ev.codes.append((depth, rank, text))


def _text_value(text: str, ev: Evidence, depth: int) -> None:
    """Record a string; decode any JSON it holds and walk that one level deeper."""
    text = text.strip()
    if not text:
        return
    ev.texts.append(text[:_MAX_TEXT])
    if text[:1] == "<" and re.search(r"<(?:!doctype|html|title|head|body)", text, re.I):
        text = _strip_html(text)
    decoded = _embedded(text)
    if decoded is None:
        ev.messages.append((depth, text))
        return
    _, end, value = decoded
    if not _walk_yields(value, ev, depth + 1):
        ev.messages.append((depth, text))
    rest = text[end:].strip()
    if rest and len(rest) > 3:
        ev.texts.append(rest)


def _walk_yields(value: object, ev: Evidence, depth: int) -> bool:
    before = len(ev.messages) + len(ev.codes)
    _walk(value, ev, depth)
    return len(ev.messages) + len(ev.codes) > before


def _embedded(text: str) -> tuple[int, int, object] | None:
    """The first JSON (or Python-literal) object or array inside ``text``."""
    whole = _load_json(text)
    if _is_container(whole):
        return 0, len(text), whole
    tried = 0
    for match in re.finditer(r"[\[{]", text):
        tried += 1
        if tried > 25:
            break
        start = match.start()
        end = _balanced_end(text, start)
        if end is None:
            continue
        chunk = text[start:end]
        value = _load_json(chunk)
        if value is None and "'" in chunk:
            value = _load_literal(chunk)
        if _is_container(value):
            return start, end, value
    if "\\'" in text:  # the repr of an exception whose message is itself a repr
        return _embedded(text.replace("\\'", "'"))
    return None


def _is_container(value: object) -> bool:
    """A decoded object, or a list holding one (Gemini wraps its error in a list)."""
    if isinstance(value, Mapping):
        return True
    return isinstance(value, list) and any(isinstance(item, Mapping) for item in value)


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the bracket that closes ``text[start]``, honouring quotes."""
    stack: list[str] = []
    quote = ""
    escaped = False
    for i in range(start, min(len(text), start + _MAX_TEXT)):
        ch = text[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            stack.append("]" if ch == "[" else "}")
        elif ch in "]}":
            if not stack or stack.pop() != ch:
                return None
            if not stack:
                return i + 1
    return None


def _load_json(text: str) -> object | None:
    try:
        value: object = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value


def _load_literal(text: str) -> object | None:
    try:
        value: object = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return value


def _strip_html(text: str) -> str:
    title = _TITLE.search(text)
    if title and title.group(1).strip():
        return " ".join(title.group(1).split())
    return " ".join(_TAG.sub(" ", text).split())[:500]


def _exception_chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen and len(seen) < 6:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__


def _kinds(exc: BaseException) -> set[str]:
    kinds: set[str] = set()
    if isinstance(exc, json.JSONDecodeError):
        kinds.add("json_decode")
    if isinstance(exc, TimeoutError):
        kinds.add("timeout")
    elif isinstance(exc, OSError):
        kinds.add("connection")
    for cls in type(exc).__mro__:
        name = cls.__name__.lower()
        if any(part in name for part in _TIMEOUT_NAMES):
            kinds.add("timeout")
        elif any(part in name for part in _CONNECTION_NAMES):
            kinds.add("connection")
    return kinds


def _has_api_attributes(exc: BaseException) -> bool:
    return any(getattr(exc, name, None) is not None for name in ("status_code", "response", "body"))


def _looks_like_response(obj: object) -> bool:
    return hasattr(obj, "status_code") and hasattr(obj, "headers")


def _response_body(response: object) -> object:
    """An httpx/requests-like response's body: ``.text``, else ``.json()``, else ``.content``."""
    text = _attribute(response, "text")
    if isinstance(text, str | bytes | bytearray) and text:
        return _decode(text)
    parse = _attribute(response, "json")
    if callable(parse) and not inspect.iscoroutinefunction(parse):
        try:
            value: object = parse()
        except Exception:  # not JSON, or not read yet
            value = None
        if value is not None:
            return value
    content = _attribute(response, "content")
    if isinstance(content, bytes | bytearray):
        return _decode(content)
    return ""


def _attribute(obj: object, name: str) -> object:
    try:
        return getattr(obj, name, None)
    except Exception:  # an unread streaming response refuses to show its body
        return None


def _status_from_class(exc: BaseException) -> int | None:
    for cls in type(exc).__mro__:
        status = _STATUS_BY_CLASS.get(cls.__name__.lower())
        if status is not None:
            return status
    return None


def _read_headers(headers: object, ev: Evidence) -> None:
    items = getattr(headers, "items", None)
    if not callable(items):
        if isinstance(headers, list | tuple):
            pairs = [pair for pair in headers if isinstance(pair, list | tuple) and len(pair) == 2]
        else:
            return
    else:
        try:
            pairs = list(items())
        except Exception:  # a broken headers object should not break classification
            return
    for key, value in pairs:
        ev.headers[_decode(key).lower()] = _decode(value)


def _status_from_text(text: str) -> int | None:
    head = text.strip()[:300]
    for pattern in _STATUS_IN_TEXT:
        match = pattern.search(head)
        if match:
            status = int(match.group(1))
            if 100 <= status <= 599:
                return status
    return None


def _as_status(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 100 <= value <= 599 else None
    if isinstance(value, str) and value.strip().isdigit():
        return _as_status(int(value.strip()))
    return None


def _decode(value: object) -> str:
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="replace")
    return str(value)
