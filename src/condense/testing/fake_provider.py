"""A scriptable OpenAI-compatible server on 127.0.0.1, for tests over real sockets.

Clients that cannot be patched (the ``openai`` SDK rides on its own HTTP stack) are tested
against this server instead::

    with FakeProvider(script=[Fail(429, headers={"retry-after-ms": "200"}), Reply("hi")]) as fake:
        client = OpenAI(base_url=fake.base_url, api_key="test", max_retries=0)
        ...
        assert fake.requests[-1]["model"] == "fake-model"

It serves ``POST /v1/chat/completions``, Anthropic's ``POST /v1/messages`` (and
``/v1/messages/count_tokens``) and ``POST /v1/responses``, each in its own API's shape
(plain JSON, or that API's server-sent events when the request says ``"stream": true``;
see :mod:`condense.testing.wire`), and ``GET /v1/models``. Each request is answered, in
this order, by:

1. ``require_api_key`` — a 401 unless ``Authorization: Bearer <key>`` (or Anthropic's
   ``x-api-key: <key>``) matches;
2. a 400 if the body is not a JSON object (a request of that API);
3. ``validator(body)`` — for chat requests: return ``(status, error_body)`` to reject
   the request, or ``None`` to let it through (:class:`StrictProvider` checks every API);
4. ``context_window`` — a refusal with the provider's real status and overflow text
   (OpenAI's ``context_length_exceeded`` on chat, Anthropic's "prompt is too long" on
   ``/v1/messages``, Responses' "Your input exceeds the context window" on
   ``/v1/responses``) when the prompt, counted by ``token_counter``, is larger; on chat
   and Anthropic, whose providers count the requested output against the window, also
   when prompt + ``max_tokens`` is (the output-limit text). The default counter,
   :class:`~condense.testing.counting.ProviderCount`, counts the native body its own way
   (``cl100k_base``, 4 tokens per message; not condense's count), and is what the
   answers' ``usage`` reports;
5. the next scripted step (:class:`Reply`, :class:`Fail`, :class:`Delay`,
   :class:`Truncated`, :class:`Empty`, :class:`Disconnect`), queued with ``script=`` or
   :meth:`FakeProvider.push`;
6. when the queue is empty, ``responder(body)``, which returns a text or a step.

Every request that reaches the server is recorded in :attr:`FakeProvider.log`;
:attr:`FakeProvider.requests` is the list of parsed chat-completion bodies and
:meth:`FakeProvider.bodies` those of any API.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from condense.providers import Refusals, get_provider
from condense.testing import wire
from condense.testing.counting import ProviderCount
from condense.tokens.request import requested_output

__all__ = [
    "Delay",
    "Disconnect",
    "Empty",
    "Fail",
    "FakeProvider",
    "RecordedRequest",
    "Reply",
    "Step",
    "Truncated",
    "estimate_request_tokens",
]


@dataclass(frozen=True)
class Reply:
    """A 200 answer with ``text`` and ``finish_reason``.

    A streamed reply waits ``pause`` seconds before each event after the first, sending
    the API's idle keep-alive first when ``keepalive`` is set.
    """

    text: str = "ok"
    finish_reason: str = "stop"
    headers: Mapping[str, str] = field(default_factory=dict)
    pause: float = 0.0
    keepalive: bool = False


@dataclass(frozen=True)
class Fail:
    """An error answer. ``body=None`` sends an OpenAI-style error body for ``status``."""

    status: int = 500
    body: Mapping[str, Any] | str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Delay:
    """Wait ``seconds`` (to trip a client timeout), then answer with ``then``.

    ``then=None`` answers with the responder. The step is taken from the queue when the
    request arrives, so a retry sent while this one waits gets the next step.
    """

    seconds: float
    then: Step | None = None


@dataclass(frozen=True)
class Truncated:
    """A 200 whose body stops after ``keep`` of its bytes (a stream stops without [DONE])."""

    text: str = "this answer is cut off before it ends"
    keep: float = 0.5


@dataclass(frozen=True)
class Empty:
    """A 200 with empty (or whitespace, or ``None``) content."""

    content: str | None = ""
    finish_reason: str = "stop"


@dataclass(frozen=True)
class Disconnect:
    """Close the connection without answering."""


Step = Reply | Fail | Delay | Truncated | Empty | Disconnect
Responder = Callable[[dict[str, Any]], str | Step]
Validator = Callable[[dict[str, Any]], tuple[int, dict[str, Any]] | None]
TokenCounter = Callable[[dict[str, Any]], int]
"""A counter of a Chat Completions body (other APIs are handed their history as chat
messages); a :class:`ProviderCount` is given every API's native body instead."""


@dataclass(frozen=True, kw_only=True)
class RecordedRequest:
    """One request as received. Header names are lower case; ``body`` is the bytes as
    sent (still compressed when the request says ``Content-Encoding: gzip``/``zstd``) and
    ``json`` the parsed body, ``None`` when it is not JSON."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes
    json: Any


def default_responder(body: dict[str, Any]) -> str:
    """The answer when nothing is scripted: names the number of messages received."""
    messages = body.get("messages", body.get("input"))
    count = len(messages) if isinstance(messages, list) else 0
    return f"fake summary of {count} messages"


def estimate_request_tokens(body: dict[str, Any]) -> int:
    """Characters / 4 of the request's messages (as JSON): the default token counter."""
    return len(json.dumps(body.get("messages", []), ensure_ascii=False)) // 4


def _error(
    status: int, message: str | None = None, code: str | None = None, *, api: str = "chat"
) -> dict[str, Any]:
    """An error body as ``api``'s provider writes it (``wire.error_body``), with a default
    message."""
    return wire.error_body(api, status, message or f"fake provider error {status}", code=code)


class FakeProvider:
    """An OpenAI-compatible server in a background thread; see the module docstring."""

    def __init__(
        self,
        *,
        script: Iterable[Step] = (),
        responder: Responder = default_responder,
        validator: Validator | None = None,
        context_window: int | None = None,
        token_counter: TokenCounter | None = None,
        require_api_key: str | None = None,
        models: Sequence[str] = ("fake-model",),
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.responder = responder
        self.validator = validator
        self.context_window = context_window
        self.token_counter: TokenCounter = token_counter or ProviderCount()
        self.require_api_key = require_api_key
        self.models = tuple(models)
        self.log: list[RecordedRequest] = []
        self.cut_streams = 0
        """Streams whose client went away before their last event."""
        self._script: deque[Step] = deque(script)
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._connections: set[socket.socket] = set()
        self._server = _Server((host, port), _Handler)
        self._server.provider = self
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="condense-fake-provider",
            daemon=True,
        )
        self._thread.start()

    @property
    def port(self) -> int:
        """The ephemeral port the server listens on."""
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1`` — what an OpenAI client takes as ``base_url``.

        The host is the one bound (``host=``), or 127.0.0.1 when bound to all interfaces.
        """
        host = str(self._server.server_address[0])
        return f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The parsed JSON bodies of the chat-completion requests received, oldest first."""
        return self.bodies("chat")

    def bodies(self, api: str) -> list[dict[str, Any]]:
        """The parsed JSON bodies received for ``api`` (``chat``, ``anthropic``,
        ``count_tokens`` or ``responses``), oldest first."""
        with self._lock:
            return [
                r.json
                for r in self.log
                if wire.api_for_path(r.path) == api and isinstance(r.json, dict)
            ]

    @property
    def pending(self) -> int:
        """How many scripted steps are still queued."""
        with self._lock:
            return len(self._script)

    def push(self, *steps: Step) -> None:
        """Queue more scripted steps."""
        with self._lock:
            self._script.extend(steps)

    def close(self) -> None:
        """Stop the server, cut open connections and wake any pending :class:`Delay`."""
        if self._closing.is_set():
            return
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeProvider:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- used by the handler -------------------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.log.append(request)

    def _next_step(self, body: dict[str, Any]) -> Step:
        with self._lock:
            step = self._script.popleft() if self._script else None
        return step if step is not None else self._respond(body)

    def _respond(self, body: dict[str, Any]) -> Step:
        answer = self.responder(body)
        return Reply(answer) if isinstance(answer, str) else answer

    def _count(self, api: str, body: dict[str, Any]) -> int:
        """The prompt tokens of a request of ``api``, by ``token_counter``."""
        if isinstance(self.token_counter, ProviderCount):
            return self.token_counter.count(api, body)
        if api == "chat":
            return self.token_counter(body)
        try:
            messages = wire.request_messages(api, body)
        except Exception:  # not readable as that API: count nothing
            messages = []
        return self.token_counter({"model": body.get("model"), "messages": messages})

    def _gate(self, api: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """A refusal ``(status, body)`` for this request, or ``None`` to answer it."""
        if self.validator is not None and api == "chat":
            rejection = self.validator(body)
            if rejection is not None:
                return rejection
        return self._size_gate(api, body, self.context_window)

    def _size_gate(
        self, api: str, body: dict[str, Any], window: int | None
    ) -> tuple[int, dict[str, Any]] | None:
        """The provider's refusal of a prompt over ``window`` (or, where the provider
        counts the requested output against the window, of prompt + output over it)."""
        if window is None:
            return None
        refusals = self._refusals(api)
        prompt = self._count(api, body)
        output = requested_output(body) if api != "count_tokens" else 0
        figures = {"prompt": prompt, "window": window, "output": output, "total": prompt + output}
        if prompt > window:
            reason, text = "context_overflow", refusals.overflow.format(**figures)
        elif refusals.output_limit is not None and output and prompt + output > window:
            reason, text = "output_limit", refusals.output_limit.format(**figures)
        else:
            return None
        return self._refuse_size(api, reason, text, refusals)

    def _refusals(self, api: str) -> Refusals:
        """How the provider of ``api`` refuses (its status, body shape and texts)."""
        if api in ("anthropic", "count_tokens"):
            return get_provider("anthropic").refusals
        return get_provider("responses" if api == "responses" else "openai").refusals

    def _refuse_size(
        self, api: str, reason: str, text: str, refusals: Refusals
    ) -> tuple[int, dict[str, Any]]:
        status = refusals.rejection_status
        return status, refusals.body(400, text, refusals.overflow_code, None)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # many clients connecting at once are not refused
    provider: FakeProvider

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet: clients that time out and hang up are part of the tests."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = 30  # an idle keep-alive connection is dropped after this

    def setup(self) -> None:
        super().setup()
        # headers and body go out in separate writes: without this, Nagle's algorithm and
        # the client's delayed ACK hold the body back ~40 ms
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.server.provider._lock:
            self.server.provider._connections.add(self.connection)

    def finish(self) -> None:
        with self.server.provider._lock:
            self.server.provider._connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        """No access log on stderr."""

    def do_GET(self) -> None:
        self._read_and_record()
        if self.path.split("?", 1)[0].rstrip("/") in ("/v1/models", "/models"):
            data = [
                {"id": model, "object": "model", "created": 0, "owned_by": "condense"}
                for model in self.server.provider.models
            ]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_json(404, _error(404, f"no route for GET {self.path}"))

    def do_POST(self) -> None:
        provider = self.server.provider
        request = self._read_and_record()
        api = wire.api_for_path(self.path)
        if api is None:
            self._send_json(404, _error(404, f"no route for POST {self.path}"))
            return
        expected = provider.require_api_key
        if expected is not None and expected not in (
            _bearer(self.headers.get("Authorization")),
            self.headers.get("x-api-key"),
        ):
            message = "Incorrect API key provided."
            if api in ("anthropic", "count_tokens"):
                message = "invalid x-api-key"
            self._send_json(401, _error(401, message, code="invalid_api_key", api=api))
            return
        body = request.json
        if not isinstance(body, dict):
            self._send_json(400, _error(400, "We could not parse the JSON body.", api=api))
            return
        rejection = provider._gate(api, body)
        if rejection is not None:
            self._send_json(*rejection)
            return
        if api == "count_tokens":
            self._send_json(200, {"input_tokens": provider._count(api, body)})
            return
        self._answer(api, provider._next_step(body), body)

    # -- answers -------------------------------------------------------------------------

    def _answer(self, api: str, step: Step, body: dict[str, Any]) -> None:
        provider = self.server.provider
        if isinstance(step, Delay):
            if provider._closing.wait(step.seconds):
                self.close_connection = True
                return
            self._answer(api, step.then if step.then is not None else provider._respond(body), body)
        elif isinstance(step, Fail):
            payload = _error(step.status, api=api) if step.body is None else step.body
            self._send(step.status, _encode(payload), "application/json", step.headers)
        elif isinstance(step, Disconnect):
            self.close_connection = True
        elif body.get("stream") is True:
            self._stream(api, step, body)
        else:
            self._complete(api, step, body)

    def _usage(self, api: str, body: dict[str, Any], text: str | None) -> tuple[int, int]:
        return self.server.provider._count(api, body), len(text or "") // 4

    def _complete(self, api: str, step: Reply | Truncated | Empty, body: dict[str, Any]) -> None:
        text, finish = _content(step)
        payload = _encode(wire.answer(api, body, text, finish, self._usage(api, body, text)))
        if isinstance(step, Truncated):
            payload = payload[: max(1, int(len(payload) * step.keep))]
        headers = step.headers if isinstance(step, Reply) else {}
        self._send(200, payload, "application/json", headers)

    def _stream(self, api: str, step: Reply | Truncated | Empty, body: dict[str, Any]) -> None:
        text, finish = _content(step)
        events = wire.events(api, body, text, finish, self._usage(api, body, text))
        if isinstance(step, Truncated):
            events = events[: max(1, int((len(events) - 1) * step.keep))]
        pause = step.pause if isinstance(step, Reply) else 0.0
        keepalive = wire.keepalive(api) if isinstance(step, Reply) and step.keepalive else b""
        self.close_connection = True
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            for name, value in (step.headers if isinstance(step, Reply) else {}).items():
                self.send_header(name, value)
            self.end_headers()
            for number, event in enumerate(events):
                if number and (pause or keepalive):
                    if keepalive:
                        self.wfile.write(keepalive)
                        self.wfile.flush()
                    if self.server.provider._closing.wait(pause):
                        return
                self.wfile.write(event)
                self.wfile.flush()
        except OSError:
            with self.server.provider._lock:
                self.server.provider.cut_streams += 1

    # -- plumbing ------------------------------------------------------------------------

    def _read_and_record(self) -> RecordedRequest:
        raw = self._read_body()
        try:
            parsed = (
                json.loads(_decoded(raw, self.headers.get("Content-Encoding"))) if raw else None
            )
        except (ValueError, OSError, EOFError):
            parsed = None
        request = RecordedRequest(
            method=self.command,
            path=self.path,
            headers={name.lower(): value for name, value in self.headers.items()},
            body=raw,
            json=parsed,
        )
        self.server.provider._record(request)
        return request

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send_json(self, status: int, payload: Any) -> None:
        self._send(status, _encode(payload), "application/json", {})

    def _send(
        self, status: int, payload: bytes, content_type: str, headers: Mapping[str, str]
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except OSError:
            self.close_connection = True


def _decoded(raw: bytes, coding: str | None) -> bytes:
    """A request body with its ``gzip`` or ``zstd`` coding undone (as providers accept)."""
    coding = (coding or "").strip().lower()
    if coding == "gzip":
        return gzip.decompress(raw)
    if coding == "zstd":
        import zstandard

        return bytes(zstandard.ZstdDecompressor().stream_reader(raw).read())
    return raw


def _bearer(header: str | None) -> str | None:
    if header and header.startswith("Bearer "):
        return header[len("Bearer ") :]
    return None


def _content(step: Reply | Truncated | Empty) -> tuple[str | None, str]:
    if isinstance(step, Empty):
        return step.content, step.finish_reason
    if isinstance(step, Truncated):
        return step.text, "stop"
    return step.text, step.finish_reason


def _encode(payload: Any) -> bytes:
    return payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
