"""Storage and checkpoint semantics beyond the fixtures: checkpoint evidence, reclaim resolution,
where findings land when the claim lives in another file, and the pod counting of STO003."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.index import ProjectIndex
from mlops_lint.model.storage import (claim_reclaim, expand, is_checkpoint_destination, is_destination, mentions_checkpoint,
                                  mount_for, pvc_claim)
from mlops_lint.model.k8s import workload_of
from mlops_lint.registry import load_registry
from mlops_lint.sources.yaml_k8s import load_text

REGISTRY = load_registry()


def index_of(*texts: str) -> ProjectIndex:
    return ProjectIndex([load_text(textwrap.dedent(t), f"file{i}.yaml") for i, t in enumerate(texts)])


def run(tmp_path: Path, files: dict[str, str], select: str, *, targets: list[str] | None = None,
        config: Config | None = None) -> list:
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
    config = config or Config(root=tmp_path)
    paths = [tmp_path / t for t in (targets or list(files))]
    report = lint(LintRequest(paths=paths, config=config, registry=REGISTRY, select=[select], cwd=tmp_path))
    return report.active


# ---------------------------------------------------------------------------------------------
# Evidence


@pytest.mark.parametrize("name, expected", [
    ("CHECKPOINT_DIR", True), ("--checkpoint-dir", True), ("ckpt_path", True), ("checkpointDir", True),
    ("save_checkpoints", True), ("checkpointer.output_dir", True), ("MODEL_CKPT_ROOT", True),
    ("checkpoint", False), ("ckpt", False), ("checkpoint_interval", False), ("checkpoint_timeout", False),
    ("async_checkpointing", False), ("resume_from_checkpoint", False), ("PRETRAINED_CKPT_PATH", False),
    ("load_checkpoint_dir", False), ("init_checkpoint", False), ("output_dir", False),
    ("--checkpoint-file", True), ("CKPT_FILE", True), ("--load-checkpoint-file", False), ("config_file", False),
    # torchtune's checkpointer reads the model from checkpoint_dir (and checkpoint_files)
    ("checkpointer.checkpoint_dir", False), ("checkpointer.checkpoint_files", False),
])
def test_checkpoint_destination_names(name: str, expected: bool) -> None:
    assert is_checkpoint_destination(name) is expected


@pytest.mark.parametrize("name, expected", [
    ("--output-dir", True), ("SCRATCH_DIR", True), ("--save-path", True),
    ("--model-dir", False), ("--resume-dir", False), ("--data", False), ("--epochs", False),
])
def test_destination_names(name: str, expected: bool) -> None:
    assert is_destination(name) is expected


@pytest.mark.parametrize("text", ["checkpoints", "/ckpts", "model-ckpt", "CheckPoint", "bert_CKPT_v2"])
def test_checkpoint_words_any_case(text: str) -> None:
    assert mentions_checkpoint(text)


@pytest.mark.parametrize("text", ["/data", "check-points", "models", None, 3])
def test_not_checkpoint_words(text) -> None:
    assert not mentions_checkpoint(text)


@pytest.mark.parametrize("text, env, expected", [
    ("$(ROOT)/ckpt", {"ROOT": "/mnt/a"}, "/mnt/a/ckpt"),
    ("${ROOT}/ckpt", {"ROOT": "/mnt/a"}, "/mnt/a/ckpt"),
    ("$ROOT/ckpt", {"ROOT": "/mnt/a"}, "/mnt/a/ckpt"),
    ("$$(ROOT)/ckpt", {"ROOT": "/mnt/a"}, "$(ROOT)/ckpt"),  # Kubernetes' escape
    ("$(MISSING)/ckpt", {}, None),
    ("{{ .Values.dir }}", {}, None),
    ("/plain", {}, "/plain"),
])
def test_expand(text: str, env: dict, expected) -> None:
    assert expand(text, env) == expected


MOUNTS_POD = """\
apiVersion: batch/v1
kind: Job
metadata: {name: t, namespace: ml-training}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
        volumeMounts:
        - {name: root, mountPath: /}
        - {name: data, mountPath: /data}
        - {name: ckpt, mountPath: /data/ckpt/}
"""


@pytest.mark.parametrize("path, volume", [
    ("/data/ckpt/run-1", "ckpt"), ("/data/ckpt", "ckpt"), ("/data/ckpts", "data"), ("/data", "data"),
    ("/database", "root"), ("/tmp/x", "root"),
])
def test_longest_mount_prefix(path: str, volume: str) -> None:
    container = workload_of(load_text(MOUNTS_POD, "j.yaml").objects[0]).pods[0].containers[0]
    _, mount = mount_for(container, path)
    assert mount["name"] == volume


# ---------------------------------------------------------------------------------------------
# Reclaim resolution


def reclaim_of(pvc_name: str, *texts: str):
    index = index_of(*texts)
    return claim_reclaim(index, pvc_claim(index.get("PersistentVolumeClaim", pvc_name, "ml")))


PVC = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: ckpt
  namespace: ml
  {annotations}
spec:
  accessModes: [ReadWriteOnce]
  {extra}
"""


def pvc(extra: str = "", annotations: str = "") -> str:
    return PVC.format(extra=extra, annotations=annotations)


def test_no_class_is_the_aks_default_and_deletes() -> None:
    reclaim = reclaim_of("ckpt", pvc())
    assert (reclaim.policy, reclaim.class_name) == ("Delete", "default")


def test_project_default_class_wins_over_aks_default() -> None:
    sc = """\
    apiVersion: storage.k8s.io/v1
    kind: StorageClass
    metadata:
      name: keep
      annotations: {storageclass.kubernetes.io/is-default-class: "true"}
    provisioner: disk.csi.azure.com
    reclaimPolicy: Retain
    """
    reclaim = reclaim_of("ckpt", pvc(), sc)
    assert (reclaim.policy, reclaim.class_name) == ("Retain", "keep")


def test_beta_annotation_wins_over_storage_class_name() -> None:
    sc = """\
    apiVersion: storage.k8s.io/v1
    kind: StorageClass
    metadata: {name: keep}
    provisioner: file.csi.azure.com
    reclaimPolicy: Retain
    """
    reclaim = reclaim_of("ckpt", pvc("storageClassName: managed-csi",
                                     "annotations: {volume.beta.kubernetes.io/storage-class: keep}"), sc)
    assert (reclaim.policy, reclaim.class_name) == ("Retain", "keep")


def test_redefined_builtin_class_keeps_aks_policy() -> None:
    sc = """\
    apiVersion: storage.k8s.io/v1
    kind: StorageClass
    metadata: {name: managed-csi}
    provisioner: disk.csi.azure.com
    reclaimPolicy: Retain
    """
    assert reclaim_of("ckpt", pvc("storageClassName: managed-csi"), sc).policy == "Delete"


def test_class_without_reclaim_policy_deletes() -> None:
    sc = """\
    apiVersion: storage.k8s.io/v1
    kind: StorageClass
    metadata: {name: zrs}
    provisioner: disk.csi.azure.com
    """
    assert reclaim_of("ckpt", pvc("storageClassName: zrs"), sc).policy == "Delete"


def test_static_pv_defaults_to_retain_and_claim_ref_binds() -> None:
    pv = """\
    apiVersion: v1
    kind: PersistentVolume
    metadata: {name: pv1}
    spec:
      claimRef: {name: ckpt, namespace: ml}
      nfs: {server: 10.0.0.4, path: /exports}
    """
    reclaim = reclaim_of("ckpt", pvc('storageClassName: ""'), pv)
    assert (reclaim.policy, reclaim.class_name, reclaim.obj.name) == ("Retain", None, "pv1")


@pytest.mark.parametrize("extra", ['storageClassName: ""', "storageClassName: not-a-class",
                                   "storageClassName: ${SC}", "volumeName: pv-elsewhere", "storageClassName: local-csi"])
def test_unknown_reclaim_is_not_judged(extra: str) -> None:
    assert reclaim_of("ckpt", pvc(extra)) is None


# ---------------------------------------------------------------------------------------------
# Where STO001 reports, and what a pre-commit run of one file sees

JOB_MOUNTING = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: OnFailure
      terminationGracePeriodSeconds: 120
      containers:
      - name: trainer
        image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
        env:
        - {name: CHECKPOINT_DIR, value: /mnt/state/ckpt}
        volumeMounts:
        - {name: state, mountPath: /mnt/state}
      volumes:
      - name: state
        persistentVolumeClaim: {claimName: run-state}
"""
STORAGE_CLASS = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: ml-keep}\nprovisioner: file.csi.azure.com\n"
CLAIM = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: run-state, namespace: ml}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: managed-csi-premium
"""


def test_mount_evidence_reports_in_the_workload_file(tmp_path: Path) -> None:
    found = run(tmp_path, {"job.yaml": JOB_MOUNTING, "pvc.yaml": CLAIM}, "STO001", targets=["job.yaml"])
    assert [(r.path, r.line, r.obj.kind) for r in found] == [("job.yaml", 18, "Job")]
    assert "PVC `run-state`" in found[0].message and "managed-csi-premium" in found[0].message
    assert "env CHECKPOINT_DIR=/mnt/state/ckpt" in found[0].message


def test_checkpoint_named_claim_is_reported_once_at_the_claim(tmp_path: Path) -> None:
    job = JOB_MOUNTING.replace("run-state", "run-ckpt")
    claim = CLAIM.replace("run-state", "run-ckpt")
    found = run(tmp_path, {"job.yaml": job, "pvc.yaml": claim}, "STO001")
    assert [(r.path, r.line) for r in found] == [("pvc.yaml", 6)]
    assert found[0].fix == "storageClassName: <a StorageClass with reclaimPolicy: Retain>"


def test_fix_names_a_retain_class_of_the_project(tmp_path: Path) -> None:
    sc = STORAGE_CLASS + "reclaimPolicy: Retain\n"
    found = run(tmp_path, {"pvc.yaml": CLAIM.replace("run-state", "ckpts"), "sc.yaml": sc}, "STO001")
    assert [r.fix for r in found] == ["storageClassName: ml-keep"]


def test_a_storage_class_deletes_only_if_every_variant_does(tmp_path: Path) -> None:
    """`ml-keep` is written in two variant files, one of them Retain: the claim's data may be kept,
    so STO001 does not report it; with both Delete it does."""
    claim = CLAIM.replace("run-state", "ckpts").replace("managed-csi-premium", "ml-keep")
    files = {"pvc.yaml": claim, "sc-dev.yaml": STORAGE_CLASS + "reclaimPolicy: Delete\n",
             "sc-prod.yaml": STORAGE_CLASS + "reclaimPolicy: Retain\n"}
    assert run(tmp_path, files, "STO001", targets=["pvc.yaml"]) == []
    files["sc-prod.yaml"] = STORAGE_CLASS + "mountOptions: [dir_mode=0777]\n"  # Delete by default
    assert [(r.rule, r.path, r.line) for r in run(tmp_path, files, "STO001", targets=["pvc.yaml"])] == [
        ("STO001", "pvc.yaml", 6)]


# ---------------------------------------------------------------------------------------------
# STO002 / STO005

def test_sto002_env_path_on_container_filesystem(tmp_path: Path) -> None:
    job = JOB_MOUNTING.replace("/mnt/state/ckpt", "/tmp/ckpt")
    found = run(tmp_path, {"job.yaml": job}, "STO002")
    assert [(r.line, r.rule) for r in found] == [(13, "STO002")]
    assert "/tmp/ckpt (env CHECKPOINT_DIR), which is on no volume mount" in found[0].message


TRAINER_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: finetune, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: OnFailure
      terminationGracePeriodSeconds: 120
      containers:
      - name: trainer
        image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
        args: [ARGS]
"""


@pytest.mark.parametrize("args, found", [
    # where real trainers write their checkpoints: Hugging Face's --output_dir, fairseq's --save-dir,
    # a checkpoint file; relative paths are relative to the image's WORKDIR, on the container
    # filesystem when the container mounts nothing
    ('"--output_dir", "/results"', "/results (--output_dir)"),
    ('"--output-dir=/results"', "/results (--output-dir)"),
    ('"--save_dir", "./checkpoints"', "./checkpoints (--save_dir)"),
    ('"--checkpoint-file", "/tmp/last.pt"', "/tmp/last.pt (--checkpoint-file)"),
    ('"--ckpt_dir=checkpoints"', "./checkpoints (--ckpt_dir)"),
    ('"--output_dir", "$(OUT)"', None),  # unknown
    ('"--output_dir", "s3://bucket/run"', None),  # an object store
    ('"--output_dir", "../up"', None),  # above WORKDIR: where, is unknown
    ('"output_dir=/results"', None),  # a setting without dashes: not the trainer flag
    ('"--load-checkpoint-file", "/tmp/last.pt"', None),  # read, not written
    # torchtune (kubeflow/trainer's runtimes): reads checkpointer.checkpoint_dir, writes to output_dir
    ('"tune", "run", "full_finetune_distributed", "checkpointer.checkpoint_dir=/tmp/model", "output_dir=/results"',
     "/results (output_dir)"),
    ('"tune", "run", "lora_finetune_single_device", "checkpointer.checkpoint_dir=/tmp/model"', None),
])
def test_sto002_finds_checkpoints_where_trainers_write_them(tmp_path: Path, args: str, found: str | None) -> None:
    job = TRAINER_JOB.replace("ARGS", args)
    messages = [r.message for r in run(tmp_path, {"job.yaml": job}, "STO002")]
    if found is None:
        assert messages == []
    else:
        assert len(messages) == 1 and f"writes checkpoints to {found}, which is on no volume mount" in messages[0]


def test_a_relative_checkpoint_path_with_mounts_is_not_guessed(tmp_path: Path) -> None:
    # a mount may hold the image's WORKDIR (a PVC at /workspace): a relative path is then unknown;
    # with a workingDir it is resolved there
    job = TRAINER_JOB.replace("ARGS", '"--save_dir", "./checkpoints"') + (
        "        volumeMounts: [{name: w, mountPath: /workspace}]\n"
        "      volumes: [{name: w, persistentVolumeClaim: {claimName: work}}]\n")
    assert run(tmp_path, {"job.yaml": job}, "STO002") == []
    on_disk = job.replace("        volumeMounts:", "        workingDir: /srv\n        volumeMounts:")
    assert [r.line for r in run(tmp_path, {"job.yaml": on_disk}, "STO002")] == [12]
    assert [r.line for r in run(tmp_path, {"job.yaml": on_disk.replace("/srv", "/workspace")}, "STO002")] == []


def test_sto005_counts_a_trainers_output_dir_as_checkpoints(tmp_path: Path) -> None:
    job = TRAINER_JOB.replace("ARGS", '"--output_dir", "./out"').replace("      terminationGracePeriodSeconds: 120\n", "")
    found = run(tmp_path, {"job.yaml": job}, "STO005")
    assert [(r.line, r.rule) for r in found] == [(6, "STO005")]
    assert "(container `trainer`: --output_dir ./out)" in found[0].message


def test_sto002_skips_inference(tmp_path: Path) -> None:
    deployment = JOB_MOUNTING.replace("kind: Job", "kind: Deployment").replace("batch/v1", "apps/v1").replace(
        "/mnt/state/ckpt", "/tmp/ckpt").replace("      restartPolicy: OnFailure\n", "")
    assert run(tmp_path, {"d.yaml": deployment}, "STO002") == []


@pytest.mark.parametrize("grace, minimum, fires", [(120, 60, False), (120, 300, True), (None, 30, False), (None, 31, True)])
def test_sto005_option(tmp_path: Path, grace, minimum: int, fires: bool) -> None:
    job = JOB_MOUNTING.replace("      terminationGracePeriodSeconds: 120\n",
                               f"      terminationGracePeriodSeconds: {grace}\n" if grace is not None else "")
    config = Config(root=tmp_path, rule_options={"STO005": {"min-grace-period-seconds": minimum}})
    found = run(tmp_path, {"job.yaml": job}, "STO005", config=config)
    assert bool(found) is fires
    if fires:
        assert found[0].fix == f"terminationGracePeriodSeconds: {max(minimum, 120)}"


# ---------------------------------------------------------------------------------------------
# STO003: pods at once, per claim definition

def job_with(parallelism: int | None, completions: int | None, mode: str = "ReadWriteOnce") -> dict[str, str]:
    spec = "".join(f"  {k}: {v}\n" for k, v in (("parallelism", parallelism), ("completions", completions)) if v is not None)
    job = JOB_MOUNTING.replace("spec:\n  template:", f"spec:\n{spec}  template:", 1)
    return {"job.yaml": job, "pvc.yaml": CLAIM.replace("ReadWriteOnce", mode)}


@settings(max_examples=40, deadline=None)
@given(parallelism=st.one_of(st.none(), st.integers(0, 6)), completions=st.one_of(st.none(), st.integers(1, 6)))
def test_sto003_counts_pods_as_the_job_controller_runs_them(tmp_path_factory, parallelism, completions) -> None:
    tmp_path = tmp_path_factory.mktemp("sto003")
    running = 1 if parallelism is None else parallelism
    if completions is not None:
        running = min(running, completions)
    found = run(tmp_path, job_with(parallelism, completions), "STO003")
    assert bool(found) is (running > 1)
    if found:
        assert f"mounted by {running} pods" in found[0].message and found[0].path == "job.yaml"


@pytest.mark.parametrize("mode, fires", [("ReadWriteMany", False), ("ReadWriteOncePod", True), ("ReadOnlyMany", False)])
def test_sto003_access_modes(tmp_path: Path, mode: str, fires: bool) -> None:
    assert bool(run(tmp_path, job_with(3, None, mode), "STO003")) is fires


def test_sto003_reports_only_target_files(tmp_path: Path) -> None:
    files = job_with(4, None)
    found = run(tmp_path, files, "STO003", targets=["pvc.yaml"])
    assert found == []  # the finding belongs to the Job's file, which this run does not report on
    assert [r.path for r in run(tmp_path, files, "STO003", targets=["job.yaml"])] == ["job.yaml"]


# ---------------------------------------------------------------------------------------------
# STO004: a reference rule

def test_sto004_needs_a_storage_class_in_the_project(tmp_path: Path) -> None:
    claim = CLAIM.replace("managed-csi-premium", "managed-csi-premum")
    assert run(tmp_path, {"pvc.yaml": claim}, "STO004") == []
    sc = STORAGE_CLASS
    found = run(tmp_path, {"pvc.yaml": claim, "sc.yaml": sc}, "STO004")
    assert [(r.line, r.fix) for r in found] == [(6, "storageClassName: managed-csi-premium")]


SCRIPT_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: lora, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: OnFailure
      containers:
      - name: trainer
        image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
        env:
        - {name: RUN, value: lora-7}
        command:
        - /bin/bash
        - -c
        - |
          set -e  # a comment with --checkpoint-dir /nowhere is not a flag
          torchrun train.py \\
            --ckpt_dir \\
            /tmp/${RUN}/ckpt && echo done
"""


def test_shell_script_flags_follow_line_continuations_and_env(tmp_path: Path) -> None:
    found = run(tmp_path, {"job.yaml": SCRIPT_JOB}, "STO002")
    assert [r.line for r in found] == [16]  # the script item
    assert "/tmp/lora-7/ckpt (--ckpt_dir)" in found[0].message


# ---------------------------------------------------------------------------------------------
# STO006: a shell as PID 1 of a trainer with something to save

from mlops_lint.model.shellc import statements  # noqa: E402

STO006_JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: OnFailure
      POD
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        command: COMMAND
        volumeMounts: [{name: ckpt, mountPath: /checkpoints}]
      volumes: [{name: ckpt, persistentVolumeClaim: {claimName: ckpt}}]
"""


def sto006(tmp_path: Path, command: str, pod: str = "", mount: bool = True) -> list:
    text = STO006_JOB.replace("COMMAND", command).replace("POD", pod)
    if not mount:
        text = text.replace("        volumeMounts: [{name: ckpt, mountPath: /checkpoints}]\n", "")
    return run(tmp_path, {"job.yaml": text}, "STO006")


@pytest.mark.parametrize("command, fires", [
    ('["bash", "-c", "set -e; python train.py"]', True),
    ('["/bin/sh", "-c", "cd /w && python3.11 train.py"]', True),
    ('["bash", "-lc", "source env.sh\\ntorchrun train.py"]', True),
    ('["bash", "-c", "python train.py; echo done"]', True),  # a statement after the trainer
    ('["bash", "-c", "python train.py & wait"]', True),
    ('["bash", "-c", "./run_training.sh --epochs 3; sync"]', True),
    ('["bash", "-c", "set -e; exec python train.py"]', False),
    ('["bash", "-c", "set -e; exec -a trainer python train.py"]', False),
    ('["bash", "-c", "trap \'kill -TERM $p\' SIGTERM; python train.py & p=$!; wait $p"]', False),
    ('["bash", "-c", "python train.py"]', False),  # one statement: the shell replaces itself
    ('["bash", "-c", "set -e; python -m pip install x; nvidia-smi"]', False),  # no trainer
    ('["bash", "-c", "echo \'a; b; c\' && sleep 60"]', False),
    ('["python", "-c", "import os; print(1)"]', False),  # no shell
    ('["tini", "--", "bash", "-c", "set -e; python train.py"]', False),  # not the shell's PID 1
    ('["bash", "-c", "set -e; python train.py \'unclosed"]', False),  # cannot be split: not judged
])
def test_sto006_scripts(tmp_path: Path, command: str, fires: bool) -> None:
    found = sto006(tmp_path, command)
    assert [r.rule for r in found] == (["STO006"] if fires else [])


def test_sto006_points_at_the_script_and_names_the_trainer(tmp_path: Path) -> None:
    (finding,) = sto006(tmp_path, '["bash", "-c", "pip install -r r.txt; python train.py --lr 1"]')
    assert (finding.line, finding.column) == (13, 33)  # the script item of `command: [...]`
    assert "writes checkpoints (mount path /checkpoints)" in finding.message
    assert "runs `python train.py --lr 1` from a `bash -c` script of 2 statements without `exec`" in finding.message
    assert finding.fix == "start the trainer with `exec python train.py --lr 1` (or trap TERM and forward it)"
    assert finding.node[-2:] == ("command", 2)


def test_sto006_args_hold_the_script_and_a_pipe_needs_more_than_exec(tmp_path: Path) -> None:
    job = STO006_JOB.replace("command: COMMAND", 'command: ["sh", "-c"]\n        args: ["cd /w; python train.py 2>&1 | tee log"]')
    (finding,) = run(tmp_path, {"job.yaml": job.replace("POD", "")}, "STO006")
    assert finding.node[-2:] == ("args", 0) and "`python train.py`" in finding.message
    assert finding.fix.startswith("run the trainer outside the pipeline")


@pytest.mark.parametrize("pod", [
    "",  # no checkpoints, not preemptible
    "tolerations: [{key: kubernetes.azure.com/scalesetpriority, operator: Exists}]",
    "schedulerName: volcano",
    "priorityClassName: low",  # a higher class of the project may preempt it
])
def test_sto006_preemptible_pods_without_checkpoints_are_not_judged(tmp_path: Path, pod: str) -> None:
    """A lost SIGTERM costs a checkpoint; a trainer that writes none has no progress for the signal to
    preserve (precision review: Volcano's tf_cnn_benchmarks and MindSpore demos, 'its progress unsaved'
    was wrong). With a checkpoint mount the same pods are judged."""
    classes = """
    apiVersion: scheduling.k8s.io/v1
    kind: PriorityClass
    metadata: {name: low}
    value: 10
    ---
    apiVersion: scheduling.k8s.io/v1
    kind: PriorityClass
    metadata: {name: high}
    value: 1000
    """
    text = STO006_JOB.replace("COMMAND", '["bash", "-c", "set -e; python train.py"]').replace("POD", pod)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    found = run(tmp_path / "a", {"job.yaml": text, "classes.yaml": classes}, "STO006", targets=["job.yaml"])
    assert [r.rule for r in found] == ["STO006"]
    assert found[0].message.endswith("so the trainer is killed without saving a last checkpoint")
    text = text.replace("        volumeMounts: [{name: ckpt, mountPath: /checkpoints}]\n", "")
    assert run(tmp_path / "b", {"job.yaml": text, "classes.yaml": classes}, "STO006", targets=["job.yaml"]) == []


@pytest.mark.parametrize("script, fix", [
    # the trainer is the last statement (a pipe's reader after it counts as its own): `exec` fits
    ("set -e; python train.py", "start the trainer with `exec python train.py` (or trap TERM and forward it)"),
    ("cd /w; python train.py | tee log", "run the trainer outside the pipeline and start it with `exec python train.py`"
                                         " (or trap TERM and forward it)"),
    # statements follow it (corpus: Volcano's MindSpore `mpiexec …; sleep 3600`): `exec` would drop them
    ("mpiexec -n 2 python gpu-test.py; sleep 3600",
     "trap TERM and forward it to the trainer (`trap 'kill -TERM $pid' TERM; mpiexec -n 2 python gpu-test.py & "
     "pid=$!; wait $pid`): `exec` would drop the statements after it"),
    ("python train.py & wait",
     "trap TERM and forward it to the trainer (`trap 'kill -TERM $pid' TERM; python train.py & pid=$!; wait $pid`): "
     "`exec` would drop the statements after it"),
])
def test_sto006_exec_only_when_the_trainer_is_the_last_statement(tmp_path: Path, script: str, fix: str) -> None:
    (finding,) = sto006(tmp_path, json.dumps(["bash", "-c", script]))
    assert finding.fix == fix


def test_shell_statements_mask_substitutions_and_drop_redirections() -> None:
    script = "H=`cat h | tr a b`; W=$(cat w | tr a b)\npython t.py 2>&1 > log | tee x # c; d"
    assert [words for words, _ in statements(script)] == [("H=$_",), ("W=$_",), ("python", "t.py"), ("tee", "x")]
    assert statements("echo 'open") == ()


def test_sto006_leaves_parameter_servers_out(tmp_path: Path) -> None:
    tfjob = """
    apiVersion: kubeflow.org/v1
    kind: TFJob
    metadata: {name: ps-training}
    spec:
      tfReplicaSpecs:
        ROLE:
          replicas: 1
          template:
            spec:
              schedulerName: volcano
              containers:
              - name: tensorflow
                image: tensorflow/tensorflow:2.16.1-gpu
                command: ["sh", "-c", "export TF_CONFIG=$(cat /etc/tf); python train.py --job_name=x"]
                volumeMounts: [{name: ckpt, mountPath: /checkpoints}]
              volumes: [{name: ckpt, persistentVolumeClaim: {claimName: ckpt}}]
    """
    assert [r.rule for r in run(tmp_path, {"job.yaml": tfjob.replace("ROLE", "Worker")}, "STO006")] == ["STO006"]
    assert run(tmp_path, {"job.yaml": tfjob.replace("ROLE", "PS")}, "STO006") == []


# ---------------------------------------------------------------------------------------------
# STO007: mount options of another protocol

ARTICLE = Path(__file__).resolve().parents[1] / ".." / "shared" / "seed" / "mlops-aks-best-practices.txt"


def storage_class(provisioner: str, parameters: str, options: list[str]) -> str:
    items = "".join(f"- {option}\n" for option in options)
    return (f"apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {{name: sc}}\nprovisioner: {provisioner}\n"
            f"parameters: {parameters}\nmountOptions:\n{items}")


def sto007(text: str, tmp_path: Path) -> list:
    return run(tmp_path, {"sc.yaml": text}, "STO007")


@pytest.mark.parametrize("provisioner, parameters, options, expected", [
    # (first offending item's line, kind word) per finding, or nothing
    ("blob.csi.azure.com", "{protocol: nfs}", ["-o nconnect=4"], [(7, "blobfuse")]),
    ("blob.csi.azure.com", "{protocol: nfs}", ["nconnect=4", "--block-cache"], [(8, "blobfuse")]),
    ("blob.csi.azure.com", "{protocol: nfs}", ["nconnect=4", "actimeo=30", "noresvport"], []),
    ("blob.csi.azure.com", "{protocol: nfs}", ["nconnect=4", "uid=1000,gid=1000"], [(8, "SMB")]),
    ("blob.csi.azure.com", "{protocol: fuse2}", ["-o allow_other", "uid=1000"], []),  # blobfuse: not judged
    ("blob.csi.azure.com", "{}", ["-o allow_other"], []),  # Blob's default protocol is fuse
    ("blob.csi.azure.com", '{protocol: "${PROTOCOL}"}', ["-o allow_other"], []),  # unknown protocol
    ("file.csi.azure.com", "{}", ["dir_mode=0777", "nfsvers=4.1"], [(8, "NFS")]),  # SMB by default
    ("file.csi.azure.com", "{protocol: smb}", ["vers=3.1.1", "actimeo=30", "rsize=1048576"], []),
    ("file.csi.azure.com", "{protocol: smb}", ["vers=4.1"], [(7, "NFS")]),
    ("file.csi.azure.com", "{protocol: smb}", ["-o mfsymlinks"], [(7, "blobfuse")]),
    ("file.csi.azure.com", "{protocol: nfs}", ["nconnect=4", "mfsymlinks", "-o x"], [(8, "SMB"), (9, "blobfuse")]),
    ("disk.csi.azure.com", "{}", ["-o nconnect=4", "uid=0"], []),  # another driver
    ("[file.csi.azure.com]", "{protocol: nfs}", ["mfsymlinks"], []),  # not a name (SCH002's): no LNT002
    ("{a: b}", "{protocol: nfs}", ["mfsymlinks"], []),
])
def test_sto007_options_by_protocol(tmp_path: Path, provisioner: str, parameters: str, options: list[str],
                                    expected: list[tuple[int, str]]) -> None:
    results = sto007(storage_class(provisioner, parameters, options), tmp_path)
    assert [(r.line, r.column) for r in results] == [(line, 3) for line, _ in expected]
    for result, (_, word) in zip(results, expected):
        assert word in result.message and result.severity == "error"


def test_sto007_names_every_option_of_a_kind_once(tmp_path: Path) -> None:
    text = storage_class("blob.csi.azure.com", "{protocol: nfs}", ["-o attr_timeout=120", "nconnect=4", "-o noresvport"])
    (result,) = sto007(text, tmp_path)
    assert (result.line, result.column) == (7, 3)
    assert "`-o attr_timeout=120`, `-o noresvport` are written as blobfuse" in result.message
    assert "`nconnect=4`" not in result.message and "protocol: fuse2" in result.fix


def test_sto007_reads_persistent_volumes(tmp_path: Path) -> None:
    pv = ("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv}\nspec:\n  mountOptions:\n  - -o allow_other\n"
          "  csi:\n    driver: blob.csi.azure.com\n    volumeHandle: h\n    volumeAttributes: {protocol: PROTOCOL}\n")
    (result,) = sto007(pv.replace("PROTOCOL", "nfs"), tmp_path)
    assert (result.line, result.column) == (6, 5) and result.message.startswith("PersistentVolume `pv` mounts Blob")
    assert sto007(pv.replace("PROTOCOL", "fuse"), tmp_path) == []


def test_sto007_reports_the_article_blob_nfs_class_only(tmp_path: Path) -> None:
    """The article's Blob NFS class carries blobfuse's `-o` form; its SMB Azure Files classes are right."""
    text = ARTICLE.read_text(encoding="utf-8")
    start = text.index("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: ml-azureblob-nfs")
    block = text[start:text.index("\n---", start)] + "\n"
    (result,) = sto007(block, tmp_path)
    assert (result.line, result.column) == (13, 3) and "`-o nconnect=4`" in result.message
    for name in ("ml-azurefile-premium", "ml-checkpoints-azurefile"):
        start = text.index(f"kind: StorageClass\nmetadata:\n  name: {name}")
        smb = "apiVersion: storage.k8s.io/v1\n" + text[start:text.index("\n---", start)] + "\n"
        assert "dir_mode=0770" in smb and sto007(smb, tmp_path) == []


# ---------------------------------------------------------------------------------------------
# STO010: Blob volumes on a cluster that never enables the Blob CSI driver

BLOB_CLASS = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: datasets-blob}
provisioner: blob.csi.azure.com
parameters: {protocol: nfs}
"""
BUILTIN_CLAIM = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: ml}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: CLASS
  resources: {requests: {storage: 1Ti}}
"""
TF_CLUSTER = """\
resource "azurerm_kubernetes_cluster" "aks" {
  name = "ml-aks"
  default_node_pool {
    name    = "system"
    vm_size = "Standard_D4s_v5"
  }
STORAGE}
"""
BICEP_CLUSTER = """\
resource aks 'Microsoft.ContainerService/managedClusters@2024-02-01' = {
  name: 'ml-aks'
  properties: {
STORAGE  }
}
"""


@pytest.mark.parametrize("files, fires", [
    ({"setup.sh": "#!/bin/bash\naz aks create -g rg -n ml-aks\n"}, True),
    ({"setup.sh": "#!/bin/bash\naz aks create -g rg -n ml-aks --enable-blob-driver\n"}, False),
    ({"setup.sh": "#!/bin/bash\naz aks create -g rg -n ml-aks\naz aks update -g rg -n ml-aks --enable-blob-driver\n"},
     False),
    ({"setup.sh": "#!/bin/bash\naz aks create -g rg -n ml-aks $EXTRA_FLAGS\n"}, False),  # unknown words
    ({"setup.sh": "#!/bin/bash\naz aks nodepool add -g rg --cluster-name ml-aks -n gpu\n"}, False),  # no definition
    ({}, False),  # no cluster definition at all
    ({"main.tf": TF_CLUSTER.replace("STORAGE", "")}, True),
    ({"main.tf": TF_CLUSTER.replace("STORAGE", "  storage_profile {\n    blob_driver_enabled = true\n  }\n")}, False),
    ({"main.bicep": BICEP_CLUSTER.replace("STORAGE", "")}, True),
    ({"main.bicep": BICEP_CLUSTER.replace("STORAGE", "    storageProfile: {\n      blobCSIDriver: {\n"
                                                     "        enabled: true\n      }\n    }\n")}, False),
    # two clusters, one with the driver: the class may be meant for it
    ({"a.sh": "#!/bin/bash\naz aks create -g rg -n a\n", "b.sh": "#!/bin/bash\naz aks create -g rg -n b --enable-blob-driver\n"},
     False),
])
def test_sto010_cluster_definitions(tmp_path: Path, files: dict[str, str], fires: bool) -> None:
    results = run(tmp_path, {**files, "sc.yaml": BLOB_CLASS}, "STO010", targets=["sc.yaml"])
    assert [(r.rule, r.line, r.column) for r in results] == ([("STO010", 4, 14)] if fires else [])
    if fires:
        (name,) = files
        assert f"`ml-aks` ({name}:" in results[0].message
        assert results[0].fix.startswith("enable the driver: " + {"sh": "`az aks update", "tf": "`storage_profile",
                                                                  "bicep": "`storageProfile"}[name.rsplit(".", 1)[1]])


@pytest.mark.parametrize("claim_class, fires", [
    ("azureblob-fuse-premium", True), ("azureblob-nfs-premium", True),
    ("azurefile-csi-premium", False), ("managed-csi", False), ("datasets-blob", False),  # the class is reported
])
def test_sto010_claims_of_builtin_blob_classes(tmp_path: Path, claim_class: str, fires: bool) -> None:
    files = {"setup.sh": "#!/bin/bash\naz aks create -g rg -n ml-aks\n", "sc.yaml": BLOB_CLASS,
             "pvc.yaml": BUILTIN_CLAIM.replace("CLASS", claim_class)}
    results = run(tmp_path, files, "STO010", targets=["pvc.yaml"])
    assert [(r.line, r.column) for r in results] == ([(6, 21)] if fires else [])


def test_sto010_a_project_class_named_like_a_builtin_is_judged_as_a_class(tmp_path: Path) -> None:
    own = BLOB_CLASS.replace("datasets-blob", "azureblob-nfs-premium")
    files = {"setup.sh": "#!/bin/bash\naz aks create -g rg -n ml-aks\n", "sc.yaml": own,
             "pvc.yaml": BUILTIN_CLAIM.replace("CLASS", "azureblob-nfs-premium")}
    results = run(tmp_path, files, "STO010", targets=["sc.yaml", "pvc.yaml"])
    assert [(Path(r.path).name, r.line) for r in results] == [("sc.yaml", 4)]


def test_sto010_reads_static_blob_volumes(tmp_path: Path) -> None:
    pv = ("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv}\nspec:\n  capacity: {storage: 1Ti}\n"
          "  accessModes: [ReadOnlyMany]\n  csi:\n    driver: DRIVER\n    volumeHandle: h\n")
    files = {"setup.sh": "#!/bin/bash\naz aks create -g rg -n ml-aks\n"}
    (result,) = run(tmp_path, {**files, "pv.yaml": pv.replace("DRIVER", "blob.csi.azure.com")}, "STO010",
                    targets=["pv.yaml"])
    assert (result.line, result.column) == (8, 13) and "ContainerCreating" in result.message
    assert run(tmp_path, {**files, "pv.yaml": pv.replace("DRIVER", "file.csi.azure.com")}, "STO010",
               targets=["pv.yaml"]) == []


def test_sto010_a_cluster_of_another_repository_does_not_count(tmp_path: Path) -> None:
    """A folder of repositories side by side (no git, no config): a cluster definition governs the
    manifests of its own top-level folder only (linter.model.locality)."""
    corpus = tmp_path / "corpus"
    for name, text in {"infra-repo/setup.sh": "#!/bin/bash\naz aks create -g rg -n ml-aks\n",
                       "data-repo/storage/sc.yaml": BLOB_CLASS}.items():
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        (corpus / name).write_text(text, encoding="utf-8")
    report = lint(LintRequest(paths=[corpus], config=None, registry=REGISTRY, select=["STO010"], cwd=tmp_path))
    assert report.active == []
    (corpus / "data-repo" / "setup.sh").write_text("#!/bin/bash\naz aks create -g rg -n data-aks\n", encoding="utf-8")
    report = lint(LintRequest(paths=[corpus], config=None, registry=REGISTRY, select=["STO010"], cwd=tmp_path))
    assert [Path(r.path).name for r in report.active] == ["sc.yaml"]


def test_sto010_two_repositories_with_a_cluster_of_the_same_name(tmp_path: Path) -> None:
    """Two repositories side by side each make a cluster `ml-aks`: the one without the driver
    governs its own Blob class, whatever the other says (the record was keyed by the cluster's
    name alone, so the later repository's `--enable-blob-driver` replaced it and hid the class)."""
    corpus = tmp_path / "corpus"
    files = {"a-repo/setup.sh": "#!/bin/bash\naz aks create -g rg -n ml-aks\n", "a-repo/sc.yaml": BLOB_CLASS,
             "b-repo/setup.sh": "#!/bin/bash\naz aks create -g rg -n ml-aks --enable-blob-driver\n",
             "b-repo/sc.yaml": BLOB_CLASS}
    for name, text in files.items():
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        (corpus / name).write_text(text, encoding="utf-8")
    report = lint(LintRequest(paths=[corpus], config=None, registry=REGISTRY, select=["STO010"], cwd=tmp_path))
    assert [(r.path, r.line, r.column) for r in report.active] == [("corpus/a-repo/sc.yaml", 4, 14)]
    assert "`ml-aks` (corpus/a-repo/setup.sh:2)" in report.active[0].message


@pytest.mark.parametrize("update, fires", [
    ("az aks update -g rg -n ml-aks --enable-blob-driver", False),  # the same cluster, enabled later
    ("az aks update -g other-rg -n ml-aks --enable-blob-driver", False),  # another cluster enables it
    ("az aks update -g rg -n ml-aks --disable-blob-driver", True),
])
def test_sto010_a_later_script_of_the_project_updates_the_same_cluster(tmp_path: Path, update: str,
                                                                       fires: bool) -> None:
    """In one project, a command in another file about the cluster of the same name and resource
    group is that cluster's: the last one read decides (files in path order)."""
    files = {"a-create.sh": "#!/bin/bash\naz aks create -g rg -n ml-aks --enable-blob-driver\n",
             "b-update.sh": f"#!/bin/bash\n{update}\n"}
    results = run(tmp_path, {**files, "sc.yaml": BLOB_CLASS}, "STO010", targets=["sc.yaml"])
    assert [(r.rule, r.line, r.column) for r in results] == ([("STO010", 4, 14)] if fires else [])


# ---------------------------------------------------------------------------------------------
# STO009: multi-node access modes on Azure Disk classes without maxShares

DISK_CLASS = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast-disk}
provisioner: PROVISIONER
parameters: {skuName: Premium_LRS, PARAMS}
"""


def disk_claim(modes: str, klass: str = "fast-disk", extra: str = "") -> str:
    return (f"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: data, namespace: ml}}\nspec:\n"
            f"  accessModes: {modes}\n  storageClassName: {klass}\n{extra}  resources: {{requests: {{storage: 1Ti}}}}\n")


@pytest.mark.parametrize("provisioner, params, modes, expected", [
    ("disk.csi.azure.com", "cachingMode: None", "[ReadWriteMany]", (5, 17)),
    ("disk.csi.azure.com", "cachingMode: None", "[ReadWriteOnce, ReadOnlyMany]", (5, 32)),
    ("disk.csi.azure.com", "cachingMode: None", "[ReadWriteOnce]", None),
    ("disk.csi.azure.com", "maxShares: '2'", "[ReadWriteMany]", None),
    ("disk.csi.azure.com", "maxshares: 3", "[ReadWriteMany]", None),  # the driver reads keys in any case
    ("disk.csi.azure.com", "maxShares: '1'", "[ReadWriteMany]", (5, 17)),
    ("disk.csi.azure.com", "maxShares: '${SHARES}'", "[ReadWriteMany]", None),  # not a plain number
    ("file.csi.azure.com", "cachingMode: None", "[ReadWriteMany]", None),
])
def test_sto009_project_classes(tmp_path: Path, provisioner: str, params: str, modes: str, expected) -> None:
    files = {"sc.yaml": DISK_CLASS.replace("PROVISIONER", provisioner).replace("PARAMS", params),
             "pvc.yaml": disk_claim(modes)}
    results = run(tmp_path, files, "STO009", targets=["pvc.yaml"])
    assert [(r.line, r.column) for r in results] == ([expected] if expected else [])
    if expected:
        assert "StorageClass `fast-disk` provisions Azure Disks" in results[0].message


@pytest.mark.parametrize("klass, extra, fires", [
    ("managed-csi-premium", "", True), ("default", "", True), ("azurefile-csi", "", False),
    ("azureblob-nfs-premium", "", False), ("managed-csi", "  volumeName: pv-1\n", False),  # bound to a volume
    ('""', "", False), ("'{{ .Values.storageClass }}'", "", False),
])
def test_sto009_builtin_classes(tmp_path: Path, klass: str, extra: str, fires: bool) -> None:
    results = run(tmp_path, {"pvc.yaml": disk_claim("[ReadOnlyMany]", klass, extra)}, "STO009")
    assert [r.rule for r in results] == (["STO009"] if fires else [])
    if fires:
        assert f"`{klass}` is an AKS built-in Azure Disk class" in results[0].message


def test_sto009_a_class_defined_twice_is_judged_only_when_every_copy_is_non_shared(tmp_path: Path) -> None:
    plain = DISK_CLASS.replace("PROVISIONER", "disk.csi.azure.com").replace("PARAMS", "cachingMode: None")
    shared = DISK_CLASS.replace("PROVISIONER", "disk.csi.azure.com").replace("PARAMS", "maxShares: '2'")
    (tmp_path / "prod").mkdir()
    files = {"sc.yaml": plain, "prod/sc.yaml": shared, "pvc.yaml": disk_claim("[ReadWriteMany]")}
    assert run(tmp_path, files, "STO009", targets=["pvc.yaml"]) == []
    files["prod/sc.yaml"] = plain
    assert [r.rule for r in run(tmp_path, files, "STO009", targets=["pvc.yaml"])] == ["STO009"]


# ---------------------------------------------------------------------------------------------
# STO008: SMB owner and modes that deny the pod's user

SMB_CLASS = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: shared-smb}
provisioner: file.csi.azure.com
parameters: PARAMS
mountOptions: OPTIONS
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: shared, namespace: ml}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: shared-smb
  resources: {requests: {storage: 100Gi}}
"""
SMB_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: writer, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      securityContext: POD
      containers:
      - name: writer
        image: myacr.azurecr.io/writer@sha256:3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c
        securityContext: CONTAINER
        volumeMounts:
        - {name: data, mountPath: /data, readOnly: READONLY}
      volumes:
      - name: data
        persistentVolumeClaim: {claimName: shared}
"""
ARTICLE_OPTIONS = "[dir_mode=0770, file_mode=0660, uid=1000, gid=1000, mfsymlinks, cache=strict]"


def sto008(tmp_path: Path, *, options: str = ARTICLE_OPTIONS, params: str = "{skuName: Premium_LRS}",
           pod: str = "{runAsUser: 2000, runAsGroup: 2000}", container: str = "{}", read_only: str = "false") -> list:
    files = {"sc.yaml": SMB_CLASS.replace("OPTIONS", options).replace("PARAMS", params),
             "job.yaml": SMB_JOB.replace("POD", pod).replace("CONTAINER", container).replace("READONLY", read_only)}
    return run(tmp_path, files, "STO008", targets=["job.yaml"])


@pytest.mark.parametrize("pod, container, fires", [
    ("{runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000}", "{}", False),  # the article's identity
    ("{runAsUser: 2000, runAsGroup: 2000, fsGroup: 2000}", "{}", True),
    ("{runAsUser: 2000, runAsGroup: 2000, fsGroup: 1000}", "{}", False),  # in the share's group
    ("{runAsUser: 2000, runAsGroup: 2000, supplementalGroups: [1000]}", "{}", False),
    ("{runAsUser: 1000, runAsGroup: 3000}", "{runAsUser: 3000}", True),  # the container's user wins...
    ("{runAsUser: 1000, runAsGroup: 2000}", "{runAsGroup: 1000}", False),  # ...and its group
    ("{runAsUser: 2000}", "{}", None),  # the image's primary group might be 1000: not judged
    ("{runAsUser: 0, runAsGroup: 0}", "{}", None),  # root
    ("{}", "{}", None),  # the image decides the user
    ("{runAsUser: '${UID}', runAsGroup: 2000}", "{}", None),
])
def test_sto008_users_and_groups(tmp_path: Path, pod: str, container: str, fires: bool | None) -> None:
    results = sto008(tmp_path, pod=pod, container=container)
    assert [(r.line, r.column) for r in results] == ([(14, 35)] if fires else [])
    if fires:
        assert "uid 1000, gid 1000 (uid=1000, gid=1000, dir_mode=0770, file_mode=0660 in StorageClass `shared-smb` " \
               "(sc.yaml:6))" in results[0].message
        assert "gets the other permissions and cannot create files (dir_mode gives it ---)" in results[0].message


@pytest.mark.parametrize("options, params, read_only, fires", [
    ("[dir_mode=0777, file_mode=0777, uid=1000, gid=1000]", "{}", "false", False),  # anyone may write
    ("[uid=1000, gid=1000, mfsymlinks]", "{}", "false", False),  # the driver's 0777 modes
    ("[dir_mode=0775, file_mode=0664, uid=1000, gid=1000]", "{}", "false", True),  # others may only read
    ("['dir_mode=0770,file_mode=0660,uid=1000,gid=1000']", "{}", "false", True),  # one comma-joined item
    (ARTICLE_OPTIONS.replace("mfsymlinks", "noperm"), "{}", "false", False),  # no client-side checks
    ("[dir_mode=0770, file_mode=0660, 'uid=${UID}']", "{}", "false", False),  # templated
    ("[dir_mode=0770, file_mode=0660, uid=1000, gid=1000]", "{protocol: nfs}", "false", False),  # STO007's case
    (ARTICLE_OPTIONS, "{}", "true", False),  # a read-only mount writes nothing
    ("[dir_mode=0770, file_mode=0660, uid=1000]", "{}", "false", True),  # gid from fsGroup 2000? no: none set
])
def test_sto008_mount_options(tmp_path: Path, options: str, params: str, read_only: str, fires: bool) -> None:
    results = sto008(tmp_path, options=options, params=params, read_only=read_only)
    assert [r.rule for r in results] == (["STO008"] if fires else [])


def test_sto008_fs_group_becomes_the_gid_when_the_options_set_none(tmp_path: Path) -> None:
    options = "[dir_mode=0770, file_mode=0660, uid=1000]"
    assert sto008(tmp_path, options=options, pod="{runAsUser: 2000, runAsGroup: 2000, fsGroup: 2000}") == []
    (result,) = sto008(tmp_path, options=options, pod="{runAsUser: 2000, runAsGroup: 2000}")
    assert "uid 1000, gid 0" in result.message


def test_sto008_the_articles_azure_files_job_passes(tmp_path: Path) -> None:
    text = ARTICLE.read_text(encoding="utf-8")
    start = text.index("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: ml-azurefile-premium")
    end = text.index("\n\n", text.index("claimName: shared-training-data", start))
    block = text[start:end] + "\n"
    assert run(tmp_path, {"files.yaml": block}, "STO008") == []
    broken = block.replace("runAsUser: 1000\n        runAsGroup: 1000\n        fsGroup: 1000",
                           "runAsUser: 1001\n        runAsGroup: 1001\n        fsGroup: 1001")
    assert broken != block
    assert [r.rule for r in run(tmp_path, {"files.yaml": broken}, "STO008")] == ["STO008"]
