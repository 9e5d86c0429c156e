"""Aggregate statistics of a dataset run: counts, tokens, ratios, failures, time.

The accumulator is plain data, saved in the resume state and restored from it, so a
resumed run reports the same totals as an uninterrupted one (wall time adds up the runs).
Compression ratios (tokens after / before, compressed records only) go into 1 % buckets,
so the distribution costs constant memory however large the dataset.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from condense.datasets.record import RecordResult, Status

_BUCKETS = 101
_MAX_REASONS = 50
OTHER_REASONS = "(other reasons)"


@dataclass(kw_only=True)
class Aggregate:
    """Running totals; ``add`` one result per input line."""

    lines: int = 0
    passed: int = 0
    compressed: int = 0
    still_over_limit: int = 0
    failed: int = 0
    rejected: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    estimated_records: int = 0
    """Records whose ``tokens_before`` is an estimate (the part of a summarized span the
    planner did not need to count, see ``DatasetOptions.exact_counts``)."""
    estimated_after: int = 0
    """Of those, records kept as they were (flagged), whose ``tokens_after`` is that
    estimate too."""
    turns_removed: int = 0
    ratio_buckets: list[int] = field(default_factory=lambda: [0] * _BUCKETS)
    ratio_sum: float = 0.0
    ratio_min: float | None = None
    ratio_max: float | None = None
    failures: dict[str, int] = field(default_factory=dict)
    elapsed: float = 0.0

    def add(self, result: RecordResult) -> None:
        self.lines += 1
        status = result.status
        if status is Status.REJECTED:
            self.rejected += 1
            return
        stats = result.stats or {}
        before = int(stats.get("tokens_before", result.tokens))
        after = int(stats.get("tokens_after", result.tokens))
        self.tokens_before += before
        self.tokens_after += after
        if stats and not stats.get("tokens_before_exact", True):
            self.estimated_records += 1
            self.estimated_after += status is not Status.COMPRESSED
        if status is Status.PASSED:
            self.passed += 1
        elif status is Status.COMPRESSED:
            self.compressed += 1
            self.turns_removed += int(stats.get("turns_removed", 0))
            self._ratio(after / before if before else 1.0)
        elif status is Status.OVER_LIMIT:
            self.still_over_limit += 1
        else:
            self.failed += 1
            self._failure(result.reason or "unknown")

    def _ratio(self, ratio: float) -> None:
        self.ratio_buckets[min(_BUCKETS - 1, max(0, int(ratio * 100)))] += 1
        self.ratio_sum += ratio
        self.ratio_min = ratio if self.ratio_min is None else min(self.ratio_min, ratio)
        self.ratio_max = ratio if self.ratio_max is None else max(self.ratio_max, ratio)

    def _failure(self, reason: str) -> None:
        key = reason if reason in self.failures or len(self.failures) < _MAX_REASONS else None
        key = key or OTHER_REASONS
        self.failures[key] = self.failures.get(key, 0) + 1

    # -- persistence -------------------------------------------------------------------

    def to_state(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Aggregate:
        return cls(**state)

    # -- reporting ---------------------------------------------------------------------

    def quantile(self, q: float) -> float | None:
        """The ``q`` quantile of the compression ratios (to the 1 % bucket), or None."""
        if not self.compressed:
            return None
        rank = q * (self.compressed - 1)
        seen = 0
        for bucket, count in enumerate(self.ratio_buckets):
            seen += count
            if seen > rank:  # the bucket's middle, kept within the ratios actually seen
                middle = (bucket + 0.5) / 100
                low = self.ratio_min if self.ratio_min is not None else middle
                high = self.ratio_max if self.ratio_max is not None else middle
                return min(max(middle, low), high)
        return self.ratio_max

    def report(self, *, elapsed: float) -> dict[str, Any]:
        """The JSON-ready summary; ``elapsed`` is this run's wall time (added to earlier
        runs' when resumed). Token totals are exact unless their ``*_exact`` flag says
        otherwise: then they include estimates (``records_with_estimated_before``)."""
        total_time = self.elapsed + elapsed
        saved = self.tokens_before - self.tokens_after
        records = self.lines - self.rejected
        return {
            "lines": self.lines,
            "records": records,
            "passed_under_target": self.passed,
            "compressed": self.compressed,
            "still_over_limit": self.still_over_limit,
            "failed": self.failed,
            "rejected": self.rejected,
            "tokens": {
                "before": self.tokens_before,
                "after": self.tokens_after,
                "saved": saved,
                "saved_fraction": round(saved / self.tokens_before, 4)
                if self.tokens_before
                else 0.0,
                "before_exact": not self.estimated_records,
                "after_exact": not self.estimated_after,
                "saved_exact": not self.estimated_records,
                "records_with_estimated_before": self.estimated_records,
            },
            "turns_removed": self.turns_removed,
            "ratio": {
                "min": _round(self.ratio_min),
                "p10": _round(self.quantile(0.1)),
                "p50": _round(self.quantile(0.5)),
                "p90": _round(self.quantile(0.9)),
                "max": _round(self.ratio_max),
                "mean": _round(self.ratio_sum / self.compressed if self.compressed else None),
            },
            "failures": dict(sorted(self.failures.items(), key=lambda item: -item[1])),
            "wall_time_s": round(total_time, 3),
            "records_per_s": round(self.lines / total_time, 2) if total_time > 0 else None,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
