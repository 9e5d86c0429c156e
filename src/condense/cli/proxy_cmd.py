"""``condense proxy``: run the proxy in front of an upstream, or print how to use it.

The base URL goes to stdout as soon as the port is bound; one JSON line per request goes
to stderr (or ``--log FILE``). It runs until Ctrl-C or SIGTERM, then exits 0. Settings:
flag > ``CONDENSE_*`` environment variable > ``--config`` file > default.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import signal
import socket
import sys
from typing import Any

from condense.exceptions import InputError

_TOOLS = ("claude", "codex", "hermes", "openai")
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "proxy",
        help="put condense in front of any agent: a local proxy for OpenAI and Anthropic APIs",
        description="Serve /v1/chat/completions, /v1/responses and /v1/messages on loopback: "
        "each history is validated for the upstream's provider, repaired where the provider "
        "would refuse it, compressed when over the model's window, and forwarded (unchanged "
        "requests byte-identical); refusals before the first byte are repaired and retried "
        "once. Live page at /condense/.",
    )
    parser.add_argument(
        "--upstream",
        default=None,
        metavar="URL",
        help="where requests go, with any path prefix (env CONDENSE_UPSTREAM), "
        "e.g. https://api.anthropic.com",
    )
    parser.add_argument("--host", default=None, help="address to bind (default: 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=None, help="port to bind (default: 8787; 0: any free port)"
    )
    parser.add_argument(
        "--provider",
        default=None,
        metavar="NAME",
        help="provider rules for the --upstream: auto (default: from the path, the model and "
        "the host) or a profile name",
    )
    parser.add_argument(
        "--context-window",
        type=int,
        default=None,
        metavar="TOKENS",
        help="the --upstream's window in tokens (default: per model, built-in table or learned "
        "from the provider's overflow errors)",
    )
    parser.add_argument("--config", default=None, metavar="FILE", help="JSON or TOML settings")
    parser.add_argument(
        "--log", default=None, metavar="FILE", help="append the JSON request log here, not stderr"
    )
    parser.add_argument(
        "--print-env",
        choices=_TOOLS,
        default=None,
        metavar="TOOL",
        help=f"print the settings that point a tool at this proxy and exit ({', '.join(_TOOLS)})",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    settings = _settings(args)
    if args.print_env:
        print(print_env(args.print_env, _public_url(settings.host, settings.port)))
        return 0
    try:
        import uvicorn

        from condense.server.app import create_app
    except ImportError as error:
        raise InputError(
            f"condense proxy needs the proxy extra ({error.name} is missing): "
            "pip install 'condense[proxy]'"
        ) from None
    sock = _bind(settings.host, settings.port)
    url = _public_url(settings.host, sock.getsockname()[1])
    if settings.host not in _LOOPBACK:
        print(
            f"condense: warning: listening on {settings.host}, not loopback: anyone who can "
            "reach it can use your upstream credentials' quota",
            file=sys.stderr,
        )
    print(url, flush=True)
    targets = ", ".join(upstream.base for upstream in settings.upstreams)
    print(f"condense: proxy at {url} → {targets}; live page {url}/condense/", file=sys.stderr)
    config = uvicorn.Config(
        create_app(settings),
        log_level="error",
        access_log=False,
        ws="none",
        lifespan="on",
        timeout_keep_alive=75,
        timeout_graceful_shutdown=5,
        backlog=2048,
    )
    # Parsed request bodies are large trees without cycles: collect cyclic garbage less
    # often, and never rescan what was loaded at start-up (fewer pauses in the p99).
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
    # uvicorn shuts down gracefully on SIGINT/SIGTERM and then re-raises the signal with
    # the handlers it found; these make a stop (also one before uvicorn is up) an exit 0.
    for name in ("SIGINT", "SIGTERM"):
        signal.signal(getattr(signal, name), _stop)
    with contextlib.suppress(SystemExit):
        uvicorn.Server(config).run(sockets=[sock])
    print("condense: proxy stopped", file=sys.stderr)
    return 0


def _stop(*_: object) -> None:
    raise SystemExit(0)


def print_env(tool: str, url: str) -> str:
    """The settings that point ``tool`` at the proxy at ``url``, as shell lines (alternatives
    as comments), so ``eval "$(condense proxy --print-env TOOL)"`` applies them."""
    if tool == "claude":
        return f"export ANTHROPIC_BASE_URL={url}"
    lines = [f"export OPENAI_BASE_URL={url}/v1"]
    if tool == "codex":
        lines += [
            "# or a provider of its own in ~/.codex/config.toml:",
            '#   model_provider = "condense"',
            "#   [model_providers.condense]",
            '#   name = "condense proxy"',
            f'#   base_url = "{url}/v1"',
            '#   env_key = "OPENAI_API_KEY"',
            '#   wire_api = "responses"',
            "#   supports_websockets = false",
        ]
    elif tool == "hermes":
        lines += ["# or in ~/.hermes/config.yaml, under model:", f"#   base_url: {url}/v1"]
    return "\n".join(lines)


def _settings(args: argparse.Namespace) -> Any:
    from condense.server.config import DEFAULT_PORT, ProxySettings, Upstream, load_config

    file: dict[str, Any] = load_config(args.config) if args.config else {}
    upstreams = list(file.pop("upstreams", ()))
    url = args.upstream or os.environ.get("CONDENSE_UPSTREAM")
    if url:
        upstreams.append(
            Upstream(
                url=url,
                provider=args.provider or "auto",
                context_window=_positive(args.context_window, "--context-window"),
            )
        )
    elif args.provider or args.context_window:
        raise InputError("--provider and --context-window apply to --upstream; none was given")
    if not upstreams and args.print_env:
        upstreams.append(Upstream(url="https://api.openai.com"))
    port = args.port if args.port is not None else _env_int("CONDENSE_PROXY_PORT")
    host = args.host or os.environ.get("CONDENSE_PROXY_HOST")
    settings = {
        **file,
        "upstreams": tuple(upstreams),
        **({"host": host} if host else {}),
        **({"port": port} if port is not None else {}),
        **({"log_path": args.log} if args.log else {}),
    }
    settings.setdefault("port", DEFAULT_PORT)
    if not 0 <= settings["port"] <= 65535:
        raise InputError(f"--port must be 0-65535, not {settings['port']}")
    return ProxySettings(**settings)


def _positive(value: int | None, flag: str) -> int | None:
    if value is not None and value <= 0:
        raise InputError(f"{flag} must be a positive number of tokens, not {value}")
    return value


def _env_int(name: str) -> int | None:
    text = os.environ.get(name)
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise InputError(f"{name}={text!r} is not a number") from None


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise InputError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    sock.set_inheritable(True)
    return sock


def _public_url(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"
