"""IMG rules beyond their fixtures: which tags move (IMG006), and the split of one unpinned image
between IMG001, IMG002 and IMG006 (one cause, one finding)."""

from __future__ import annotations

import pytest

from linter.config import Config
from linter.engine import LintRequest, lint
from linter.model.images import is_moving_tag
from linter.registry import load_registry

REGISTRY = load_registry()
POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: IMAGE\n"


def run(image: str, select: list[str]) -> list:
    report = lint(LintRequest(paths=[], config=Config(), registry=REGISTRY, select=select,
                              stdin=("pod.yaml", POD.replace("IMAGE", image).encode())))
    return report.active


@pytest.mark.parametrize("tag, moving", [
    ("main", True), ("master", True), ("nightly", True), ("stable", True), ("edge", True), ("dev", True),
    ("devel", True), ("develop", True), ("MAIN", True), ("latest-gpu", True), ("nightly-cu121", True),
    ("main-latest", True), ("py3-nightly", True),
    ("latest", False), (None, False), ("", False), ("2.4.1", False), ("main-3f2a9c1", False),
    ("12.4.1-devel-ubuntu22.04", False), ("stable-alpine", False), ("development-2024.06.01", False),
    ("latestgpu", False), ("nightly2024", False),
])
def test_moving_tags(tag, moving: bool) -> None:
    assert is_moving_tag(tag) is moving


@pytest.mark.parametrize("image, rules", [
    ("rayproject/ray:nightly", ["IMG006"]),
    ("tensorflow/tensorflow:latest-gpu", ["IMG006"]),
    ("rayproject/ray:nightly@sha256:" + "a" * 64, []),
    ("rayproject/ray:2.40.0", ["IMG002"]),
    ("rayproject/ray:latest", ["IMG001"]),
    ("rayproject/ray", ["IMG001"]),
])
def test_one_unpinned_image_gives_one_finding(image: str, rules: list[str]) -> None:
    found = run(image, ["IMG001", "IMG002", "IMG006"])
    assert [r.rule for r in found] == rules


def test_img006_points_at_the_image_and_asks_for_a_release_and_its_digest() -> None:
    (finding,) = run("ghcr.io/example/fetcher:main", ["IMG006"])
    assert (finding.line, finding.column, finding.severity) == (7, 12, "warning")
    assert finding.message == ("container `c` image `ghcr.io/example/fetcher:main` uses the moving tag `main`, which "
                               "points at a new build every time it is pushed; use a release tag and pin its digest")
