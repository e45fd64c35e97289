"""control/throttle.py throttles per reason, not per key: distinct refusals in one burst are
each named once, repeats of one reason (whatever its numbers) are counted, and memory stays
bounded whatever the input (MAX_REASONS_PER_KEY per key, MAX_KEYS in all)."""
from __future__ import annotations

from rbd_control.control.throttle import MAX_KEYS, MAX_REASONS_PER_KEY, ThrottledWarnings

PAYLOAD_REASONS = [
    "mass must be finite and within [0, 10000] kg, got nan",
    "mass must be finite and within [0, 10000] kg, got -1.0",
    "payload inertia [[-0.01, 0.0, 0.0]] is not physically consistent",
    "link 'base_link' is welded to the fixed base",
    "link '' is not in the model",
    "com must be 3 numbers, got [0.0, 0.0, inf]",
]


def test_six_different_refusals_in_a_burst_are_each_named():
    warnings = ThrottledWarnings(period=2.0)
    lines = []
    for k, reason in enumerate(PAYLOAD_REASONS):      # six messages in 0.6 s
        warnings.warn("~/payload_refused", f"~/payload refused: {reason}")
        lines += warnings.due(0.1 * k)
    assert lines == [f"~/payload refused: {reason}" for reason in PAYLOAD_REASONS]


def test_repeats_of_one_reason_are_counted_whatever_their_numbers():
    warnings = ThrottledWarnings(period=1.0)
    lines = []
    for k in range(2000):
        warnings.warn("refused", f"mass must be >= 0, got {-1.0 - k}")
        if k % 2 == 0:
            warnings.warn("refused", "link '' is not in the model")
        lines += warnings.due(k * 0.001)
    assert lines[:2] == ["mass must be >= 0, got -1.0", "link '' is not in the model"]
    assert lines[2:] == ["mass must be >= 0, got -1001.0 (x 1000 in the last 1.0 s)",
                         "link '' is not in the model (x 500 in the last 1.0 s)"]


def test_reasons_per_key_and_keys_in_all_are_bounded():
    warnings = ThrottledWarnings(period=1.0)
    for k in range(5000):
        warnings.warn("refused", f"link 'hostile_{k}' is not in the model")
    lines = warnings.due(0.0)
    assert len(lines) == MAX_REASONS_PER_KEY + 1
    assert lines[-1].endswith("'hostile_4999' is not in the model (and other reasons)")
    for k in range(10_000):
        warnings.warn(f"key{k}", f"reason 'r{k}'")
    assert len(warnings.due(0.5)) <= MAX_KEYS + 1
    assert len(warnings._entries) <= MAX_KEYS + 1
