"""Every output the README shows is the output of this repository (issue 33: three had gone
stale, 19 vs 25 files, 226 vs 235 problems, 9 vs 8 Dockerfile findings).

- A ```text block that starts with ``$ mlops-lint …`` is a session: each command runs, in a copy
  of the project the block is about (:data:`PROJECTS`), and its output must be the lines shown
  under it (stdout, then stderr), where ``…`` stands for any text.
- The fixtures' commands state their outputs in comments; the statistics block shows the first
  rows and the summary line of `mlops-lint fixtures/violating/ --statistics`.
- Any other ```text block fails the test until it is checked here too.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text("utf-8")

# the project each session runs in: (folder copied, name of the copy in the working folder or
# "" for the working folder itself)
PROJECTS = {
    "mlops-lint deploy/job.yaml": (REPO / "tests" / "readme" / "terminal", ""),
    "mlops-lint deploy/": (REPO / "tests" / "readme" / "fixing", ""),
    "mlops-lint k8s": (REPO / "fixtures" / "kustomize", "k8s"),
}


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", README, re.S | re.M)


def matches(shown: str, actual: str) -> bool:
    """``actual`` is the line ``shown``, where a ``…`` of ``shown`` stands for any text."""
    pattern = ".*?".join(re.escape(part) for part in shown.split("…"))
    return re.fullmatch(pattern, actual) is not None


def sessions() -> list[str]:
    return [block for block in blocks("text") if block.startswith("$ ")]


def run(command: str, cwd: Path) -> list[str]:
    argv = shlex.split(command.split("  #", 1)[0])
    assert argv[0] == "mlops-lint"
    done = subprocess.run(["mlops-lint", "--no-cache", *argv[1:]], cwd=cwd, capture_output=True, text=True,
                          timeout=600)
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout.splitlines() + done.stderr.splitlines()


# text blocks whose output another test checks: a text the block holds -> that test
CHECKED_ELSEWHERE = {
    "charts/inference/templates/": "tests/test_helm.py::test_the_readme_shows_a_real_output",
}


def test_every_text_block_is_checked() -> None:
    statistics = [block for block in blocks("text") if block.startswith(" ") or block[:2].strip().isdigit()]
    assert len(statistics) == 1
    elsewhere = [block for block in blocks("text") if any(text in block for text in CHECKED_ELSEWHERE)]
    assert len(elsewhere) == len(CHECKED_ELSEWHERE)
    assert len(sessions()) + len(statistics) + len(elsewhere) == len(blocks("text"))
    assert {block.splitlines()[0][2:] for block in sessions()} == set(PROJECTS)


@pytest.mark.parametrize("first", sorted(PROJECTS))
def test_a_session_gives_the_output_shown(tmp_path: Path, first: str) -> None:
    if first == "mlops-lint k8s" and not (shutil.which("kustomize") or shutil.which("kubectl")):
        pytest.skip("kustomize is not installed")
    block = next(b for b in sessions() if b.splitlines()[0][2:] == first)
    source, name = PROJECTS[first]
    shutil.copytree(source, tmp_path / name if name else tmp_path, dirs_exist_ok=True)
    if not (tmp_path / ".mlops-lint.yaml").exists():
        (tmp_path / ".mlops-lint.yaml").write_text("{}\n")  # the copy is its own project
    commands: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        else:
            commands[-1][1].append(line)
    for command, shown in commands:
        actual = run(command, tmp_path)
        assert len(actual) == len(shown) and all(matches(s, a) for s, a in zip(shown, actual)), (
            command, "\n".join(actual))


def test_the_fixtures_commands_give_what_their_comments_say() -> None:
    block = next(b for b in blocks("sh") if "mlops-lint fixtures/conforming/" in b)
    said = {line.split("#", 1)[0].strip(): line.split("#", 1)[1].strip() for line in block.splitlines()}
    conforming = run("mlops-lint fixtures/conforming/", REPO)
    assert conforming[-1] == said["mlops-lint fixtures/conforming/"]
    dockerfile = run("mlops-lint fixtures/violating/Dockerfile", REPO)
    count = int(re.match(r"(\d+) findings, each with a `fix:` line under it", said[
        "mlops-lint fixtures/violating/Dockerfile"])[1])
    findings = [i for i, line in enumerate(dockerfile) if re.match(r"\S+:\d+:\d+: (ERROR|WARNING|INFO) ", line)]
    assert len(findings) == count
    assert all(dockerfile[i + 1].lstrip().startswith(("fix:", "[*] fix:")) for i in findings)
    statistics = run("mlops-lint fixtures/violating/ --statistics", REPO)
    shown = next(b for b in blocks("text") if b[:2].strip().isdigit()).splitlines()
    head = shown[:shown.index("…")]
    assert statistics[:len(head)] == head
    assert statistics[-1] == shown[-1]
