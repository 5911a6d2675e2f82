"""Probe functions for the verdicts: each case the severity rule must get right, against the
hand-written alternatives in samples.jsonl (replayed as if an LLM had written them)."""


# coherence
def is_leap(year: int) -> bool:
    """Whether year is a leap year in the Gregorian calendar.

    >>> is_leap(2024)
    True
    >>> is_leap(2023)
    False
    """
    return year % 4 == 0 and year % 100 != 0  # forgets the 400-year rule


# coherence
def median(xs: list[float]) -> float:
    """Return the median of a non-empty list.

    >>> median([3.0, 1.0, 2.0])
    2.0
    """
    s = sorted(xs)
    k = len(s) // 2
    return s[k] if len(s) % 2 else (s[k - 1] + s[k]) / 2


# coherence
def clamp(x: int, lo: int, hi: int) -> int:
    """Clamp x into [lo, hi]. Assumes lo <= hi.

    >>> clamp(5, 0, 3)
    3
    """
    return max(lo, min(x, hi))


# coherence
def halve(n: int) -> int:
    """Half of n, rounded.

    >>> halve(4)
    2
    """
    return n // 2


# coherence: accept clamp_accepted(0, 0, -1)
def clamp_accepted(x: int, lo: int, hi: int) -> int:
    """Clamp x into [lo, hi].

    >>> clamp_accepted(5, 0, 3)
    3
    """
    return max(lo, min(x, hi))


# coherence
def word_count(s: str) -> int:
    """Number of words in s, separated by any run of whitespace.

    >>> word_count("a  b")
    2
    """
    return len(s.split(" "))  # counts the empty word between two spaces


# coherence
def distance(a: int, b: int) -> int:
    """How far apart a and b are on the number line.

    >>> distance(2, 5)
    3
    """
    return abs(a - b)


# coherence
def minutes(seconds: int) -> int:
    """Whole minutes in a number of seconds.

    >>> minutes(150)
    3
    """
    return seconds // 60  # the docstring's example is what is wrong: 150 s is 2 whole minutes


# coherence
def middle(xs: list[int]) -> float:
    """The median of a non-empty list of numbers.

    >>> middle([3, 1, 2])
    2
    >>> middle([-10, 4, 6, 1000, 10, 20])
    15.0
    """
    s = sorted(xs)  # the second example is what is wrong: the median of that list is 8.0
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


# coherence
def occurrences(text: str, sub: str) -> int:
    """How many times sub occurs in text, overlapping occurrences counted.

    >>> occurrences("aaaa", "aa")
    3
    """
    if not sub:  # a convention the docstring does not settle: 6 of the 9 alternatives say len(text) + 1
        return 0
    return sum(1 for i in range(len(text) - len(sub) + 1) if text[i : i + len(sub)] == sub)


# coherence
def limit(x: int, lo: int, hi: int) -> int:
    """Clamp x into the range from lo to hi.

    lo must be less than or equal to hi.

    >>> limit(5, 0, 3)
    3
    """
    return max(lo, min(x, hi))


# coherence
def largest(xs: list[int]) -> int:
    """Return the largest element of xs.

    Raises:
        ValueError: If xs is empty.

    >>> largest([3, 9, 2])
    9
    """
    return max(xs)  # raises ValueError on [], as documented; 6 of the 9 alternatives return None
