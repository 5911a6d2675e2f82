"""Trust said in words: a frequency a person reads at a glance, close to the trust it says."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coherence.engine.frequency import in_words


@pytest.mark.parametrize(
    ("trust", "said"),
    [
        (0.2, "about 1 in 5 was right"),
        (0.17, "about 1 in 6 was right"),
        (0.5, "about 1 in 2 was right"),
        (0.75, "about 3 in 4 were right"),
        (0.6, "about 3 in 5 were right"),
        (0.9, "about 9 in 10 were right"),
        (0.97, "about 97 in 100 were right"),
        (0.05, "about 1 in 20 was right"),
        (0.003, "fewer than 1 in 100 was right"),
        (0.999, "more than 99 in 100 were right"),
    ],
)
def test_trust_reads_as_a_frequency(trust, said):
    assert in_words(trust) == f"of functions with evidence like this, {said}"


@given(st.floats(0.01, 0.994))
def test_the_frequency_said_is_close_to_the_trust(p):
    k, n = map(int, re.search(r"about (\d+) in (\d+)", in_words(p)).groups())
    assert 0 < k < n <= 100
    # within 0.025, and closer near 0 and 1 where a few hundredths change the odds
    assert abs(k / n - p) <= max(0.025 * min(1.0, min(p, 1 - p) / 0.25), 0.005) + 1e-9
