"""A method an LLM wrote: coherence checks it on a fresh Cart() for every call."""


class Cart:
    """A shopping cart: item name -> quantity."""

    def __init__(self):
        self.items: dict[str, int] = {}

    # coherence
    def add(self, item: str, qty: int = 1) -> int:
        """Add qty of item to the cart and return the total quantity in the cart.

        A quantity of 0 or less adds nothing.

        >>> Cart().add("apple", 2)
        2
        """
        self.items[item] = self.items.get(item, 0) + qty
        return sum(self.items.values())

    def total(self) -> int:
        """The total quantity in the cart."""
        return sum(self.items.values())
