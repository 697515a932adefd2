"""issue 33 items 3, 4 and 7 on their reproductions (../shared/repros/trust/<folder>, each its own
project), run as a user runs them, plus the cases around each: variant files are alternatives, a
GPU alone is no sign of training, one cause gives one finding."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from mlops_lint.cli import main

# ../shared beside the checkout (a worktree may sit one level deeper: the nearest one upward)
REPROS = next((folder / "shared" / "repros" / "trust" for folder in Path(__file__).resolve().parents[1].parents
               if (folder / "shared" / "repros" / "trust").is_dir()),
              Path(__file__).resolve().parents[1].parent / "shared" / "repros" / "trust")


def lint(folder: Path, *extra: str) -> list[dict]:
    old = Path.cwd()
    os.chdir(folder)
    try:
        result = CliRunner().invoke(main, ["--no-cache", "--jobs", "1", "--format", "json", *extra, "."],
                                    catch_exceptions=False)
    finally:
        os.chdir(old)
    assert result.exit_code in (0, 1), result.output
    return [f for f in json.loads(result.output)["findings"] if not f.get("suppressed")]


def repro(name: str, tmp_path: Path) -> Path:
    source = REPROS / name
    if not source.is_dir():
        pytest.skip(f"{source} is not on this machine")
    target = tmp_path / name
    shutil.copytree(source, target)
    return target


def found(findings: list[dict], *rules: str) -> list[tuple[str, str, int, int]]:
    return sorted((f["rule"], f["path"], f["line"], f["column"]) for f in findings if not rules or f["rule"] in rules)


# ---------------------------------------------------------------------------------------------
# item 3: variant files are alternatives


def test_que006_alternative_variant_admits(tmp_path: Path) -> None:
    """The whole-GPU ClusterQueue of cluster-queues.yaml admits the Job; its MIG alternative
    (cluster-queues-mig.yaml, same name, same cohort) does not: one alternative is enough."""
    folder = repro("que006-alternative-variant", tmp_path)
    assert found(lint(folder), "QUE006") == []


def test_que006_every_alternative_refuses(tmp_path: Path) -> None:
    """Asking more than either alternative can give is still reported."""
    folder = repro("que006-alternative-variant", tmp_path)
    job = folder / "demo-jobs" / "whole-gpu-job.yaml"
    job.write_text(job.read_text().replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 6"))
    findings = [f for f in lint(folder) if f["rule"] == "QUE006"]
    assert [(f["path"], f["line"], f["column"]) for f in findings] == [("demo-jobs/whole-gpu-job.yaml", 18, 38)]
    assert "ClusterQueue `team-a-cq`" in findings[0]["message"]


# ---------------------------------------------------------------------------------------------
# item 4: training is recognised by evidence, not by a GPU alone


def test_smoke_test_is_not_training(tmp_path: Path) -> None:
    """An nvidia-smi pod on ubuntu keeps its GPU and hygiene findings, not the trainer's."""
    folder = repro("smoke-test-as-training", tmp_path)
    findings = lint(folder)
    assert found(findings, "RES004", "RES007", "IMG003") == []
    assert {f["rule"] for f in findings} == {"SEC001", "SEC002", "SEC003", "IMG002", "RES001", "RES002", "GPU002"}


ARTICLE = REPROS.parent.parent / "seed" / "mlops-aks-best-practices.txt"


def article_blocks() -> list[str]:
    """The article's manifests: each run of YAML lines from an `apiVersion:` line."""
    import re

    yamlish = re.compile(r'^(---|[A-Za-z0-9_.\-/"]+:( |$)|- |\s)')
    lines, blocks, i = ARTICLE.read_text().split("\n"), [], 0
    while i < len(lines):
        if lines[i].startswith("apiVersion:"):
            block = []
            while i < len(lines) and (lines[i] == "" or yamlish.match(lines[i])):
                block.append(lines[i])
                i += 1
            blocks.append("\n".join(block).rstrip() + "\n")
        else:
            i += 1
    return blocks


def test_the_articles_smoke_tests_are_not_trainers(tmp_path: Path) -> None:
    """The article's GPU pods and queued Jobs that run `set -e; nvidia-smi; echo; sleep` hold a
    GPU but train nothing: the trainer rules fire only on its PyTorchJob and TFJob, which run
    NCCL collectives."""
    if not ARTICLE.is_file():
        pytest.skip(f"{ARTICLE} is not on this machine")
    (tmp_path / ".mlops-lint.yaml").write_text("profile: aks-standard\n")
    for n, block in enumerate(article_blocks(), 1):
        (tmp_path / f"block{n:02d}.yaml").write_text(block)
    findings = lint(tmp_path, "--select", "RES004,RES007,IMG003,QUE012")
    assert sorted({(f["rule"], f["object"]["kind"]) for f in findings}) == [("RES004", "PyTorchJob"), ("RES004", "TFJob")]


def article_script() -> str:
    """The article's Azure CLI snippets (variables and `az aks` commands with their continuation
    lines), in order, as one script: the cluster the article's manifests run on."""
    import re

    lines, script, inside = ARTICLE.read_text().split("\n"), ["#!/usr/bin/env bash"], False
    for line in lines:
        if re.match(r"^(az aks |[A-Z_]+=\S)", line):
            inside = True
        if inside:
            script.append(line)
            inside = line.endswith("\\") or bool(re.match(r"^[A-Z_]+=\S", line))
    return "\n".join(script) + "\n"


ISSUE37_RULES = "XPL007,STO008,STO009,STO010,GPU011,GPU012"


def test_the_articles_blocks_give_no_false_alarm_of_issue_37s_rules(tmp_path: Path) -> None:
    """The article's manifests with its az commands (a GPU pool of at most 8 T4 nodes, the Blob
    driver enabled, its Azure Files shares for user 1000), linted together and one block at a time:
    none of its gangs exceeds the pool, its Blob class has its driver, its shares admit its pods,
    it has no multi-node Azure Disk claim and its MIG trial selects its own layout."""
    if not ARTICLE.is_file():
        pytest.skip(f"{ARTICLE} is not on this machine")
    script = article_script()
    assert "--enable-blob-driver" in script and "--max-count 8" in script
    together = tmp_path / "together"
    together.mkdir()
    (together / ".mlops-lint.yaml").write_text("profile: aks-standard\n")
    (together / "cluster.sh").write_text(script)
    blocks = article_blocks()
    for n, block in enumerate(blocks, 1):
        (together / f"block{n:02d}.yaml").write_text(block)
    assert lint(together, "--select", ISSUE37_RULES) == []
    # the rules do judge these blocks: one-node pools and a disabled Blob driver are reported
    shrunk = script.replace("--max-count 8", "--max-count 1").replace("--max-count 4", "--max-count 1")
    (together / "cluster.sh").write_text(shrunk.replace("--enable-blob-driver", "--disable-blob-driver"))
    assert sorted((f["rule"], f["object"]["name"]) for f in lint(together, "--select", ISSUE37_RULES)) == [
        ("STO010", "ml-azureblob-nfs"), ("XPL007", "pytorch-nccl-example"),
        ("XPL007", "tensorflow-multiworker-example"), ("XPL007", "volcano-gpu-training")]
    for n, block in enumerate(blocks, 1):
        alone = tmp_path / f"alone{n:02d}"
        alone.mkdir()
        (alone / ".mlops-lint.yaml").write_text("profile: aks-standard\n")
        (alone / "cluster.sh").write_text(script)
        (alone / "block.yaml").write_text(block)
        assert lint(alone, "--select", ISSUE37_RULES) == [], n


# ---------------------------------------------------------------------------------------------
# item 7: one cause, one finding


def test_kaito_workspace_without_output_is_one_finding(tmp_path: Path) -> None:
    folder = repro("extra-kai003-sch002-same-node", tmp_path)
    findings = [f for f in lint(folder) if f["line"] == 12]
    assert [(f["rule"], f["column"], f["message"]) for f in findings] == [
        ("SCH002", 1, 'missing required field "tuning.output"')]


QUEUES = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: gpu}
spec:
  nodeLabels: {accelerator: nvidia}
  tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - COVERED
    - name: gpu
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 4}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: ml}
spec: {clusterQueue: cq}
"""
QUEUED_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: ml
  labels: {LABEL}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
        command: [python, train.py]
        resources:
          limits: {nvidia.com/gpu: 1}
          requests: {nvidia.com/gpu: 1}
"""


@pytest.mark.parametrize("covered,label,expected", [
    # the ClusterQueue's group lacks coveredResources: SCH002 there, nothing about placement on the Job
    ("flavors:", "kueue.x-k8s.io/queue-name: lq", [("SCH002", "queues.yaml", 14)]),
    # valid: the flavor injects the GPU pool's labels and toleration
    ("coveredResources: [nvidia.com/gpu]\n    flavors:", "kueue.x-k8s.io/queue-name: lq", []),
    # not queued: the Job's own placement is judged
    ("flavors:", "app: train", [("GPU005", "job.yaml", 18), ("GPU006", "job.yaml", 10), ("SCH002", "queues.yaml", 14)]),
])
def test_an_invalid_cluster_queue_is_its_own_finding_only(tmp_path: Path, covered: str, label: str,
                                                          expected: list) -> None:
    (tmp_path / ".mlops-lint.yaml").write_text("profile: aks-standard\n")
    (tmp_path / "queues.yaml").write_text(QUEUES.replace("COVERED", covered))
    (tmp_path / "job.yaml").write_text(QUEUED_JOB.replace("LABEL", label))
    findings = lint(tmp_path, "--select", "GPU005,GPU006,SCH002,QUE006")
    assert [(f["rule"], f["path"], f["line"]) for f in findings] == sorted(expected, key=lambda e: (e[1], e[2], e[0]))


SCH003_CASES = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: ml}
spec: {clusterQueue: cq}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec: {}
---
apiVersion: batch/v1beta1
kind: CronJob
metadata: {name: nightly, namespace: ml}
spec:
  schedule: "0 0 * * *"
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox:1.36}]}}}}
---
apiVersion: apps/v2
kind: Deployment
metadata: {name: web, namespace: ml}
"""


def test_sch003_names_each_case(tmp_path: Path) -> None:
    """SCH003 keeps its id; a deprecated-but-served version (info), one not served yet, one never
    served and one removed each get their own slug, and each slug selects and suppresses SCH003."""
    (tmp_path / ".mlops-lint.yaml").write_text('profile: aks-standard\nkubernetes-version: "1.29"\n')
    (tmp_path / "objects.yaml").write_text(SCH003_CASES)
    findings = lint(tmp_path, "--select", "SCH003")
    assert [(f["rule"], f["slug"], f["severity"], f["line"]) for f in findings] == [
        ("SCH003", "api-version-deprecated", "info", 1),
        ("SCH003", "api-version-not-yet-served", "error", 6),
        ("SCH003", "api-version-removed", "error", 11),
        ("SCH003", "api-version-not-served", "error", 18),
    ]
    assert "still served but deprecated" in findings[0]["message"] and "yet" in findings[1]["message"]
    assert [f["line"] for f in lint(tmp_path, "--select", "api-version-deprecated")] == [1, 6, 11, 18]
    assert lint(tmp_path, "--select", "SCH003", "--ignore", "api-version-not-yet-served") == []
    (tmp_path / "objects.yaml").write_text("# mlops-lint: disable=api-version-deprecated kueue v1beta1 until 0.14\n"
                                           + SCH003_CASES)
    assert [f["line"] for f in lint(tmp_path, "--select", "SCH003")] == [7, 12, 19]
    # the rule's own slug, as before the cases had theirs, suppresses every case
    (tmp_path / "objects.yaml").write_text("# mlops-lint: disable=api-version-removed\n" + SCH003_CASES)
    assert [f["line"] for f in lint(tmp_path, "--select", "SCH003")] == [7, 12, 19]


def test_the_articles_blocks_and_issue_37_rules(tmp_path: Path) -> None:
    """QUE016, IMG005, IMG007, DKR009 and REL001-REL003 on the article's manifests (each block a file,
    then all in one file) and its Dockerfile: its PriorityClasses rank inference above training, its
    metrics Deployment serves no model, its image installs a requirements file. The one finding is
    IMG005 on the checkpointing Job, which runs `pytorch/pytorch:…-cuda12.4…` with a CPU request
    only: the article's own rule ("maintain separate CPU and GPU image variants") says that job
    lacks its GPU request or pulls CUDA for nothing."""
    if not ARTICLE.is_file():
        pytest.skip(f"{ARTICLE} is not on this machine")
    select = ("--select", "QUE016,IMG005,IMG007,DKR009,REL001,REL002,REL003")
    (tmp_path / ".mlops-lint.yaml").write_text("profile: aks-standard\n")
    blocks = article_blocks()
    for n, block in enumerate(blocks, 1):
        (tmp_path / f"block{n:02d}.yaml").write_text(block)
    lines = ARTICLE.read_text().split("\n")
    start = lines.index("FROM pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime")
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("ENTRYPOINT"))
    (tmp_path / "Dockerfile").write_text("\n".join(lines[start:end + 1]) + "\n")
    expected = [("IMG005", "Job", "checkpointed-pytorch-training")]
    found = lint(tmp_path, *select)
    assert [(f["rule"], f["object"]["kind"], f["object"]["name"]) for f in found] == expected
    together = tmp_path / "together"
    together.mkdir()
    (together / ".mlops-lint.yaml").write_text("profile: aks-standard\n")
    (together / "all.yaml").write_text("---\n".join(blocks))
    found = lint(together, *select)
    assert [(f["rule"], f["object"]["kind"], f["object"]["name"]) for f in found] == expected


STOP42_RULES = "AKS008,AKS009,AKS010,GPU014,GPU015,KAI006,OBS005,QUE018,QUE019"


def test_the_articles_blocks_give_no_false_alarm_of_the_cluster_join_rules(tmp_path: Path) -> None:
    """The rules that join the project's cluster definition with its workloads (workload identity,
    the policy engine, the GPU driver, fixed-size GPU pools, node agents and GPU taints, KAITO's
    add-on, the monitors' API group, priorities, Kueue integrations), on the article's manifests
    with its az commands, together and one block at a time: the article's cluster serves its own
    workloads, so none of them fires."""
    if not ARTICLE.is_file():
        pytest.skip(f"{ARTICLE} is not on this machine")
    script, blocks = article_script(), article_blocks()
    projects = {"together": dict(enumerate(blocks, 1))} | {f"alone{n:02d}": {n: b} for n, b in enumerate(blocks, 1)}
    for name, chosen in projects.items():
        folder = tmp_path / name
        folder.mkdir()
        (folder / ".mlops-lint.yaml").write_text("profile: aks-standard\n")
        (folder / "cluster.sh").write_text(script)
        for n, block in chosen.items():
            (folder / f"block{n:02d}.yaml").write_text(block)
        assert lint(folder, "--select", STOP42_RULES) == [], name
    # they do judge this cluster: its GPU pool made without the driver gives GPU014
    (tmp_path / "together" / "cluster.sh").write_text(script.replace("--node-vm-size", "--gpu-driver none --node-vm-size", 1))
    assert {f["rule"] for f in lint(tmp_path / "together", "--select", STOP42_RULES)} == {"GPU014"}


STOP45_RULES = "XPL008,DST010,QUE020"


def test_the_articles_blocks_give_no_false_alarm_of_the_lifecycle_rules(tmp_path: Path) -> None:
    """XPL008 (serving pools that scale to zero), DST010 (TFJob replica layouts) and QUE020 (Volcano
    lifecycle policies) on the article's manifests with its az commands (its GPU pool scales to
    zero: `--min-count 0`), together and one block at a time: its TFJob runs Workers only, its
    Volcano Job restarts on `PodEvicted` and `PodFailed`, and it runs no model server, so none
    fires. They do judge these blocks: without the Volcano Job's eviction policy QUE020 fires
    there, a TFJob whose Workers become parameter servers gives DST010, and a vLLM server on the
    article's pool gives XPL008."""
    if not ARTICLE.is_file():
        pytest.skip(f"{ARTICLE} is not on this machine")
    script, blocks = article_script(), article_blocks()
    assert "--min-count 0" in script
    projects = {"together": dict(enumerate(blocks, 1))} | {f"alone{n:02d}": {n: b} for n, b in enumerate(blocks, 1)}
    for name, chosen in projects.items():
        folder = tmp_path / name
        folder.mkdir()
        (folder / ".mlops-lint.yaml").write_text("profile: aks-standard\n")
        (folder / "cluster.sh").write_text(script)
        for n, block in chosen.items():
            (folder / f"block{n:02d}.yaml").write_text(block)
        assert lint(folder, "--select", STOP45_RULES) == [], name
    together = tmp_path / "together"
    volcano = next(n for n, b in enumerate(blocks, 1) if "batch.volcano.sh" in b and "\nkind: Job" in b)
    tfjob = next(n for n, b in enumerate(blocks, 1) if "\nkind: TFJob" in b)
    evicted = "  - event: PodEvicted\n    action: RestartJob\n"
    assert evicted in blocks[volcano - 1] and "    Worker:\n" in blocks[tfjob - 1]
    (together / f"block{volcano:02d}.yaml").write_text(blocks[volcano - 1].replace(evicted, ""))
    (together / f"block{tfjob:02d}.yaml").write_text(blocks[tfjob - 1].replace("    Worker:\n", "    PS:\n"))
    (together / "serve.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: llm, namespace: serving}\nspec:\n  replicas: 1\n"
        "  selector: {matchLabels: {app: llm}}\n  template:\n    metadata: {labels: {app: llm}}\n    spec:\n"
        "      nodeSelector: {accelerator: nvidia}\n"
        "      tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]\n"
        "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.6.3\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n")
    found = sorted((f["rule"], f["object"]["name"]) for f in lint(together, "--select", STOP45_RULES))
    assert found == [("DST010", "tensorflow-multiworker-example"), ("QUE020", "volcano-gpu-training"),
                     ("XPL008", "llm")]
