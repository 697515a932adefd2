"""Issue 33 items 1, 10 and 11, issue 32 items 14 and 23: the everyday flows agree with each
other. Rule families and selectors, config keys, what a run that linted nothing says, the
pre-commit hook's files and arguments, files named on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from linter.cli import main
from linter.families import FAMILIES
from linter.registry import load_registry

REPO = Path(__file__).resolve().parents[1]
TRUST = REPO.parent / "shared" / "repros" / "trust"

POD = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  containers:\n"
       "  - name: c\n    image: mcr.microsoft.com/x:1\n    resources:\n      requests: {nvidia.com/gpu: 1}\n")


def cli(args: list[str], cwd: Path, stdin: bytes | None = None) -> tuple[int, str, str]:
    """The command in ``cwd`` (``rules`` and ``explain`` without --no-cache): status, stdout, stderr."""
    import os

    old = os.getcwd()
    os.chdir(cwd)
    try:
        args = args if args[:1] in (["rules"], ["explain"]) else ["--no-cache", *args]
        result = CliRunner().invoke(main, args, input=stdin, catch_exceptions=False)
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout, result.stderr


# --- item 11: families ------------------------------------------------------------------------

def test_every_built_in_rule_has_a_documented_family() -> None:
    registry = load_registry()
    families = {meta.code: meta.family for meta in registry.rules}
    assert set(families.values()) == set(FAMILIES)
    assert families["GPU001"] == "ml" and families["AKS001"] == "aks" and families["XPL001"] == "aks"
    assert families["SEC001"] == "k8s" and families["IMG002"] == "k8s" and families["RES001"] == "k8s"
    assert families["RES004"] == "ml" and families["IMG003"] == "ml" and families["DKR005"] == "ml"
    for meta in registry.rules:  # the page and explain name it
        page = (REPO / "docs" / "rules" / f"{meta.code}.md").read_text("utf-8")
        assert f"Family: {meta.family}" in page.splitlines()[2], meta.code


def test_select_and_ignore_take_families(tmp_path: Path) -> None:
    (tmp_path / ".mlops-lint.yaml").write_text("{}\n")
    (tmp_path / "pod.yaml").write_text(POD)
    code, out, _ = cli(["--format", "json", "pod.yaml"], tmp_path)
    every = {f["rule"] for f in json.loads(out)["findings"]}
    assert {"GPU001", "SEC001", "IMG002"} <= every
    registry = load_registry()
    family = {meta.code: meta.family for meta in registry.rules}
    _, out, _ = cli(["--format", "json", "--select", "ml,aks", "pod.yaml"], tmp_path)
    signal = {f["rule"] for f in json.loads(out)["findings"]}
    assert signal == {rule for rule in every if family[rule] in ("ml", "aks")} and "GPU001" in signal
    _, out, _ = cli(["--format", "json", "--ignore", "k8s", "pod.yaml"], tmp_path)
    assert {f["rule"] for f in json.loads(out)["findings"]} == signal
    (tmp_path / ".mlops-lint.yaml").write_text("ignore: [ml]\n")
    _, out, _ = cli(["--format", "json", "pod.yaml"], tmp_path)
    assert {f["rule"] for f in json.loads(out)["findings"]} == every - signal


@pytest.mark.parametrize("where", ["cli", "config"])
def test_a_cut_short_id_is_an_error_with_a_suggestion(tmp_path: Path, where: str) -> None:
    """`ignore: [GPU01]` once ignored GPU010 silently (a prefix of ids)."""
    (tmp_path / "pod.yaml").write_text(POD)
    if where == "config":
        (tmp_path / ".mlops-lint.yaml").write_text("ignore: [GPU01]\n")
        code, _, err = cli(["pod.yaml"], tmp_path)
        assert ".mlops-lint.yaml:1:10: 'ignore' names an unknown rule or prefix 'GPU01'" in err
    else:
        (tmp_path / ".mlops-lint.yaml").write_text("{}\n")
        code, _, err = cli(["--ignore", "GPU01", "pod.yaml"], tmp_path)
        assert "unknown rule or prefix 'GPU01' in --select/--ignore" in err
    assert code == 2
    assert "(did you mean GPU010 or GPU001, or GPU for every GPU rule?)" in err


def test_letters_of_ids_and_slugs_still_select() -> None:
    registry = load_registry()
    assert {m.code for m in registry.resolve("GPU")} == {m.code for m in registry.rules if m.code.startswith("GPU")}
    assert [m.code for m in registry.resolve("gpu-limit-missing")] == ["GPU001"]
    assert registry.resolve("GPU01") == [] and registry.resolve("GP") == []
    assert "did you mean gpu-limit-missing" in registry.selector_hint("gpu-limit-mising")


@pytest.mark.parametrize(("key", "meant"), [("fail_on", "fail-on"), ("trusted_registries", "trusted-registries"),
                                             ("failon", "fail-on")])
def test_misspelt_config_key_gets_did_you_mean(tmp_path: Path, key: str, meant: str) -> None:
    (tmp_path / ".mlops-lint.yaml").write_text(f"{key}: never\n")
    (tmp_path / "pod.yaml").write_text(POD)
    code, _, err = cli(["pod.yaml"], tmp_path)
    assert code == 2
    assert f".mlops-lint.yaml:1:1: unknown key '{key}' at the top level (did you mean '{meant}'?)" in err


def test_rules_json_and_explain_name_the_family(tmp_path: Path) -> None:
    code, out, _ = cli(["rules", "--format", "json"], tmp_path)
    assert {row["code"]: row["family"] for row in json.loads(out)}["AKS003"] == "aks"
    code, out, _ = cli(["explain", "SEC004"], tmp_path)
    assert "Family: k8s" in out.splitlines()[2]
