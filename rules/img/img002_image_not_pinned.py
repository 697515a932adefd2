"""A container image that is not pinned by digest.

## What it does
Flags containers (init, sidecar and ephemeral containers included) whose `image` carries no
`@sha256:` digest, or a digest that is malformed (a `sha256` digest is 64 hex characters).
Images whose reference, tag or digest is filled in later (`$(IMAGE)`, `$IMAGE`, `{{ … }}`,
`trainer:${TAG}`, `trainer@sha256:<digest>`) and placeholders that are not image references
(`<your-image>`, `FILLED_BY_THE_VALIDATOR`) are skipped; a placeholder in the registry or the
path leaves the tag and digest judged (`${REGISTRY}/trainer:1.0` has no digest).

{{pod-views}}

An image with no tag or the tag `latest` (and no digest) is IMG001's finding alone, and one on a
moving tag (`main`, `nightly`, `latest-gpu` …) IMG006's: the rules say the same thing of it (what
runs can change under the same reference), and their messages ask for a release tag and the
digest. This rule reports images with a version tag and no digest, and malformed digests.

## Why is this bad?
Tags are mutable: a registry push can move `2.4.1-cuda12.4` to a different build, so the
image you reviewed is not necessarily the one that runs. The article: "Pin the image by
digest in production to ensure reproducible builds and predictable CUDA/cuDNN behavior", and
image provenance is "still a core MLOps responsibility". A digest also lets every replica of a
distributed job and every restart after preemption run identical bits.

## Example
```yaml
        image: nvcr.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04
```

Use instead:
```yaml
        image: nvcr.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04@sha256:<digest of the pushed image>
```
(keep the tag for readers; the digest is what the runtime pulls).

## Known problems
The digest of an image you build yourself is known only after it is pushed; pin it in the
manifest your release pipeline produces, and suppress this rule on development overlays.

## References
- Kubernetes, Images (image names and digests): https://kubernetes.io/docs/concepts/containers/images/#image-names
- OCI image spec, digests: https://github.com/opencontainers/image-spec/blob/main/descriptor.md#digests
"""

import re

from mlops_lint.model.images import image_pin, is_moving_tag
from mlops_lint.model.k8s import Container
from mlops_lint.rule import CONTAINER, Finding, rule

_DIGEST = re.compile(r"^(sha256:[a-f0-9]{64}|sha384:[a-f0-9]{96}|sha512:[a-f0-9]{128})$")


@rule(code="IMG002", name="image-not-pinned", severity="warning", scope=CONTAINER, tags=("images", "supply-chain"))
def check(container: Container, ctx):
    image = container.image
    pin = image_pin(image)
    if pin is None:
        return
    tag, digest = pin
    if digest is None and tag in (None, "latest"):
        return  # no tag or `latest`: IMG001's finding, which asks for the digest too (one cause, one finding)
    if digest is None and is_moving_tag(tag):
        return  # `main`, `nightly`, `latest-gpu` …: IMG006's finding, which asks for the digest too
    who = f"{container.kind_label} `{container.name}`"
    if digest is None:
        message = f"{who} image `{image}` is not pinned by digest (@sha256:…)"
    elif not _DIGEST.match(digest):
        message = f"{who} image `{image}` has a malformed digest `{digest}`"
    else:
        return
    yield Finding(container.image_span, message, node=container.path + ("image",))
