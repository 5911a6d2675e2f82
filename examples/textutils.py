"""Small text helpers, as an assistant might have written them."""


# coherence
def count_vowels(s: str) -> int:
    """Count the vowels (a, e, i, o, u) in s, ignoring case.

    >>> count_vowels("hello")
    2
    """
    return sum(1 for ch in s if ch in "aeiou")


# coherence
def is_palindrome(s: str) -> bool:
    """Return True if s reads the same forwards and backwards (characters compared exactly).

    >>> is_palindrome("level")
    True
    >>> is_palindrome("ab")
    False
    """
    return s == s[::-1]
