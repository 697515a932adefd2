"""Project roots (SPEC section 2, README "Context and targets"): a file's project is the nearest
folder upward holding a config, else the top of its git work tree, else the working folder when
the file is under it, else the PATH given; projects under different roots never mix, and SARIF
URIs are relative to the repository wherever the command runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from mlops_lint.cli import main
from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry
from mlops_lint.roots import BY_CONFIG, BY_CWD, BY_GIT, BY_PATH, RootFinder

REGISTRY = load_registry()

POOLS = """#!/bin/bash
az aks nodepool add --resource-group ml-rg --cluster-name ml-aks --name gpunp \\
  --node-vm-size Standard_NC24ads_A100_v4 --enable-cluster-autoscaler --min-count 0 --max-count 1 \\
  --node-taints sku=gpu:NoSchedule --labels accelerator=nvidia
"""
QUEUE = """apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: research-queue
  namespace: research
spec:
  clusterQueue: research
"""
# queued to a LocalQueue name with a typo, on GPU nodes it does not tolerate
JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: research
  labels:
    kueue.x-k8s.io/queue-name: reseach-queue
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      nodeSelector:
        accelerator: nvidia
      containers:
      - name: trainer
        image: myacr.azurecr.io/ml/train:1.0@sha256:a3f1c2e4b5d6978812a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809
        resources:
          limits:
            nvidia.com/gpu: 1
"""
KUEUE_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: sweep
  namespace: research
  labels:
    kueue.x-k8s.io/queue-name: research-queue
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trial
        image: myacr.azurecr.io/ml/sweep:0.4.2@sha256:a3f1c2e4b5d6978812a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809
"""
VOLCANO_JOB = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gang
  namespace: research
spec:
  minAvailable: 2
  schedulerName: volcano
  tasks:
  - replicas: 2
    name: worker
    template:
      spec:
        restartPolicy: OnFailure
        containers:
        - name: worker
          image: myacr.azurecr.io/ml/eval:3.1.0@sha256:c5f3e4a6d7f8190a34c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def git_repo(root: Path, files: dict[str, str], worktree: bool = False) -> Path:
    """A git work tree as the root finder sees it: a `.git` folder (or, in a worktree, a file)."""
    write(root, files)
    if worktree:
        (root / ".git").write_text("gitdir: /elsewhere/.git/worktrees/x\n", encoding="utf-8")
    else:
        (root / ".git").mkdir()
    return root


def cli(cwd: Path, *args: str) -> tuple[int, str]:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, [*args, "--no-color", "--jobs", "1", "--no-cache"], catch_exceptions=False)
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout


def findings(cwd: Path, *args: str) -> list[tuple[str, int, str]]:
    code, out = cli(cwd, *args, "--format", "json")
    assert code in (0, 1), out
    return [(f["path"], f["line"], f["rule"]) for f in json.loads(out)["findings"]]


# ---------------------------------------------------------------------------------------------
# Finding roots


def test_the_nearest_config_wins_then_the_git_top_then_the_cwd_then_the_path(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", {"sets/a/.mlops-lint.yaml": "", "sets/a/x.yaml": "",
                                        "sets/b/pyproject.toml": "[tool.mlops-lint]\nfail-on = 'error'\n",
                                        "sets/c/pyproject.toml": "[tool.black]\n", "deploy/x.yaml": ""})
    write(tmp_path, {"work/x.yaml": "", "else/x.yaml": ""})
    finder = RootFinder(tmp_path / "work")
    a = finder.root(str(repo / "sets" / "a"), repo / "sets" / "a" / "x.yaml")
    assert (a.found, a.folder, a.config, a.git) == (BY_CONFIG, repo / "sets" / "a", repo / "sets/a/.mlops-lint.yaml", repo)
    b = finder.root(str(repo / "sets" / "b"), repo / "sets" / "b")
    assert (b.found, b.config) == (BY_CONFIG, repo / "sets" / "b" / "pyproject.toml")
    c = finder.root(str(repo / "sets" / "c"), repo / "sets" / "c")  # a pyproject without our table is no config
    assert (c.found, c.folder) == (BY_GIT, repo)
    assert finder.root(str(repo / "deploy"), repo / "deploy" / "x.yaml").folder == repo
    work = finder.root(str(tmp_path / "work"), tmp_path / "work" / "x.yaml")
    assert (work.found, work.folder) == (BY_CWD, tmp_path / "work")
    other = finder.root(str(tmp_path / "else"), tmp_path / "else" / "x.yaml")
    assert (other.found, other.folder) == (BY_PATH, tmp_path / "else" / "x.yaml")


def test_a_worktree_or_submodule_git_file_marks_the_top(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "wt", {"deploy/job.yaml": ""}, worktree=True)
    root = RootFinder(tmp_path).root(str(repo / "deploy"), repo / "deploy" / "job.yaml")
    assert (root.found, root.folder, root.git) == (BY_GIT, repo, repo)


def test_each_folder_is_looked_at_once(tmp_path: Path) -> None:
    """The speed budget: one look per distinct folder (its parents included), never one per file."""
    repo = git_repo(tmp_path / "repo", {f"d{d}/f{f}.yaml": "" for d in range(4) for f in range(50)})
    finder = RootFinder(tmp_path)
    roots = {finder.root(str(path.parent), path).folder for path in sorted(repo.rglob("*.yaml"))}
    assert roots == {repo}
    assert finder.looked == 4 + len(repo.parents) + 1  # d0..d3, repo itself and each of its parents
    finder.root(str(repo / "d0"), repo / "d0" / "f0.yaml")
    assert finder.looked == 4 + len(repo.parents) + 1


# ---------------------------------------------------------------------------------------------
# Projects


def test_a_config_less_file_in_a_git_repo_sees_the_repos_scripts_and_queues(tmp_path: Path) -> None:
    """`mlops-lint deploy/job.yaml` without any config: the repository is the project, so the
    node-pool script (XPL002: the pool's taint is not tolerated) and the LocalQueues (QUE002:
    the queue name is a typo of research-queue) are known."""
    repo = git_repo(tmp_path / "repo", {"infra/pools.sh": POOLS, "infra/queues.yaml": QUEUE, "deploy/job.yaml": JOB})
    alone = {rule for _, _, rule in findings(repo, "deploy/job.yaml")}
    assert {"XPL002", "QUE002"} <= alone
    from_below = findings(repo / "deploy", "job.yaml")
    assert {rule for _, _, rule in from_below} == alone and {path for path, _, _ in from_below} == {"job.yaml"}
    # the PATHs themselves (what a run without a root used to see) know neither
    only = lint(LintRequest(paths=[repo / "deploy" / "job.yaml"], config=Config(), registry=REGISTRY, cwd=repo))
    assert not {"XPL002", "QUE002"} & {r.rule for r in only.active}


def test_named_files_get_the_findings_of_a_full_run(tmp_path: Path) -> None:
    """Pre-commit names only the changed files: each gets what `mlops-lint .` gives it."""
    repo = git_repo(tmp_path / "repo", {"infra/pools.sh": POOLS, "infra/queues.yaml": QUEUE, "deploy/job.yaml": JOB,
                                        "deploy/sweep.yaml": KUEUE_JOB})
    full = findings(repo, ".")
    named = findings(repo, "deploy/job.yaml", "infra/queues.yaml")
    assert named == [f for f in full if f[0] in ("deploy/job.yaml", "infra/queues.yaml")]
    assert {rule for _, _, rule in named} >= {"XPL002", "QUE002"}


def test_two_repositories_are_two_projects(tmp_path: Path) -> None:
    """`mlops-lint repo-a repo-b`: repo-a's Volcano gang and repo-b's Kueue queue in namespaces of
    the same name are in different clusters, so QUE009 (two gang schedulers in one namespace)
    does not fire, as it does when both are in one repository."""
    git_repo(tmp_path / "repo-a", {"gang.yaml": VOLCANO_JOB})
    git_repo(tmp_path / "repo-b", {"queue.yaml": QUEUE, "sweep.yaml": KUEUE_JOB})
    apart = findings(tmp_path, "repo-a", "repo-b")
    assert "QUE009" not in {rule for _, _, rule in apart}
    assert {path for path, _, _ in apart} >= {"repo-a/gang.yaml", "repo-b/sweep.yaml"}
    git_repo(tmp_path / "one", {"a/gang.yaml": VOLCANO_JOB, "b/queue.yaml": QUEUE, "b/sweep.yaml": KUEUE_JOB})
    assert ("one/a/gang.yaml", 8, "QUE009") in findings(tmp_path, "one/a", "one/b")


def test_a_nested_config_makes_a_project_of_its_own(tmp_path: Path) -> None:
    """A folder with its own config, found under a PATH of another project, is linted as its own
    project: with its own settings, and without the objects of the project around it."""
    repo = git_repo(tmp_path / "repo", {"queues.yaml": QUEUE, "team/.mlops-lint.yaml": "ignore: [SEC]\n",
                                        "team/job.yaml": JOB})
    found = findings(repo, ".")
    team = {rule for path, _, rule in found if path == "team/job.yaml"}
    assert team and not any(rule.startswith("SEC") for rule in team)
    assert "QUE002" not in team  # the repository's LocalQueue is not in this project
    assert findings(repo, "team/job.yaml") == [f for f in found if f[0] == "team/job.yaml"]


def test_each_project_has_its_own_fail_on_and_the_exit_status_covers_all(tmp_path: Path) -> None:
    write(tmp_path, {"quiet/.mlops-lint.yaml": "fail-on: never\n", "quiet/job.yaml": JOB,
                     "strict/.mlops-lint.yaml": "fail-on: error\nselect: [RES004]\n", "strict/job.yaml": JOB})
    code, out = cli(tmp_path, "quiet", "strict")
    assert code == 0 and "RES004" in out  # warnings only where fail-on is error; quiet never fails
    write(tmp_path, {"strict/.mlops-lint.yaml": "fail-on: warning\nselect: [RES004]\n"})
    assert cli(tmp_path, "quiet", "strict")[0] == 1
    assert cli(tmp_path, "quiet")[0] == 0


def test_a_bad_config_of_any_project_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    write(tmp_path, {"a/.mlops-lint.yaml": "", "a/job.yaml": JOB, "b/.mlops-lint.yaml": "fail-on: sometimes\n",
                     "b/job.yaml": JOB})
    result = CliRunner().invoke(main, [str(tmp_path / "a"), str(tmp_path / "b"), "--no-cache"])
    assert result.exit_code == 2 and "b/.mlops-lint.yaml" in result.output and "fail-on" in result.output


# ---------------------------------------------------------------------------------------------
# SARIF


def sarif_uris(cwd: Path, *args: str) -> tuple[str, set[str]]:
    code, out = cli(cwd, *args, "--format", "sarif")
    run = json.loads(out)["runs"][0]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] for r in run["results"]} == {
        "%SRCROOT%"}
    return run["originalUriBaseIds"]["%SRCROOT%"]["uri"], uris


def test_sarif_uris_are_relative_to_the_git_top_wherever_the_command_runs(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", {"deploy/ml/job.yaml": JOB, "infra/pools.sh": POOLS})
    top = repo.resolve().as_uri() + "/"
    assert sarif_uris(repo, ".") == (top, {"deploy/ml/job.yaml"})
    assert sarif_uris(repo / "deploy" / "ml", "job.yaml") == (top, {"deploy/ml/job.yaml"})
    assert sarif_uris(tmp_path, "repo/deploy") == (top, {"deploy/ml/job.yaml"})
    # text and JSON stay relative to the working folder
    assert {path for path, _, _ in findings(repo / "deploy", "ml")} == {"ml/job.yaml"}


def test_sarif_notes_are_relative_to_the_git_top_too(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", {"sub/chart/Chart.yaml": "name: c\n", "sub/chart/templates/job.yaml": JOB,
                                        "sub/job.yaml": JOB, ".mlops-lint.yaml": "helm: {enabled: never}\n"})
    run = json.loads(cli(repo / "sub", ".", "--format", "sarif")[1])["runs"][0]
    [note] = run["invocations"][0]["toolExecutionNotifications"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "sub/chart/templates"


def test_a_named_stdin_document_is_linted_in_its_files_project(tmp_path: Path) -> None:
    """An editor piping the buffer of deploy/job.yaml: the repository is its project, as for the file."""
    repo = git_repo(tmp_path / "repo", {"infra/pools.sh": POOLS, "infra/queues.yaml": QUEUE, "deploy/job.yaml": JOB})
    os.chdir(repo)
    result = CliRunner().invoke(main, ["-", "--stdin-filename", "deploy/job.yaml", "--format", "json", "--no-cache",
                                       "--jobs", "1"], input=JOB, catch_exceptions=False)
    piped = [(f["path"], f["line"], f["rule"]) for f in json.loads(result.stdout)["findings"]]
    assert piped == findings(repo, "deploy/job.yaml") and {"XPL002", "QUE002"} <= {rule for _, _, rule in piped}


def test_sarif_fingerprints_do_not_depend_on_the_working_folder(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", {"deploy/job.yaml": JOB})

    def hashes(cwd: Path, path: str) -> list[str]:
        run = json.loads(cli(cwd, path, "--format", "sarif")[1])["runs"][0]
        return [r["partialFingerprints"]["primaryLocationLineHash"] for r in run["results"]]

    assert hashes(repo, "deploy/job.yaml") == hashes(repo / "deploy", "job.yaml")


def test_sarif_of_several_repositories_is_relative_to_the_folder_holding_them(tmp_path: Path) -> None:
    """One SARIF log has one %SRCROOT%: files of several repositories are given relative to the
    deepest folder holding them all (upload one log per repository to code scanning)."""
    git_repo(tmp_path / "repo-a", {"job.yaml": JOB})
    git_repo(tmp_path / "repo-b", {"job.yaml": JOB})
    base, uris = sarif_uris(tmp_path / "repo-a", ".", "../repo-b")
    assert base == tmp_path.resolve().as_uri() + "/" and uris == {"repo-a/job.yaml", "repo-b/job.yaml"}


# ---------------------------------------------------------------------------------------------
# Cache


def test_cache_keys_differ_per_root(tmp_path: Path) -> None:
    from mlops_lint.cache import code_key, project_key
    from mlops_lint.engine import enabled_rules

    rules = enabled_rules(REGISTRY, Config())
    code = code_key(rules, REGISTRY)
    assert project_key(code, rules, Config(), tmp_path / "a") != project_key(code, rules, Config(), tmp_path / "b")
    assert project_key(code, rules, Config(), tmp_path / "a") == project_key(code, rules, Config(), tmp_path / "a")


def test_a_cached_run_of_several_roots_gives_the_cold_output(tmp_path: Path) -> None:
    git_repo(tmp_path / "repo-a", {"gang.yaml": VOLCANO_JOB, "pools.sh": POOLS})
    git_repo(tmp_path / "repo-b", {"queue.yaml": QUEUE, "sweep.yaml": KUEUE_JOB, "job.yaml": JOB})
    os.chdir(tmp_path)
    args = ["repo-a", "repo-b", "--format", "json", "--jobs", "1", "--cache-dir", str(tmp_path / "cache")]
    runs = [CliRunner().invoke(main, args, catch_exceptions=False).stdout for _ in range(2)]
    assert runs[0] == runs[1] == cli(tmp_path, "repo-a", "repo-b", "--format", "json")[1]
    (tmp_path / "repo-b" / "queue.yaml").write_text(QUEUE.replace("research-queue", "reseach-queue"))
    changed = CliRunner().invoke(main, args, catch_exceptions=False).stdout
    assert changed == cli(tmp_path, "repo-a", "repo-b", "--format", "json")[1] != runs[0]


@pytest.fixture(autouse=True)
def _restore_cwd():
    old = os.getcwd()
    yield
    os.chdir(old)


def test_folders_the_walk_listed_bare_are_not_looked_at_and_give_the_same_roots(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk tells which folders it listed without a config name or .git in them; a root's
    look at those needs no stat, and the roots are the ones the stats give: a nested config, a
    nested git file, a pyproject.toml without our table and a folder named .git still count."""
    from mlops_lint import discover, roots

    repo = git_repo(tmp_path / "repo", {"a/b/x.yaml": "", "team/.mlops-lint.yaml": "", "team/c/x.yaml": "",
                                        "tools/pyproject.toml": "[tool.black]\n", "tools/x.yaml": "",
                                        "sub/.git": "gitdir: ../.git/modules/sub\n", "sub/d/x.yaml": "",
                                        "up/.MLOPS-LINT.yaml": "", "up/x.yaml": ""})
    found = discover.walk([repo], root=None)
    assert os.fspath(repo / "a" / "b") in found.bare and os.fspath(repo / "team") not in found.bare
    assert os.fspath(repo / "up") not in found.bare  # a name that only differs in case: looked at as before
    looked: list[str] = []
    real = roots.config_in
    monkeypatch.setattr(roots, "config_in", lambda folder, ignored=None: looked.append(folder) or real(folder, ignored))
    plain, hinted = RootFinder(tmp_path), RootFinder(tmp_path)
    hinted.bare.update(found.bare)
    folders = sorted({os.path.dirname(os.fspath(source.path)) for source in found.files})
    assert [hinted.root(folder, repo) for folder in folders] == [plain.root(folder, repo) for folder in folders]
    assert {hinted.root(os.fspath(repo / "team" / "c"), repo).folder, hinted.root(os.fspath(repo / "sub" / "d"), repo).folder} \
        == {repo / "team", repo / "sub"}
    looked.clear()
    RootFinder(tmp_path).root(os.fspath(repo / "a" / "b"), repo)
    unhinted = len(looked)
    looked.clear()
    again = RootFinder(tmp_path)
    again.bare.update(found.bare)
    again.root(os.fspath(repo / "a" / "b"), repo)
    assert os.fspath(repo / "a" / "b") not in looked and os.fspath(repo / "a") not in looked
    assert len(looked) == unhinted - 2
