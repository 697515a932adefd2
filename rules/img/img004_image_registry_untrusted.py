"""A container image from a registry that is not in `trusted-registries`.

## What it does
Runs only when the config sets a non-empty `trusted-registries:` list. Flags containers (init,
sidecar and ephemeral containers included) whose image comes from a registry not on the list.
The registry is the image's host, as the container runtime resolves it: the first path
component when it has a `.` or `:` or is `localhost`, else Docker Hub (`python:3.12` and
`nvidia/cuda:12.4.1-base-ubuntu22.04` are `docker.io`). An entry matches:

- a host (`myacr.azurecr.io`, `localhost:5000`): every image of that host; host names compare
  case-insensitively, a port must match exactly; `docker.io`, `index.docker.io` and
  `registry-1.docker.io` are one registry;
- `*.` and a domain (`*.azurecr.io`): every host under that domain;
- a host and a path (`myacr.azurecr.io/team-a`, `docker.io/nvidia`): images under that path,
  matched on whole path components (`myacr.azurecr.io/team-a/trainer`, not
  `myacr.azurecr.io/team-ab/trainer`); Docker Hub's bare names live under `library/`.

A scheme (`https://`) or a trailing `/` in an entry is ignored. Templated and placeholder images
(`$(IMAGE)`, `{{ .Values.image }}`, `<your-image>`) are skipped. The finding points at the image.

{{pod-views}}

## Why is this bad?
The article: "Use existing container images … stored in secure container registries", scan
them ("Integrate scanning for Common Vulnerabilities and Exposures", "Microsoft Defender for
Containers for model container images stored in your Azure Container Registry"), and "image
provenance, scanning, and runtime hardening are still core MLOps responsibilities" even on AKS
Automatic. An image pulled from a registry outside the list bypasses that scanning and the
registry's access controls, and a public registry can rate-limit or lose the image.

## Example
```yaml
# .mlops-lint.yaml: trusted-registries: [myacr.azurecr.io, nvcr.io, mcr.microsoft.com]
      containers:
      - name: trainer
        image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
```

Use instead (import the image into your registry, e.g. `az acr import`):
```yaml
      containers:
      - name: trainer
        image: myacr.azurecr.io/pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
```

## Known problems
- `trusted-registries: []` is taken as "not configured" (the rule stays silent), not as "trust
  nothing".
- Registry mirrors configured in the container runtime (containerd `hosts.toml`) are not
  known: an image is judged by the registry its reference names.

## References
- Kubernetes, Images (image names and registries): https://kubernetes.io/docs/concepts/containers/images/#image-names
- Azure, Import container images to ACR: https://learn.microsoft.com/azure/container-registry/container-registry-import-images
- AKS Deployment Safeguards / Azure Policy, allowed registries: https://learn.microsoft.com/azure/aks/deployment-safeguards
"""

from mlops_lint.model.k8s import Container, image_reference, image_registry
from mlops_lint.rule import CONTAINER, Finding, rule

DOCKER_HUB = "docker.io"
_DOCKER_HUB_ALIASES = {"docker.io", "index.docker.io", "registry-1.docker.io"}


def _host(host: str) -> str:
    host = host.lower()
    return DOCKER_HUB if host in _DOCKER_HUB_ALIASES else host


def split_image(name: str) -> tuple[str, str]:
    """(registry host, repository path) of an image name (``python`` -> docker.io, library/python)."""
    host = _host(image_registry(name))
    first, sep, rest = name.partition("/")
    if host != DOCKER_HUB:
        return host, rest
    path = rest if sep and first.lower() in _DOCKER_HUB_ALIASES else name
    return host, path if "/" in path else f"library/{path}"


def split_entry(entry: str) -> tuple[str, str]:
    """(host pattern, path prefix) of a trusted-registries entry."""
    text = entry.strip()
    for scheme in ("https://", "http://", "oci://"):
        if text.lower().startswith(scheme):
            text = text[len(scheme):]
    text = text.strip("/")
    host, _, prefix = text.partition("/")
    return _host(host), prefix.strip("/")


def trusted(name: str, entries: tuple[tuple[str, str], ...]) -> bool:
    host, path = split_image(name)
    for pattern, prefix in entries:
        if pattern.startswith("*."):
            if not host.endswith(pattern[1:]) or host == pattern[2:]:
                continue
        elif host != pattern:
            continue
        if not prefix or path == prefix or path.startswith(prefix + "/"):
            return True
    return False


@rule(code="IMG004", name="image-registry-untrusted", severity="error", scope=CONTAINER,
      tags=("images", "supply-chain", "security"))
def check(container: Container, ctx):
    allowed = ctx.config.trusted_registries
    if not allowed:
        return
    reference = image_reference(container.image)
    if reference is None:
        return
    entries = tuple(split_entry(e) for e in allowed if isinstance(e, str) and e.strip())
    if trusted(reference[0], entries):
        return
    host, path = split_image(reference[0])
    yield Finding(
        container.image_span,
        f"{container.kind_label} `{container.name}` image `{container.image}` (registry `{host}`, repository "
        f"`{path}`) is under no entry of trusted-registries ({', '.join(allowed)})",
        node=container.path + ("image",),
        fix="push or import the image into a trusted registry and reference it there",
    )
