"""Starting the real ``condense proxy`` process on 127.0.0.1 for tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2

from cli_support import HANG_GUARD


@dataclass
class RunningProxy:
    """A proxy process: its base URL and, once stopped, what it wrote to stderr."""

    url: str
    process: subprocess.Popen[str]
    log_path: Path

    def log(self) -> list[dict[str, Any]]:
        """The JSON request log so far, oldest first."""
        if not self.log_path.exists():
            return []
        lines = self.log_path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def wait_for_log(self, count: int) -> list[dict[str, Any]]:
        """The log once it holds ``count`` records (records are written when a reply ends);
        what it holds after :data:`HANG_GUARD` seconds otherwise."""
        deadline = time.monotonic() + HANG_GUARD
        while True:
            records = self.log()
            if len(records) >= count or time.monotonic() > deadline:
                return records
            time.sleep(0.02)


@contextmanager
def running_proxy(
    args: Sequence[str], tmp: Path, *, config: dict[str, Any] | None = None
) -> Iterator[RunningProxy]:
    """``condense proxy ARGS --port 0`` as a subprocess; stopped (SIGTERM) afterwards."""
    log_path = tmp / "proxy-log.jsonl"
    command = [sys.executable, "-m", "condense", "proxy", "--port", "0", "--log", str(log_path)]
    if config is not None:
        config_path = tmp / "proxy.json"
        config_path.write_text(json.dumps(config), encoding="utf-8")
        command += ["--config", str(config_path)]
    process = subprocess.Popen(
        [*command, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        if not url:
            raise RuntimeError(
                f"the proxy did not start: {process.communicate(timeout=HANG_GUARD)[1]}"
            )
        _wait_healthy(url)
        yield RunningProxy(url=url, process=process, log_path=log_path)
    finally:
        process.terminate()
        try:
            process.communicate(timeout=HANG_GUARD)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


def _wait_healthy(url: str) -> None:
    deadline = time.monotonic() + HANG_GUARD  # a loaded machine starts it slowly
    while True:
        try:
            if httpx2.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx2.HTTPError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.02)


def strings_in(value: Any) -> Iterator[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)
