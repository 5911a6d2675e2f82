"""Methods of classes that can be built without arguments: found, specified, sampled, run on a
fresh object per call (in the real sandbox), and explained as ``Owner().method(...)``."""

from __future__ import annotations

import json
import textwrap

import pytest

from coherence.engine.check import Checker
from coherence.engine.config import CheckConfig
from coherence.engine.execution import sandbox as sb
from coherence.engine.execution.executor import Executor
from coherence.engine.execution.program import ExecutionLimits, ModuleContext, Program
from coherence.engine.inputs.seeds import doctest_seeds
from coherence.engine.markers import find_targets
from coherence.engine.sampling.prompt import build_messages, defines_function, extract_program

CART = textwrap.dedent(
    '''
    from dataclasses import dataclass
    from enum import Enum


    class Cart:
        """A shopping cart: item name -> quantity."""

        def __init__(self):
            self.items = {}

        # coherence
        def add(self, item: str, qty: int = 1) -> int:
            """Add qty of item (qty <= 0 adds nothing) and return the total quantity.

            >>> Cart().add("apple", 2)
            2
            >>> c = Cart()
            >>> c.add("pear")
            1
            """
            self.items[item] = self.items.get(item, 0) + qty
            return sum(self.items.values())

        def total(self) -> int:
            return sum(self.items.values())

        @staticmethod  # coherence
        def clamp(x: int, lo: int, hi: int) -> int:
            """x limited to [lo, hi]."""
            return max(lo, min(x, hi))

        @classmethod  # coherence
        def of(cls, item: str) -> "Cart":
            """A cart holding one item."""
            c = cls()
            c.items[item] = 1
            return c

        @property  # coherence
        def empty(self) -> bool:
            return not self.items

        # coherence
        def __init_subclass__(cls):
            pass


    class Sized:
        def __init__(self, width: int, height: int = 1):
            self.width = width

        # coherence
        def area(self) -> int:
            return self.width


    @dataclass
    class Pt:
        x: int = 0
        y: int = 0

        # coherence
        def shifted(self, dx: int) -> "Pt":
            return Pt(self.x + dx, self.y)


    class Color(Enum):
        RED = 1

        # coherence
        def dim(self) -> int:
            return self.value
    '''
)


def targets():
    return {t.qualname: t for t in find_targets(CART, "cart.py")}


def test_methods_are_found_with_their_kind_and_receiver_left_out_of_the_inputs():
    found = targets()
    add = found["Cart.add"]
    assert add.skip_reason is None
    assert (add.spec.owner, add.spec.method_kind) == ("Cart", "instance")
    assert [p.name for p in add.spec.params] == ["item", "qty"]  # no self
    assert add.spec.signature.startswith("(self, item: str")  # the LLM sees it as written
    assert add.spec.callee == "Cart().add"
    clamp, of = found["Cart.clamp"], found["Cart.of"]
    assert (clamp.spec.method_kind, [p.name for p in clamp.spec.params], clamp.spec.callee) == (
        "static",
        ["x", "lo", "hi"],
        "Cart.clamp",
    )
    assert (of.spec.method_kind, [p.name for p in of.spec.params], of.spec.callee) == ("class", ["item"], "Cart.of")
    assert found["Pt.shifted"].skip_reason is None  # a dataclass whose fields all have defaults


@pytest.mark.parametrize(
    "qualname, words",
    [
        ("Cart.empty", ("properties",)),
        ("Cart.__init_subclass__", ("object's life",)),
        ("Sized.area", ("Sized()", "width", "without any")),
        ("Color.dim", ("enum",)),
    ],
)
def test_methods_that_cannot_be_checked_say_why(qualname, words):
    reason = targets()[qualname].skip_reason
    assert reason and all(w in reason for w in words), reason


def test_method_spec_shows_the_state_but_never_the_body():
    spec = targets()["Cart.add"].spec
    assert "self.items = {}" in spec.context  # __init__ is the object's specification
    assert "self.items.get(item, 0) + qty" not in spec.context + spec.header()
    assert "def total(self) -> int:" in spec.context and "sum(self.items" not in spec.context
    prompt = build_messages(spec)[1]["content"]
    assert "method `add` of class `Cart`" in prompt and "class Cart:\n    ...\n\n    def add(self, item: str" in prompt
    # methods and functions of the same name are different specs (different cached samples)
    other = find_targets("# coherence\ndef add(self, item: str, qty: int = 1) -> int:\n    return 0\n", "m.py")[0].spec
    assert other.spec_hash != spec.spec_hash


def test_doctest_calls_on_the_class_seed_the_inputs():
    t = targets()["Cart.add"]
    calls = [i.call(t.spec.callee) for i in doctest_seeds(t.spec, CART)]
    assert calls == ["Cart().add('apple', 2)", "Cart().add('pear')"]


def test_replies_may_write_the_method_alone_or_inside_the_class():
    alone = "```python\ndef add(self, item, qty=1):\n    return 0\n\nprint(Cart().add('x'))\nCart().add('y')\n```"
    s = extract_program(alone, "add", "Cart")
    assert s.ok and "print" not in s.code and "Cart().add('y')" not in s.code, s
    whole = "```python\nclass Cart:\n    def add(self, item, qty=1):\n        return self._n()\n    def _n(self):\n        return 0\n```"
    code = extract_program(whole, "add", "Cart").code
    assert code and "def _n(self)" in code
    # the sample cache re-validates cached code the same way
    assert defines_function(code, "add", "Cart") and not defines_function(code, "add")
    assert extract_program(whole.replace("class Cart", "class Basket"), "add", "Cart").status == "missing_function"


# -- the real sandbox ------------------------------------------------------------------------

MODULE = ModuleContext(source=CART, filename="/workspace/cart.py", module_name="cart")
INPUTS = ["(('apple', 2), {})", "(('pear', 0), {})", "(('fig', -1), {})"]


# The default run keeps the guard (it works on every machine, and bwrap adds its layers on top of
# the same guards); the bubblewrap runs are marked slow, and CI runs them.
@pytest.fixture(params=["guard", pytest.param("bwrap", marks=pytest.mark.slow)])
def mode(request) -> str:
    from coherence.engine.errors import ConfigurationError
    from coherence.engine.execution import sandbox as sb

    if request.param == "bwrap":
        try:
            works = sb.bwrap_works(sb.probe_interpreter())
        except ConfigurationError:
            works = False
        if not works:
            pytest.skip("bubblewrap does not work here")
    return request.param


def run(programs, inputs=INPUTS, mode="guard"):
    ex = Executor(limits=ExecutionLimits(call_timeout=1.0, program_budget=10.0), sandbox=mode)
    return ex.run(MODULE, programs, inputs)


def test_each_call_gets_a_fresh_object_and_its_changes_are_the_outcome(mode):
    spec = ("add", "Cart", "instance")
    programs = [
        Program(spec[0], None, "yours", spec[1], spec[2]),
        Program(
            spec[0],
            "def add(self, item, qty=1):\n    if qty > 0:\n        self.items[item] = self.items.get(item, 0) + qty\n    return self.total()\n",
            "alone",
            spec[1],
            spec[2],
        ),
        # the whole class, with a helper method the user's class lacks
        Program(
            spec[0],
            "class Cart:\n    def add(self, item, qty=1):\n        self._put(item, max(qty, 0))\n        return self.total()\n    def _put(self, k, n):\n        if n:\n            self.items[k] = self.items.get(k, 0) + n\n",
            "whole class",
            spec[1],
            spec[2],
        ),
        Program(spec[0], "def add(self, item, qty=1):\n    return qty\n", "stateless", spec[1], spec[2]),
    ]
    report = run(programs, mode=mode)
    assert report.sandbox == sb.sandbox_name(mode, sb.planned_layers(mode))
    assert report.module_error is None and report.load_errors == [None] * 4, report.load_errors
    yours, alone, whole, stateless = report.outcomes
    # a fresh Cart per call: the second call's total does not include the first call's apples
    assert [o.render(receiver=True) for o in yours] == [
        "2 (and leaves the object as Cart(items={'apple': 2}))",
        "0 (and leaves the object as Cart(items={'pear': 0}))",
        "-1 (and leaves the object as Cart(items={'fig': -1}))",
    ]
    assert alone[0] == yours[0] and alone[1] != yours[1] and alone[1].render(receiver=True) == "0"
    assert whole == alone
    assert stateless[0].render(receiver=True) == "2" and stateless[0] != yours[0]  # same return, object untouched


def test_static_and_class_methods_and_a_class_that_cannot_be_built(tmp_path):
    clamp = [
        Program("clamp", None, "yours", "Cart", "static"),
        Program("clamp", "def clamp(x, lo, hi):\n    return min(hi, max(x, lo))\n", "plain def", "Cart", "static"),
        Program(
            "clamp",
            "@staticmethod\ndef clamp(x, lo, hi):\n    return x if lo <= x <= hi else (lo if x < lo else hi)\n",
            "decorated",
            "Cart",
            "static",
        ),
    ]
    report = run(clamp, ["((5, 0, 3), {})", "((1, 3, 0), {})"])
    assert report.load_errors == [None] * 3
    assert [o.render() for o in report.outcomes[0]] == ["3", "3"]
    assert [o.render() for o in report.outcomes[1]] == ["3", "0"]
    assert [o.render() for o in report.outcomes[2]] == ["3", "3"]
    of = [
        Program("of", None, "yours", "Cart", "class"),
        Program(
            "of", "def of(cls, item):\n    c = cls()\n    c.items[item] = 2\n    return c\n", "two", "Cart", "class"
        ),
    ]
    report = run(of, ["(('kiwi',), {})"])
    assert report.load_errors == [None, None]
    assert report.outcomes[0][0].render() == "Cart(items={'kiwi': 1})"
    assert report.outcomes[1][0].render() == "Cart(items={'kiwi': 2})"
    # an inherited __init__ the source does not show needs arguments: a load error that says so
    module = ModuleContext(
        source="class Base:\n    def __init__(self, n):\n        self.n = n\n\nclass Kid(Base):\n    def twice(self, x):\n        return 2 * x\n",
        filename="/workspace/kid.py",
        module_name="kid",
    )
    ex = Executor(limits=ExecutionLimits(call_timeout=1.0, program_budget=10.0), sandbox="guard")
    report = ex.run(module, [Program("twice", None, "yours", "Kid", "instance")], ["((1,), {})"])
    assert report.load_errors[0] and "Kid() cannot be built without arguments" in report.load_errors[0], (
        report.load_errors
    )


async def test_check_of_a_method_explains_with_a_call_on_the_class(tmp_path):
    (tmp_path / "cart.py").write_text(CART)
    alternatives = [
        "def add(self, item: str, qty: int = 1) -> int:\n    if qty > 0:\n        self.items[item] = self.items.get(item, 0) + qty\n    return sum(self.items.values())\n",
        "class Cart:\n    def add(self, item, qty=1):\n        if qty <= 0:\n            return self.total()\n        self.items[item] = self.items.get(item, 0) + qty\n        return self.total()\n",
        "def add(self, item, qty=1):\n    if qty > 0:\n        self.items[item] = self.items.get(item, 0) + qty\n    return self.total()\n",
    ]
    replay = tmp_path / "samples.jsonl"
    replay.write_text(json.dumps({"entry_point": "add", "candidates": alternatives}) + "\n")
    t = next(t for t in find_targets(CART, str(tmp_path / "cart.py")) if t.qualname == "Cart.add")
    result = await Checker(CheckConfig(replay=str(replay), samples=4, inputs=200, workspace=str(tmp_path))).check(t)
    assert result.status == "incoherent", (result.status, result.reason, result.load_errors)
    assert result.cluster_sizes == [3, 1] and result.user_cluster == 1
    ce = result.counterexample
    assert ce.call.startswith("Cart().add(") and ce.disagreeing == 3
    # the shrunk input adds nothing (qty <= 0): yours records the item anyway
    assert "(and leaves the object as Cart(items={" in ce.yours, ce
    # the side that did not change the object says so, not a bare value that reads as agreement
    assert ce.theirs.endswith(" (and leaves the object unchanged)"), ce
    assert [c.output for c in result.clusters] == [ce.theirs, ce.yours]
