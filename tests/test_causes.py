"""Issue #16's root causes of wrong findings, one minimal reproduction each: every test here fails
if its cause comes back (placeholders judged as values, one object counted twice, scripts read in
file order, two findings for one cause, messages that say what is not true)."""

from __future__ import annotations

from pathlib import Path

import pytest

from linter.config import Config
from linter.engine import LintRequest, lint
from linter.registry import load_registry

REPO = Path(__file__).resolve().parents[1]
REGISTRY = load_registry()


def lint_text(text: str, name: str = "job.yaml", select: list[str] | None = None):
    """Active findings of one file read from stdin as ``name``."""
    report = lint(LintRequest(paths=[], config=Config(), registry=REGISTRY, select=select,
                              stdin=(name, text.encode()), cwd=REPO))
    return report.active


def lint_files(tmp_path: Path, files: dict[str, str], select: list[str] | None = None):
    """Active findings of a project of several files (a ``.mlops-lint.yaml`` makes it one root)."""
    (tmp_path / ".mlops-lint.yaml").write_text("{}\n")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=REGISTRY, select=select, cwd=tmp_path))
    return report.active


def rules(findings) -> list[tuple[str, int]]:
    return sorted((f.rule, f.line) for f in findings)


POD = """apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  containers:
  - name: trainer
    image: {image}
"""


# ---------------------------------------------------------------------------------------------
# §4 Placeholders are not values


@pytest.mark.parametrize("image", ["<your-image>", "your-acr.azurecr.io/trainer", "REPLACE_ME", "IMG_PLACEHOLDER",
                                   "myacr.azurecr.io/<image>", "${IMAGE}", "{{ .Values.image }}", "[trainer|server]",
                                   "nvcr.io/nvidia/pytorch@sha256:…", "..."])
def test_placeholder_images_are_not_judged(image):
    assert rules(lint_text(POD.format(image=f'"{image}"'), select=["IMG001", "IMG002", "IMG003", "IMG004"])) == []


def test_a_real_image_is_still_judged():
    assert rules(lint_text(POD.format(image="pytorch/pytorch"), select=["IMG001", "IMG002"])) == [
        ("IMG001", 8), ("IMG002", 8)]
