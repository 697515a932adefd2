"""Kubernetes' CEL (linter.cel): the libraries against Kubernetes' documented results, the cost
bound on hostile expressions, and SCH002's evaluation of CRD ``x-kubernetes-validations``."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mlops_lint.cel import COST_LIMIT, Unevaluated, compile_expression, evaluate
from mlops_lint.validation.celrules import cel_issues, escape, inventory, to_cel
from mlops_lint.validation.messages import Issue


REPO = Path(__file__).resolve().parents[1]


def cel(expression: str, **variables):
    return evaluate(compile_expression(expression), variables)


# Each row: an example of https://kubernetes.io/docs/reference/using-api/cel/ (the library tables)
# and the value Kubernetes documents for it.
KUBERNETES_EXAMPLES = [
    # quantity
    ("quantity('1') == quantity('1000m')", True),
    ("quantity('200M').isGreaterThan(quantity('0.2G'))", False),
    ("quantity('1.5G').isLessThan(quantity('2Gi'))", True),
    ("quantity('50k').add(20).sub(quantity('100k')).sub(-50000).asInteger()", 20),
    ("isQuantity('1.3G')", True),
    ("isQuantity('1,3G')", False),
    ("quantity('50703068').asApproximateFloat() > 50000000.0", True),
    ("quantity('-5').sign()", -1),
    ("quantity('1.5').isInteger()", False),
    ("quantity('2').compareTo(quantity('1'))", 1),
    # regex
    ("'abc 123'.find('[0-9]+')", "123"),
    ("'abc 123 456'.findAll('[0-9]+')", ["123", "456"]),
    ("'123 abc 456'.findAll('[0-9]+', 1)", ["123"]),
    # lists
    ("[1, 2, 3].isSorted()", True),
    ("['b', 'a'].isSorted()", False),
    ("[1, 2, 3].sum()", 6),
    ("[1, 2, 3].max()", 3),
    ("[1, 2, 3].min()", 1),
    ("[1, 2, 2, 3].indexOf(2)", 1),
    ("[1, 2, 2, 3].lastIndexOf(2)", 2),
    # strings
    ("'hello mellow'.indexOf('ello')", 1),
    ("'hello mellow'.lastIndexOf('ello')", 7),
    ("'hello'.charAt(1)", "e"),
    ("'TacoCat'.lowerAscii()", "tacocat"),
    ("'a,b'.split(',')", ["a", "b"]),
    ("'hello'.substring(1, 3)", "el"),
    ("['a', 'b'].join('-')", "a-b"),
    # url
    ("url('https://example.com:80/').getHost()", "example.com:80"),
    ("url('https://example.com:80/').getHostname()", "example.com"),
    ("url('https://example.com:80/').getPort()", "80"),
    ("url('https://example.com/path').getScheme()", "https"),
    ("url('https://example.com/path with spaces/').getEscapedPath()", "/path with spaces/"),
    ("url('https://example.com/?k=a&k=b').getQuery()", {"k": ["a", "b"]}),
    ("isURL('https://example.com')", True),
    ("isURL('example.com')", False),
    # ip and cidr
    ("isIP('127.0.0.1')", True),
    ("isIP('1.2.3')", False),
    ("ip('127.0.0.1').family()", 4),
    ("ip('::1').family()", 6),
    ("ip('127.0.0.1').isLoopback()", True),
    ("ip.isCanonical('127.0.0.1')", True),
    ("ip.isCanonical('2001:db8:0:0:0:0:2:1')", False),
    ("cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))", True),
    ("cidr('192.168.0.0/24').containsIP('192.168.1.1')", False),
    ("cidr('192.168.0.0/24').containsCIDR('192.168.0.0/25')", True),
    ("cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')", True),
    ("cidr('192.168.0.0/24').prefixLength()", 24),
    ("cidr('192.168.0.1/24').ip() == ip('192.168.0.1')", True),
    ("isCIDR('192.168.0.0/24')", True),
    ("isCIDR('192.168.0.0')", False),
    # format
    ("!format.dns1123Label().validate('my-label-name').hasValue()", True),
    ("format.dns1123Label().validate('MY_LABEL').hasValue()", True),
    ("format.labelValue().validate('ok').hasValue()", False),
    # has(), the standard macros
    ("has(self.a) && self.a.all(x, x > 0)", True),
]


@pytest.mark.parametrize("expression,expected", KUBERNETES_EXAMPLES)
def test_kubernetes_library_functions_give_the_documented_results(expression: str, expected) -> None:
    assert cel(expression, self={"a": [1, 2]}) == expected


def test_a_library_function_given_a_bad_value_is_an_evaluation_error_not_an_exception() -> None:
    for expression in ("quantity('1 core')", "ip('1.2.3')", "cidr('10.0.0.0')", "url('no scheme')",
                       "'x'.find('(')"):
        result = cel(expression)
        assert isinstance(result, Unevaluated) and result.kind == "runtime", expression


def test_an_expression_that_does_not_compile_is_unevaluated_with_the_reason() -> None:
    result = compile_expression("self.a.all(x, ")
    assert isinstance(result, Unevaluated) and result.kind == "compile"
    assert "Syntax error" in result.reason
    assert isinstance(compile_expression(""), Unevaluated)
    assert compile_expression("x" * 20_000).kind == "compile"


@pytest.mark.parametrize("expression,data", [
    # nested comprehensions over a large list: n^3 work
    ("self.a.map(x, self.a.map(y, self.a.map(z, x + y + z)))", {"a": list(range(300))}),
    ("self.a.all(x, self.a.all(y, self.a.exists(z, x + y == z + 1000000)))", {"a": list(range(1000))}),
    # a large list literal iterated inside another comprehension
    ("[" + ",".join(["1"] * 2000) + "].all(x, [" + ",".join(["2"] * 2000) + "].all(y, x < y))", {}),
    # lists made from strings: splitting a long string, iterated twice
    ("self.s.split('').all(x, self.s.split('').exists(y, y == x + 'z'))", {"s": "ab" * 20_000}),
])
def test_expressions_built_to_blow_up_are_refused_before_they_run(expression: str, data: dict) -> None:
    started = time.perf_counter()
    result = cel(expression, self=data)
    assert isinstance(result, Unevaluated) and result.kind == "cost", result
    assert str(COST_LIMIT)[:1] in result.reason
    assert time.perf_counter() - started < 2.0


def test_the_cost_estimate_lets_ordinary_rules_on_real_sizes_run() -> None:
    data = {"resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                                "flavors": [{"name": f"f{i}", "resources": [{"name": "cpu"}] * 3} for i in range(16)]}]}
    rule = "self.resourceGroups.all(rg, rg.flavors.all(f, size(f.resources) == size(rg.coveredResources)))"
    assert cel(rule, self=data) is True


def test_deeply_nested_data_is_evaluated_or_refused_without_a_crash() -> None:
    node: dict = {}
    root = node
    for _ in range(5000):
        node["a"] = {}
        node = node["a"]
    result = cel("has(self.a)", self=root)
    assert result is True or isinstance(result, Unevaluated)


def test_kubernetes_escapes_property_names_for_cel() -> None:
    assert escape("foo-bar") == "foo__dash__bar"
    assert escape("a.b") == "a__dot__b"
    assert escape("x/y") == "x__slash__y"
    assert escape("a__b") == "a__underscores__b"
    assert escape("namespace") == "__namespace__"
    assert escape("1abc") is None


SCHEMA = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.minReplicas <= self.maxReplicas", "message": "minReplicas must not exceed maxReplicas",
                 "fieldPath": ".minReplicas"},
                {"rule": "self.replicas == oldSelf.replicas", "message": "immutable"},
                {"rule": "self.max__dash__surge >= 0", "messageExpression": "'surge is ' + string(self.max__dash__surge)"},
                {"rule": "self.mode == 'Fast' || self.mode == 'Slow'"},
                {"rule": "self.extra.size() > 0", "message": "extra is required"},
            ],
            "properties": {
                "minReplicas": {"type": "integer"},
                "maxReplicas": {"type": "integer"},
                "replicas": {"type": "integer"},
                "max-surge": {"type": "integer"},
                "mode": {"type": "string", "default": "Fast"},
                "extra": {"type": "object", "additionalProperties": {"type": "string"}},
                "ratio": {"type": "number", "x-kubernetes-validations": [{"rule": "self < 1.0", "message": "below one"}]},
            },
        },
        "status": {"type": "object", "x-kubernetes-validations": [{"rule": "false", "message": "status is live"}]},
    },
    "x-kubernetes-validations": [{"rule": "self.metadata.name.startsWith('ml-')", "message": "name must start with ml-"}],
}


def messages(body: dict) -> list[tuple[tuple, str]]:
    return [(issue.path, issue.message) for issue in cel_issues(body, SCHEMA, [])]


def test_crd_rules_report_their_message_at_the_node_or_its_field_path() -> None:
    body = {"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "job", "namespace": "n"},
            "spec": {"minReplicas": 3, "maxReplicas": 2, "replicas": 1, "max-surge": -1, "mode": "Medium",
                     "extra": {"a": "b"}, "ratio": 1},
            "status": {}}
    assert messages(body) == [
        (("kind",), "the object: name must start with ml-"),
        (("spec", "minReplicas"), "spec.minReplicas: minReplicas must not exceed maxReplicas"),
        (("spec",), "spec: surge is -1"),
        (("spec",), "spec: failed rule: self.mode == 'Fast' || self.mode == 'Slow'"),
        (("spec", "ratio"), "spec.ratio: below one"),
    ]


def test_defaults_are_filled_in_and_a_missing_key_is_the_api_servers_evaluation_error() -> None:
    body = {"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "ml-job"},
            "spec": {"minReplicas": 1, "maxReplicas": 2, "max-surge": 0}}
    # mode defaults to Fast (no finding); extra is absent: no such key, as the API server reports
    assert messages(body) == [
        (("spec",), "spec: extra is required (the CRD's CEL rule fails to evaluate: no such key: extra)"),
    ]


def test_a_node_the_structural_schema_reports_malformed_gets_no_cel_finding() -> None:
    body = {"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "ml-job"},
            "spec": {"minReplicas": 3, "maxReplicas": 2, "max-surge": 0, "extra": {"a": "b"}}}
    known = [Issue(("spec", "minReplicas"), "value", "expected integer", "type")]
    assert cel_issues(body, SCHEMA, known) == []


def test_inventory_names_the_rules_never_checked() -> None:
    total, skipped = inventory(SCHEMA)
    assert total == 8
    assert sorted(reason for _, _, reason in skipped) == ["transition rules (read oldSelf)", "under status (live state)"]


def test_to_cel_types_numbers_and_keeps_map_keys_unescaped() -> None:
    schema = SCHEMA["properties"]["spec"]
    assert to_cel({"ratio": 1, "extra": {"a-b": "c"}, "max-surge": 2}, schema) == {
        "ratio": 1.0, "extra": {"a-b": "c"}, "max__dash__surge": 2, "mode": "Fast"}


def test_a_property_named_like_a_cel_keyword_is_read_escaped_and_as_kubernetes_132_reads_it_unescaped() -> None:
    # JobSet's and Trainer's rule `self.templates.all(t, !has(t.metadata.namespace) || ...)` (Kubernetes
    # 1.32+ accepts `namespace` unescaped; every version accepts `__namespace__`)
    schema = {"type": "object", "properties": {"metadata": {"type": "object", "properties": {
        "name": {"type": "string"}, "namespace": {"type": "string"}}}}}
    converted = to_cel({"metadata": {"name": "data", "namespace": "other"}}, schema)
    assert cel("self.metadata.namespace == 'other' && self.metadata.__namespace__ == 'other'", self=converted) is True
    assert cel("!has(self.metadata.namespace)", self=to_cel({"metadata": {"name": "data"}}, schema)) is True


def test_the_engine_is_loaded_without_the_packages_command_line() -> None:
    # common-expression-language's `cel/__init__` imports its CLI (prompt_toolkit): 0.12-0.35 s of a
    # run, more than every CEL rule of the perf corpus (bench/run.py's CEL share)
    import subprocess
    import sys

    code = ("import sys; from mlops_lint.cel import compile_expression, evaluate; "
            "assert evaluate(compile_expression(\"quantity('1') == quantity('1000m')\"), {}) is True; "
            "import cel; assert cel.compile and cel.stdlib; "
            "print(sorted(m for m in sys.modules if m == 'cel.cli' or m.startswith('prompt_toolkit')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
