"""Replica types of one PyTorchJob or TFJob run different images.

## What it does
Compares the framework container of every replica type of a Kubeflow `PyTorchJob` or `TFJob`
(the container named `pytorch` or `tensorflow`, which the training operator requires in each
replica type; else the first container) and flags each replica type whose image differs from
the reference one: the `Master` (PyTorchJob) or `Chief`/`Master` (TFJob), else the first replica
type in the file. Images are compared as references: `pytorch/pytorch:2.4.1` and
`docker.io/pytorch/pytorch:2.4.1` are one image, a missing tag is `latest`, and two references
pinned to the same `@sha256:` digest are the same image whatever their tags. The finding points
at the differing `image` value.

## Why is this bad?
Every rank of a distributed job runs the same training step: a different image means a
different framework, CUDA or NCCL build, and collectives between mismatched NCCL versions hang or
fail, while a different training script silently trains something else. The article builds one
portable CUDA training image and asks to reference specific versions "in your Kubernetes
deployment manifests to ensure consistency across environments"; for the PyTorchJob it says to
"replace the inline test with your versioned training image and script", one image for Master
and Workers alike.

## Example
```yaml
    Master:
      template:
        spec:
          containers:
          - name: pytorch
            image: myacr.azurecr.io/train:1.4.0
    Worker:
      template:
        spec:
          containers:
          - name: pytorch
            image: myacr.azurecr.io/train:1.3.2
```

Use instead:
```yaml
          - name: pytorch
            image: myacr.azurecr.io/train:1.4.0@sha256:…   # the same reference in every replica type
```

## Known problems
Sidecars and init containers are not compared: they may legitimately differ between replica
types. An image pinned by digest in one replica type and by tag only in another is reported,
since the tag can move away from the digest. Images filled in later (`$(IMAGE)`,
`{{ .Values.image }}`) are skipped. MPIJob launchers often run a slimmer image than the workers
and are not checked.

## References
- Kubeflow Training Operator, PyTorchJob: https://www.kubeflow.org/docs/components/trainer/legacy-v1/user-guides/pytorch/
- Kubeflow Training Operator, TFJob: https://www.kubeflow.org/docs/components/trainer/legacy-v1/user-guides/tensorflow/
"""

from mlops_lint.model.distributed import KUBEFLOW, default_container
from mlops_lint.model.k8s import Workload, image_reference, image_registry
from mlops_lint.rule import WORKLOAD, Finding, rule

KINDS = ("PyTorchJob", "TFJob")
REFERENCE_ROLES = ("master", "chief")
DOCKER_HUB = ("docker.io", "index.docker.io", "registry-1.docker.io")


def normalized(image: str) -> tuple[str, str, str | None] | None:
    """(repository with registry, tag, digest) with Docker Hub's implicit parts filled in."""
    reference = image_reference(image)
    if reference is None:
        return None
    name, tag, digest = reference
    registry = image_registry(name)
    if registry in DOCKER_HUB:
        name = name.removeprefix(registry + "/") if name.startswith(registry + "/") else name
        name = f"docker.io/{name if '/' in name else 'library/' + name}"
    return name, tag or "latest", digest


def same_image(a: tuple[str, str, str | None], b: tuple[str, str, str | None]) -> bool:
    if a[2] and b[2]:
        return a[2] == b[2]
    return a == b


@rule(code="DST002", name="replica-images-differ", severity="warning", scope=WORKLOAD,
      tags=("distributed", "kubeflow", "images"))
def check(workload: Workload, ctx):
    if workload.obj.group != KUBEFLOW or workload.kind not in KINDS:
        return
    mains = []
    for pod in workload.pods:
        container = default_container(pod)
        image = normalized(container.image) if container is not None and container.image else None
        if image is not None:
            mains.append((pod, container, image))
    if len(mains) < 2:
        return
    base = next((m for m in mains if (m[0].role or "").lower() in REFERENCE_ROLES), mains[0])
    for pod, container, image in mains:
        if container is not base[1] and not same_image(image, base[2]):
            yield Finding(
                container.image_span,
                f"the {pod.role} replicas run `{container.image}` in container `{container.name}`, but the "
                f"{base[0].role} replicas run `{base[1].image}`: every rank must run the same image",
                node=container.path + ("image",), fix=f"image: {base[1].image}",
            )
