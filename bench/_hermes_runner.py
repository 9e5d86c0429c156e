"""Times hermes-agent's ContextCompressor on sessions; runs inside its own venv.

Usage: python _hermes_runner.py SESSIONS.json BUDGET  → prints one JSON line per session.
Its LLM call is replaced by an instant stub, so only its own work is timed (CPU time, as
bench_compress.py times condense).
"""

from __future__ import annotations

import json
import sys
import time

from agent.context_compressor import ContextCompressor  # type: ignore[import-not-found]


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as handle:
        sessions = json.load(handle)
    budget = int(sys.argv[2])
    for name, messages in sessions.items():
        extra = messages.pop() if isinstance(messages[-1], list) else None
        compressor = ContextCompressor(
            model="gpt-4o",
            config_context_length=budget * 2,
            threshold_percent=0.5,
            quiet_mode=True,
        )
        compressor._generate_summary = lambda *a, **k: "stub summary"
        started = time.process_time()
        output = compressor.compress(messages, force=True)
        elapsed = time.process_time() - started
        row = {"name": name, "seconds": elapsed, "messages_out": len(output)}
        if extra is not None:
            grown = [*output, *extra]
            started = time.process_time()
            compressor.compress(grown, force=True)
            row["incremental_seconds"] = time.process_time() - started
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
