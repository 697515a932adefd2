"""``--fix`` on kustomize-built objects: a built object's fix lands in its base resource file when
the node it edits is there as the build shows it and no patch touches it; otherwise no fix.

The builds need `kustomize` or `kubectl` on PATH; these tests skip, saying so, only where
neither is found."""

from __future__ import annotations

import msgspec
import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from click.testing import CliRunner

from mlops_lint.engine import kustomize as kb

needs_build = pytest.mark.skipif(kb.find_command() is None,
                                 reason="neither kustomize nor kubectl is on PATH: nothing to build with")
pytestmark = needs_build

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train  # the base job
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvidia/cuda:12.4.1-runtime-ubuntu22.04
        resources:
          requests:
            nvidia.com/gpu: 1   # one GPU
      - name: sidecar
        image: busybox:1.36
"""
FIXED = JOB.replace("            nvidia.com/gpu: 1   # one GPU\n",
                    "            nvidia.com/gpu: 1   # one GPU\n          limits:\n            nvidia.com/gpu: 1\n")
TITLE = "add `limits: nvidia.com/gpu: 1` (equal to the request) (in the base resource bases/job.yaml)"


def overlay(name: str, extra: str = "") -> str:
    return f"namePrefix: {name}-\nresources:\n- ../../bases\n{extra}"


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """``mlops-lint ARGS`` in ``tmp_path``: (exit code, stdout)."""
    import mlops_lint.cli

    monkeypatch.chdir(tmp_path)

    def invoke(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(mlops_lint.cli.main, ["check", "--no-cache", "--no-color", *args],
                                    catch_exceptions=False)
        return result.exit_code, result.stdout
    return invoke


def base_and(tmp_path: Path, **overlays: str) -> None:
    write(tmp_path, {"bases/job.yaml": JOB, "bases/kustomization.yaml": "resources:\n- job.yaml\n",
                     **{f"overlays/{name}/kustomization.yaml": text for name, text in overlays.items()}})


def fixes(cli: Any, *args: str) -> list[tuple[str, int, int, Any]]:
    _, out = cli("--format", "json", *args)
    return [(f["rule"], f["line"], f["column"], f["autofix"]) for f in json.loads(out)["findings"]]


def test_a_built_objects_fix_lands_in_the_base_resource_byte_for_byte(cli, tmp_path: Path) -> None:
    base_and(tmp_path, a=overlay("a"))
    assert fixes(cli, "--select", "GPU001", ".") == [("GPU001", 14, 13, {
        "title": TITLE, "safe": True,
        "edits": [{"path": "bases/job.yaml", "line": 14, "column": 42, "end_line": 14, "end_column": 42,
                   "text": "\n          limits:\n            nvidia.com/gpu: 1"}]})]
    code, out = cli("--select", "GPU001", "--fix", ".")
    assert (code, out) == (0, "All checks passed (3 files). Fixed 1 problem.\n")  # the next pass built the fix
    assert (tmp_path / "bases/job.yaml").read_text() == FIXED
    assert (tmp_path / "overlays/a/kustomization.yaml").read_text() == overlay("a")
    assert cli("--select", "GPU001", "--fix", ".") == (0, "All checks passed (3 files).\n")
    assert (tmp_path / "bases/job.yaml").read_text() == FIXED


def test_two_overlays_of_one_base_give_one_edit_and_diff_shows_it(cli, tmp_path: Path) -> None:
    base_and(tmp_path, a=overlay("a"), b=overlay("b"))
    found = fixes(cli, "--select", "GPU001", ".")
    assert [(rule, line, fix["title"], len(fix["edits"])) for rule, line, _, fix in found] == [("GPU001", 14, TITLE, 1)]
    code, out = cli("--select", "GPU001", "--diff", ".")
    assert code == 1
    assert out == ("--- a/bases/job.yaml\n+++ b/bases/job.yaml\n@@ -12,5 +12,7 @@\n"
                   "         resources:\n           requests:\n             nvidia.com/gpu: 1   # one GPU\n"
                   "+          limits:\n+            nvidia.com/gpu: 1\n"
                   "       - name: sidecar\n         image: busybox:1.36\n")
    assert (tmp_path / "bases/job.yaml").read_text() == JOB  # --diff writes nothing
    assert cli("--select", "GPU001", "--fix", ".")[0] == 0
    assert (tmp_path / "bases/job.yaml").read_text() == FIXED  # once, not once per overlay


SMP_RESOURCES = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      containers:
      - name: trainer
        resources:
          requests:
            cpu: "2"
"""
SMP_ELSEWHERE = SMP_RESOURCES.replace('        resources:\n          requests:\n            cpu: "2"\n',
                                      "        workingDir: /work\n")
SMP_OTHER_CONTAINER = SMP_RESOURCES.replace("name: trainer", "name: sidecar")
JSON_RESOURCES = """\
- op: add
  path: /spec/template/spec/containers/0/resources/requests/cpu
  value: "2"
"""
JSON_ELSEWHERE = """\
- op: add
  path: /spec/template/spec/activeDeadlineSeconds
  value: 3600
"""


@pytest.mark.parametrize("patch, name, fixed", [
    (SMP_RESOURCES, "patch.yaml", False),  # sets a key under the container's `resources`
    (JSON_RESOURCES, "ops.yaml", False),  # the same, as a JSON 6902 op
    (SMP_ELSEWHERE, "patch.yaml", True),  # the same container, another key
    (SMP_OTHER_CONTAINER, "patch.yaml", True),  # another container's resources
    (JSON_ELSEWHERE, "ops.yaml", True),
])
def test_a_patch_touching_the_edited_node_means_no_fix(cli, tmp_path: Path, patch: str, name: str,
                                                       fixed: bool) -> None:
    target = "  target:\n    kind: Job\n    name: train\n" if name == "ops.yaml" else ""
    base_and(tmp_path, a=overlay("a", f"patches:\n- path: {name}\n{target}"))
    write(tmp_path, {f"overlays/a/{name}": patch})
    (finding,) = fixes(cli, "--select", "GPU001", ".")
    assert finding[:3] == ("GPU001", 14, 13)
    assert (finding[3] is not None and finding[3]["title"] == TITLE) is fixed
    code, out = cli("--select", "GPU001", "--diff", ".")
    assert code == (1 if fixed else 0) and bool(out) is fixed


def test_one_overlay_patching_the_node_means_no_fix_for_the_finding_both_give(cli, tmp_path: Path) -> None:
    base_and(tmp_path, a=overlay("a"), b=overlay("b", "patches:\n- path: patch.yaml\n"))
    write(tmp_path, {"overlays/b/patch.yaml": SMP_RESOURCES})
    assert fixes(cli, "--select", "GPU001", ".") == [("GPU001", 14, 13, None)]  # one finding, both overlays
    assert cli("--select", "GPU001", "--diff", ".") == (0, "")


def test_a_resource_outside_the_targets_is_not_fixed(cli, tmp_path: Path) -> None:
    base_and(tmp_path, a=overlay("a"))
    (finding,) = fixes(cli, "--select", "GPU001", "overlays/a")
    assert finding[3] is None  # the finding is reported in the base; the base is not a target
    assert cli("--select", "GPU001", "--diff", "overlays/a") == (0, "")


# A test-only rule whose plan is a SetKey (GPU001's kind of intent) on any ConfigMap labelled
# `fixme: bad`: generated ConfigMaps (configMapGenerator) have no resource file to take it.
def _label_fix(obj: Any, ctx: Any) -> Iterator[Any]:
    """TST901: label `fixme: bad` -> `fixme: fine`."""
    from mlops_lint.fix import Plan, SetKey
    from mlops_lint.model.tree import YMap
    from mlops_lint.rule import Finding

    labels = obj.metadata.get("labels")
    if isinstance(labels, YMap) and labels.get("fixme") == "bad":
        yield Finding(labels.vspans["fixme"], f"label fixme of {obj.name} is bad", ("metadata", "labels", "fixme"),
                      autofix=Plan.safe_fix("set `fixme: fine`", SetKey(labels, ("fixme",), "fine")))


@pytest.fixture
def tst901(monkeypatch: pytest.MonkeyPatch) -> None:
    import mlops_lint.cli
    from mlops_lint.registry import load_registry
    from mlops_lint.rule import OBJECT, RuleMeta

    meta = RuleMeta(code="TST901", name="fixme-label-setkey", severity="warning", scope=OBJECT, func=_label_fix,
                    doc=_label_fix.__doc__ or "", summary=_label_fix.__doc__ or "", module=__name__)
    base = load_registry()
    registry = msgspec.structs.replace(base, rules=tuple(sorted((*base.rules, meta), key=lambda m: m.code)))
    monkeypatch.setattr(mlops_lint.cli, "_registry", lambda folder=None: registry)


def test_a_generated_object_gets_no_fix_a_resource_does(tst901, cli, tmp_path: Path) -> None:
    resource = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n  labels:\n    fixme: bad\ndata: {}\n"
    write(tmp_path, {"bases/cm.yaml": resource,
                     "bases/kustomization.yaml": ("resources:\n- cm.yaml\nconfigMapGenerator:\n- name: made\n"
                                                  "  literals:\n  - A=1\n  options:\n    labels:\n      fixme: bad\n"),
                     "overlays/a/kustomization.yaml": overlay("a")})
    found = sorted(fixes(cli, "--select", "TST901", "."), key=lambda f: f[:3])
    assert [(rule, line, col, fix and fix["title"]) for rule, line, col, fix in found] == [
        ("TST901", 4, 9, None),  # the generator's `name:` in the kustomization: generated, no fix
        ("TST901", 6, 12, "set `fixme: fine` (in the base resource bases/cm.yaml)"),
    ]
    assert cli("--select", "TST901", "--fix", ".")[0] == 1  # the generated one is left
    assert (tmp_path / "bases/cm.yaml").read_text() == resource.replace("fixme: bad", "fixme: fine")
    assert "fixme: bad" in (tmp_path / "bases/kustomization.yaml").read_text()


def test_a_node_the_build_made_is_not_in_the_resource_so_no_fix(tst901, cli, tmp_path: Path) -> None:
    # the label comes from the overlay's `labels` field, not the resource: the resource has no
    # `labels` mapping at the node path, so there is nothing there to edit
    write(tmp_path, {"bases/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\ndata: {}\n",
                     "bases/kustomization.yaml": "resources:\n- cm.yaml\n",
                     "overlays/a/kustomization.yaml": overlay("a", "labels:\n- pairs:\n    fixme: bad\n")})
    found = fixes(cli, "--select", "TST901", ".")
    assert [(rule, fix) for rule, _, _, fix in found] == [("TST901", None)]
    assert cli("--select", "TST901", "--diff", ".") == (0, "")  # nothing to change


def test_findings_of_two_overlays_that_stay_apart_give_one_edit(tst901, cli, tmp_path: Path) -> None:
    resource = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n  labels:\n    fixme: bad\ndata: {}\n"
    write(tmp_path, {"bases/cm.yaml": resource, "bases/kustomization.yaml": "resources:\n- cm.yaml\n",
                     "overlays/a/kustomization.yaml": overlay("a"), "overlays/b/kustomization.yaml": overlay("b")})
    _, out = cli("--select", "TST901", "--format", "json", ".")
    found = json.loads(out)["findings"]
    assert sorted(f["message"] for f in found) == ["label fixme of a-plain is bad (after overlay overlays/a)",
                                                   "label fixme of b-plain is bad (after overlay overlays/b)"]
    assert found[0]["autofix"] == found[1]["autofix"] is not None  # the same edit, twice
    code, out = cli("--select", "TST901", "--fix", ".")
    assert (code, out) == (0, "All checks passed (4 files). Fixed 2 problems.\n")
    assert (tmp_path / "bases/cm.yaml").read_text() == resource.replace("fixme: bad", "fixme: fine")  # applied once


def test_the_build_cache_keeps_what_each_pass_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a pass builds the root from the fixed text: what it caches under the fixed text's key is that
    # text's build, so a later run of the fixed tree reads the right output from the cache
    import mlops_lint.cli

    base_and(tmp_path, a=overlay("a"))
    monkeypatch.chdir(tmp_path)

    def run(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(mlops_lint.cli.main, ["check", "--cache-dir", "cache", "--no-color", "--select",
                                                      "GPU001", *args, "."], catch_exceptions=False)
        return result.exit_code, result.stdout

    assert run("--diff")[0] == 1
    assert (tmp_path / "bases/job.yaml").read_text() == JOB
    assert run("--fix") == (0, "All checks passed (3 files). Fixed 1 problem.\n")
    assert (tmp_path / "bases/job.yaml").read_text() == FIXED
    assert run() == (0, "All checks passed (3 files).\n")
    (tmp_path / "bases/job.yaml").write_text(JOB)  # back as it was: the first build is read from the cache
    assert run()[0] == 1


CAPS_JOB = JOB.replace("      - name: sidecar\n", "        securityContext:\n          allowPrivilegeEscalation: false\n"
                       "          capabilities:\n            add:\n            - NET_ADMIN\n            - SYS_ADMIN  # fuse\n"
                       "      - name: sidecar\n")
SMP_CAPS = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      containers:
      - name: trainer
        securityContext:
          capabilities:
            add: [CHOWN, NET_ADMIN, SYS_ADMIN]
"""


@pytest.mark.parametrize("patched", [False, True])
def test_a_deletion_goes_through_the_mapper_only_where_the_list_is_written_as_built(cli, tmp_path: Path,
                                                                                   patched: bool) -> None:
    # SEC001's fix of a container adding SYS_ADMIN removes the item (DeleteItem): translated to the
    # base resource when the overlay leaves the list as written, no fix when a patch rewrites it
    # (the item's index in the built list would name another item of the file's)
    write(tmp_path, {"bases/job.yaml": CAPS_JOB, "bases/kustomization.yaml": "resources:\n- job.yaml\n",
                     "overlays/a/kustomization.yaml": overlay("a", "patches:\n- path: patch.yaml\n" if patched else "")})
    if patched:
        write(tmp_path, {"overlays/a/patch.yaml": SMP_CAPS})
    _, out = cli("--format", "json", "--select", "SEC001", ".")
    (finding,) = [found for found in json.loads(out)["findings"] if "CAP_SYS_ADMIN" in found["message"]]
    if patched:
        assert finding["autofix"] is None
        return
    assert (finding["path"], finding["line"]) == ("bases/job.yaml", CAPS_JOB.splitlines().index("            - SYS_ADMIN  # fuse") + 1)
    assert finding["autofix"]["title"].startswith("remove `SYS_ADMIN` from `capabilities.add`")
    assert finding["autofix"]["title"].endswith("(in the base resource bases/job.yaml)")
    assert cli("--select", "SEC001", "--fix", "--unsafe-fixes", ".")[0] == 0
    sidecar = "        securityContext:\n          allowPrivilegeEscalation: false\n"  # its own SEC001 fix
    assert (tmp_path / "bases/job.yaml").read_text() == CAPS_JOB.replace("            - SYS_ADMIN  # fuse\n", "") + sidecar
