"""CheckResult's JSON form: what the language server puts in a diagnostic's data and reads back."""

import json

from coherence.engine.result import CheckResult, ClusterOutput, Counterexample


def _result(**kw) -> CheckResult:
    ce = Counterexample("f(1)", "1", "2", [ClusterOutput("2", 8), ClusterOutput("1", 1)], 8, 9)
    return CheckResult("f", "m.py", 3, "incoherent", counterexample=ce, trust=0.2, **kw)


def test_round_trip_keeps_the_fields_every_front_end_reads():
    r = _result(
        sampling_problem="2 of 9 requests failed: rate limited",
        sampling_problem_kind="rate_limit",
        notices=["the sample cache was rebuilt"],
        too_slow=1,
        inputs_over_budget=12,
        timeouts=3,
        load_errors={"alt 4": "SyntaxError: invalid syntax"},
        extra={"programs_run": 7},
    )
    back = CheckResult.from_dict(json.loads(json.dumps(r.to_dict())))
    assert back == r
    assert back.counterexample.alternatives[0] == ClusterOutput("2", 8)


def test_old_json_with_the_keys_in_extra_still_reads():
    old = _result().to_dict()
    for key in (
        "sampling_problem",
        "sampling_problem_kind",
        "notices",
        "config_error",
        "too_slow",
        "inputs_over_budget",
        "timeouts",
        "load_errors",
    ):
        del old[key]
    old["extra"] = {
        "sampling_problem": "rate limited",
        "sampling_problem_kind": "rate_limit",
        "notices": ["rebuilt"],
        "config_error": True,
        "too_slow": 2,
        "inputs_over_budget": 5,
        "timeouts": 4,
        "load_errors": {"alt 1": "boom"},
        "timings": {"sampling": 0.5},
    }
    r = CheckResult.from_dict(old)
    assert (r.sampling_problem, r.sampling_problem_kind, r.notices) == ("rate limited", "rate_limit", ["rebuilt"])
    assert r.config_error is True
    assert (r.too_slow, r.inputs_over_budget, r.timeouts, r.load_errors) == (2, 5, 4, {"alt 1": "boom"})
    # what is still an extra stays there, and what moved out is not kept twice
    assert r.extra == {"timings": {"sampling": 0.5}}


def test_unknown_keys_from_a_newer_server_are_ignored():
    data = _result().to_dict() | {"some_future_field": 1}
    assert CheckResult.from_dict(data) == _result()
