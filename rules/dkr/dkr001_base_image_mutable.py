"""A base image with no tag, or with the `latest` tag.

## What it does
Flags every `FROM` that pulls an image with no tag and no digest (`FROM pytorch/pytorch`), or
with the tag `latest`, in every stage of the file (a builder stage's base changes what is built
as much as the final one). `FROM $VAR` and `FROM ${BASE}:${TAG}` are judged with the defaults of
the `ARG`s declared before the first `FROM`, as BuildKit substitutes them; the message shows the
resolved reference. `COPY --from=<image>` and `RUN --mount=from=<image>` that pull an image
(`COPY --from=ghcr.io/astral-sh/uv:latest /uv /bin/`) are judged the same way. The finding
points at the image reference.

Not flagged: `FROM scratch`, `FROM <earlier stage>`, images pinned by digest (a digest is
immutable, whatever the tag says), and references that cannot be worked out statically (an
`ARG` without a default, `${VAR:?}`): a build argument decides them.

Such a base image is not reported again by DKR002 (not pinned by digest): one cause, this
finding, whose fix asks for the version tag and the digest both.

## Why is this bad?
A missing tag means `latest`, and `latest` moves: a rebuild next week gets another PyTorch,
CUDA and cuDNN, and the training image no longer matches the one that was validated. The
article: "Use an explicit, CUDA-enabled base image tag for GPU training workloads (for example,
pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime) instead of an untagged base image reference."

## Example
```dockerfile
ARG BASE=pytorch/pytorch
FROM ${BASE}
```

Use instead:
```dockerfile
ARG BASE=pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime@sha256:0a3b9fedefe1f61ac4d5a9de9015c0863db27ca0fde2d4e37e6268147980b726
FROM ${BASE}
```

## Known problems
- A `--from` word without `/`, `:` or `@` (`COPY --from=tools …`) that names no stage may be a
  named build context (`docker buildx build --build-context tools=…`), so it is not judged.
- A `--build-arg` given at build time can replace an ARG default; the rule judges the file as
  written.

## References
- Dockerfile reference, FROM: https://docs.docker.com/reference/dockerfile/#from
- Dockerfile reference, how ARG and FROM interact: https://docs.docker.com/reference/dockerfile/#understand-how-arg-and-from-interact
"""

from mlops_lint.model.docker import Dockerfile, image_uses, node_path
from mlops_lint.model.images import image_pin
from mlops_lint.model.k8s import parse_image
from mlops_lint.rule import DOCKERFILE, Finding, rule


@rule(code="DKR001", name="base-image-mutable", severity="error", scope=DOCKERFILE, tags=("dockerfile", "images", "supply-chain"))
def check(dockerfile: Dockerfile, ctx):
    for use in image_uses(dockerfile):
        pin = image_pin(use.image)
        if pin is None:
            continue
        tag, digest = pin
        if digest is not None or tag not in (None, "latest"):
            continue
        name = parse_image(use.image)[0]
        how = "has no tag, so it pulls whatever `latest` points to" if tag is None else "uses the mutable tag `latest`"
        yield Finding(
            use.span,
            f"{use.describe()} {how}: rebuilding the same commit can pull a different image",
            node=node_path(use.stage, use.instruction, "image"),
            fix=f"pin a version tag and a digest: `{name}:<version>@sha256:<digest>`",
        )
