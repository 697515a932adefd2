"""A container image with no tag, or with the `latest` tag.

## What it does
Flags containers (init, sidecar and ephemeral containers included) whose `image` has no tag
and no digest (`pytorch/pytorch`), or uses the tag `latest`. An image pinned by digest alone
(`repo@sha256:…`) is immutable and is not flagged. Images whose reference is filled in later
(`$(IMAGE)`, `$IMAGE`, `{{ .Values.image }}`), images whose tag is (`trainer:${TAG}`) and
placeholders that are not image references at all (`<your-image>`, `FILLED_BY_THE_VALIDATOR`) are
skipped: their tag is unknown. A placeholder elsewhere leaves the tag known:
`${REGISTRY}/trainer:latest` and `gcr.io/<<PROJECT>>/trainer:latest` use `latest` whatever the
registry becomes. Such an image is not reported again by IMG002 (not pinned by digest): one cause, this
finding, whose message asks for the version tag and the digest both.

{{pod-views}}

## Why is this bad?
A missing tag means `latest`, and `latest` moves: two replicas of one job, or the job and its
restart after preemption, can run different framework and CUDA builds. The article: "Use an
explicit, CUDA-enabled base image tag … instead of an untagged base image reference", and
reference specific versions "in your Kubernetes deployment manifests to ensure consistency
across environments". Kubernetes also pulls `latest` on every start (`imagePullPolicy:
Always`), which slows scale-up of GPU nodes. AKS Deployment Safeguards reject `latest`.

## Example
```yaml
      containers:
      - name: trainer
        image: pytorch/pytorch:latest
```

Use instead:
```yaml
      containers:
      - name: trainer
        image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime@sha256:0a3b9fedefe1f61ac4d5a9de9015c0863db27ca0fde2d4e37e6268147980b726
```

## References
- Kubernetes, Images (tags and digests): https://kubernetes.io/docs/concepts/containers/images/
- AKS Deployment Safeguards: https://learn.microsoft.com/azure/aks/deployment-safeguards
"""

from mlops_lint.model.images import image_pin
from mlops_lint.model.k8s import Container
from mlops_lint.rule import CONTAINER, Finding, rule


@rule(code="IMG001", name="image-tag-mutable", severity="error", scope=CONTAINER, tags=("images", "supply-chain"))
def check(container: Container, ctx):
    image = container.image
    pin = image_pin(image)
    if pin is None:
        return
    tag, digest = pin
    if digest:
        return
    who = f"{container.kind_label} `{container.name}`"
    if tag is None:
        message = (f"{who} image `{image}` has no tag, so it runs whatever `latest` points to; pin a version tag "
                   "and its digest")
    elif tag == "latest":
        message = f"{who} image `{image}` uses the mutable tag `latest`; pin a version tag and its digest"
    else:
        return
    yield Finding(container.image_span, message, node=container.path + ("image",))
