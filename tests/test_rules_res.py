"""RES004 on pods an operator builds: KubeRay mounts a memory-backed emptyDir at /dev/shm in the
Ray container (the first app container) of every head and worker pod it creates, when that
container mounts nothing there itself (ray-operator/controllers/ray/common/pod.go, ``addEmptyDir``
with ``SharedMemoryVolumeMountPath``); other containers, the RayJob's submitter pod and a Ray
container with a disk-backed /dev/shm get nothing from it."""
from __future__ import annotations

import textwrap

from mlops_lint.config import Config
from mlops_lint.engine import load_bytes, run_rules
from mlops_lint.model.document import K8S
from mlops_lint.registry import load_registry

REGISTRY = load_registry()


def lint(text: str, code: str = "RES004") -> list:
    doc = load_bytes(textwrap.dedent(text).encode(), "w.yaml", K8S)
    assert not doc.errors, doc.errors
    return [r for r, _ in run_rules([doc], {doc.path}, [REGISTRY.get(code)], Config())]


RAY_JOB = """
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: train
spec:
  entrypoint: python /home/ray/train.py
  submitterPodTemplate:
    spec:
      restartPolicy: Never
      containers:
      - name: submitter
        image: rayproject/ray:2.46.0
        resources: {limits: {cpu: "4", memory: 8Gi}}
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray:2.46.0
            resources: {limits: {cpu: "8", memory: 32Gi}}
    workerGroupSpecs:
    - groupName: gpu
      replicas: 2
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-worker
            image: rayproject/ray:2.46.0-gpu
            resources: {limits: {cpu: "8", memory: 32Gi, nvidia.com/gpu: 1}}
            VOLUME_MOUNTS
          - name: sidecar
            image: rayproject/ray:2.46.0-gpu
            resources: {limits: {cpu: "2", memory: 2Gi, nvidia.com/gpu: 1}}
          VOLUMES
"""


def ray_job(mounts: str = "", volumes: str = "") -> str:
    return RAY_JOB.replace("VOLUME_MOUNTS", mounts).replace("VOLUMES", volumes)


def test_kuberay_mounts_shm_in_the_ray_container() -> None:
    """The head's and the worker's Ray containers get KubeRay's /dev/shm: not flagged. The
    worker's second container and the submitter pod (a plain Job KubeRay does not build from
    its Ray pod code) are still flagged."""
    found = lint(ray_job())
    assert [(r.rule, r.line, r.column) for r in found] == [("RES004", 12, 9), ("RES004", 35, 13)]
    assert "`submitter`" in found[0].message and "`sidecar`" in found[1].message


def test_kuberay_leaves_a_disk_backed_shm_alone() -> None:
    """KubeRay adds its volume only when nothing is mounted at /dev/shm: a disk-backed emptyDir
    there stays the container's /dev/shm and is flagged at its mountPath."""
    found = lint(ray_job("volumeMounts: [{name: shm, mountPath: /dev/shm}]", "volumes: [{name: shm, emptyDir: {}}]"))
    ray_worker = [r for r in found if "`ray-worker`" in r.message]
    assert [(r.line, r.column) for r in ray_worker] == [(34, 51)]
    assert "mounts a disk-backed emptyDir (`shm`) at /dev/shm" in ray_worker[0].message


def test_a_ray_image_outside_kuberay_is_still_flagged() -> None:
    """The exemption is KubeRay's pod building, not Ray: a batch Job running a Ray image is
    flagged as before."""
    found = lint("""
    apiVersion: batch/v1
    kind: Job
    metadata: {name: ray-train}
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: ray-head
            image: rayproject/ray:2.46.0-gpu
            resources: {limits: {nvidia.com/gpu: 1}}
    """)
    assert [(r.rule, r.line) for r in found] == [("RES004", 10)]


def test_a_volume_named_by_a_list_is_no_rule_error() -> None:
    """Found by test_fuzz: the fix looked for a free volume name in a set of the pod's volume names,
    and a name written as a list (malformed: SCH002's finding) is not hashable."""
    found = lint(textwrap.dedent("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: trainer}
        spec:
          restartPolicy: OnFailure
          containers:
          - name: trainer
            image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
            resources:
              limits: {cpu: "2.5", memory: 8Gi}
          volumes:
          - name: [dshm]
            emptyDir: {medium: Memory, sizeLimit: 2Gi}
        """))
    assert [r.rule for r in found] == ["RES004"]
