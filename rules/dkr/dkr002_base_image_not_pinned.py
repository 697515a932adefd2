"""A base image that is not pinned by digest.

## What it does
Flags every `FROM` that pulls an image without an `@sha256:` digest (or with a malformed one: a
`sha256` digest is 64 hex characters), in every stage, and the images that `COPY --from=<image>`
and `RUN --mount=from=<image>` pull. `FROM $VAR` is judged with the defaults of the ARGs declared
before the first `FROM`; `FROM scratch`, `FROM <earlier stage>` and references that cannot be
worked out statically are skipped. The finding points at the image reference.

A base image with no tag or the tag `latest` (and no digest) is DKR001's finding alone: both
rules say the same thing of it, and DKR001's fix asks for a version tag and the digest.

## Why is this bad?
A tag is a pointer that the publisher can move: `pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime`
rebuilt upstream gives another image under the same name, so two builds of one commit can differ.
The article: "Pin the image by digest in production to ensure reproducible builds and predictable
CUDA/cuDNN behavior", and "Pin the base image by an immutable digest in production."

## Example
```dockerfile
FROM pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
```

Use instead:
```dockerfile
FROM pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime@sha256:0a3b9fedefe1f61ac4d5a9de9015c0863db27ca0fde2d4e37e6268147980b726
```
(keep the tag for readers; BuildKit pulls by the digest). `docker buildx imagetools inspect
<image>` prints the digest of a tag; Dependabot and Renovate keep pinned digests current.

## Known problems
A bare `--from` word that names no stage may be a named build context and is not judged. An ARG
default can be overridden by `--build-arg`; the file is judged as written.

## References
- Dockerfile reference, FROM (`@digest`): https://docs.docker.com/reference/dockerfile/#from
- Docker build best practices, pin base image versions: https://docs.docker.com/build/building/best-practices/#pin-base-image-versions
"""

import re

from mlops_lint.model.docker import Dockerfile, image_uses, node_path
from mlops_lint.model.images import image_pin
from mlops_lint.rule import DOCKERFILE, Finding, rule

_DIGEST = re.compile(r"^(sha256:[a-f0-9]{64}|sha384:[a-f0-9]{96}|sha512:[a-f0-9]{128})$")


@rule(code="DKR002", name="base-image-not-pinned", severity="warning", scope=DOCKERFILE, tags=("dockerfile", "images", "supply-chain"))
def check(dockerfile: Dockerfile, ctx):
    for use in image_uses(dockerfile):
        pin = image_pin(use.image)
        if pin is None:
            continue
        tag, digest = pin
        if digest is None and tag in (None, "latest"):
            continue  # no tag or `latest`: DKR001's finding, whose fix asks for the digest too (one cause)
        if digest is None:
            message = f"{use.describe()} is not pinned by digest (@sha256:…): the tag can move to another build"
        elif not _DIGEST.match(digest):
            message = f"{use.describe()} has a malformed digest `{digest}`"
        else:
            continue
        yield Finding(use.span, message, node=node_path(use.stage, use.instruction, "digest"),
                      fix=f"append the digest: `{use.image.split('@')[0]}@sha256:<digest>` "
                          "(docker buildx imagetools inspect prints it)")
