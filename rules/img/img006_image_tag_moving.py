"""A container image on a tag that moves with every build (`main`, `nightly`, `stable` …).

## What it does
Flags containers (init, sidecar and ephemeral containers included) whose image carries no
digest and a tag that registries move to each new build: a branch (`main`, `master`, `dev`,
`devel`, `develop`, `development`, `trunk`, `head`), a channel (`nightly`, `stable`, `edge`,
`canary`, `unstable`, `testing`, `rolling`), or one of those with a variant (`latest-gpu`,
`nightly-gpu`, `main-latest`: a tag beginning with `latest-` or `nightly-`, or ending with
`-latest` or `-nightly`). Tags are compared without regard to case. `latest` alone and no tag
are IMG001's finding; an image pinned by digest is not flagged (the digest decides what runs).
Images filled in later (`$(IMAGE)`, `{{ … }}`) are skipped.

{{pod-views}}

Two places hold a development default, not a deploy choice, and are reported at `info` with
what they are (the tag still moves for anyone who deploys them as written):

- an image in a Kubernetes staging registry (a path segment `k8s-staging-…`, as in
  `us-central1-docker.pkg.dev/k8s-staging-images/lws/lws:main` or `gcr.io/k8s-staging-kueue/…`):
  staging holds pre-release builds by definition; a release promotes a versioned image to
  `registry.k8s.io`, and the release tooling writes that into the manifests;
- a branch tag (`main`, `master`, `dev`, `devel`, `develop`, `development`, `trunk`, `head`, or
  one with `-latest`, as `main-latest`) in an OLM `ClusterServiceVersion`: an operator bundle on
  a development branch, which the release regenerates (`make bundle VERSION=…`) with the
  release's tag.

A moving tag without a digest is this rule's finding alone: IMG002 (image not pinned) leaves
it here, as it leaves `latest` to IMG001 (one cause, one finding).

## Why is this bad?
A moving tag is `latest` by another name: the same manifest runs a different build on every
node that pulls it, so two workers of one job can run different code, a rerun of last week's
training is not the same run, and nobody can tell which build produced a model. The article:
"Use an explicit, CUDA-enabled base image tag … instead of an untagged base image reference.
Pin the image by digest in production to ensure reproducible builds and predictable
CUDA/cuDNN behavior", and "Version your models by packaging model weights, metadata, and
configurations in container images with semantic version tags".

## Example
```yaml
      containers:
      - name: ray-worker
        image: rayproject/ray:nightly-gpu
```

Use instead:
```yaml
      containers:
      - name: ray-worker
        image: rayproject/ray:2.40.0-gpu@sha256:…   # a release, pinned by its digest
```

## Known problems
Only the words above, and the `latest-`/`nightly-` prefixes and `-latest`/`-nightly` suffixes,
count: a channel with a variant (`stable-alpine`) or a team's own moving words (`prod`,
`current`) are not reported here (IMG002 reports them unpinned). With this rule ignored, IMG002
does not report the moving tags either: ignore both or neither.

A kustomize `images:` override with a branch tag outside a staging registry (`newTag: main`) stays
a warning: the rule cannot tell a release tool's placeholder from an overlay's choice.

## References
- Kubernetes, image promotion (staging registries): https://github.com/kubernetes/k8s.io/tree/main/registry.k8s.io
- Kubernetes, container images (image names, tags and digests): https://kubernetes.io/docs/concepts/containers/images/#image-names
- Docker, pin base image versions: https://docs.docker.com/build/building/best-practices/#pin-base-image-versions
"""

from mlops_lint.model.images import image_pin, is_moving_tag
from mlops_lint.model.k8s import Container, image_reference
from mlops_lint.rule import CONTAINER, Finding, rule

BRANCHES = frozenset({"main", "master", "dev", "devel", "develop", "development", "trunk", "head"})


def development_default(image: str, tag: str, container: Container) -> str | None:
    """Why a moving tag is a development default (for the message), else None."""
    reference = image_reference(image)
    name = reference[0] if reference is not None else image.rsplit(":", 1)[0]
    staging = next((part for part in name.lower().split("/") if part.startswith("k8s-staging-")), None)
    if staging is not None:
        return (f"`{staging}` is a Kubernetes staging registry, which holds pre-release builds: a release promotes a "
                "versioned image and its tooling writes that in; pin a release before deploying this as written")
    obj = container.pod.obj
    lower = tag.lower()
    if obj.kind == "ClusterServiceVersion" and (lower in BRANCHES or lower.removesuffix("-latest") in BRANCHES):
        return ("it is in an OLM bundle of a development branch, which the release regenerates with its version tag; "
                "pin a release before deploying this bundle as written")
    return None


@rule(code="IMG006", name="image-tag-moving", severity="warning", scope=CONTAINER, tags=("images", "supply-chain"))
def check(container: Container, ctx):
    image = container.image
    pin = image_pin(image)  # a placeholder registry (`${REGISTRY}/app:nightly`) leaves the tag judged, as IMG001's
    if pin is None:
        return
    tag, digest = pin
    if digest is not None or not is_moving_tag(tag):
        return
    default = development_default(image, tag, container)
    if default is not None:
        yield Finding(container.image_span,
                      f"{container.kind_label} `{container.name}` image `{image}` uses the moving tag `{tag}`, a "
                      f"development default: {default}",
                      node=container.path + ("image",), severity="info")
        return
    yield Finding(container.image_span,
                  f"{container.kind_label} `{container.name}` image `{image}` uses the moving tag `{tag}`, which points "
                  "at a new build every time it is pushed; use a release tag and pin its digest",
                  node=container.path + ("image",))
