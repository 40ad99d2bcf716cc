"""The timing protocol of benchmarks/bench_featurize.py (its numbers are quoted in the docs)."""

import collections
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import bench_featurize as bench  # noqa: E402


@pytest.fixture(autouse=True)
def _no_collection(monkeypatch):
    # the protocol collects garbage before every timed call: in a test worker whose heap holds the
    # whole suite's objects that took ~0.2 s a call (10 s a test) and times nothing here
    monkeypatch.setattr(bench.gc, "collect", lambda: 0)


def _rounds(names, repeats):
    seq = []
    calls = {name: (lambda name=name: seq.append(name)) for name in names}
    first, times = bench.interleaved(calls, repeats)
    assert set(first) == set(names)
    seq = seq[len(names) :]  # after the warm-up calls
    n_rounds = len(times[names[0]])
    assert all(len(t) == n_rounds for t in times.values()) and len(seq) == n_rounds * len(names)
    return [seq[i * len(names) : (i + 1) * len(names)] for i in range(n_rounds)]


def test_interleaved_rounds_are_even_and_every_method_once_per_round():
    names = ["plain", "buffered", "kernel", "rbf"]
    for repeats in (1, 5, 6):
        rounds = _rounds(names, repeats)
        assert len(rounds) >= repeats and len(rounds) % 2 == 0
        assert all(sorted(r) == sorted(names) for r in rounds)


def test_interleaved_order_is_balanced():
    # within the rounds, "a right before b" happens as often as "b right before a": a method that
    # pays for following another one (5-10 % measured) is not charged more than its partner
    names = ["plain", "buffered", "kernel", "rbf_width", "rbf_gemm"]
    rounds = _rounds(names, 6)
    before = collections.Counter((r[i], r[i + 1]) for r in rounds for i in range(len(r) - 1))
    assert before[("plain", "buffered")] > 0
    for a in names:
        for b in names:
            assert before[(a, b)] == before[(b, a)], (a, b, before)
    # the plain rotation alone would not be: "plain" before "buffered" in every round but one
    unbalanced = [names[k:] + names[:k] for k in range(len(names))]
    count = collections.Counter((r[i], r[i + 1]) for r in unbalanced for i in range(len(r) - 1))
    assert count[("plain", "buffered")] != count[("buffered", "plain")]


def test_device_mode_runs_on_array_api_strict(capsys):
    # the --device mode on the pure-Python reference namespace (GPUs are measured where they exist)
    pytest.importorskip("array_api_strict")
    rows = bench.main(["--device", "array_api_strict", "--quick"])
    assert {r["dtype"] for r in rows} == {"float32", "float64"}
    for r in rows:
        assert r["device"] > 0 and r["by_hand"] > 0 and r["host"] > 0
        assert r["max_abs_difference"] < (1e-5 if r["dtype"] == "float32" else 1e-12)
    assert "| dtype | d | width | spectralkit (device) |" in capsys.readouterr().out


def test_allocation_mode_selects_cases_and_thread_counts(capsys):
    # --allocation (quoted in docs/performance.md) at chosen thread counts, dims and dtypes
    rows = bench.main(
        [
            "--allocation",
            "--n",
            "600",
            "--dims",
            "256",
            "--dtypes",
            "float64",
            "--threads",
            "1",
            "--repeats",
            "2",
        ]
    )
    assert [(r["dtype"], r["d"], r["threads"]) for r in rows] == [("float64", 256, 1)]
    for name in ("recycled output (library)", "recycled, MADV_DONTNEED", "recycled, no advice"):
        assert rows[0][name] > 0
    assert "| float64 | 256 | 2048 | 1 |" in capsys.readouterr().out
