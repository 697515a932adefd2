"""An image whose final stage runs as root.

## What it does
Flags a final stage (the image `docker build` produces) that sets no `USER`, neither itself nor
in the stages it is built on (`FROM base AS train` inherits `base`'s USER), and a final stage
whose last `USER` is root (`USER root`, `USER 0`, `USER root:root`, `USER 0:0`). Only the last
USER counts: `USER root` to install packages followed by `USER 1000` is fine.

Not flagged: bases known to run as a non-root user already (Jupyter's docker-stacks images run
as `jovyan`, `rayproject/ray` as `ray`, distroless `:nonroot` tags, Chainguard images), Windows
bases (`mcr.microsoft.com/windows/…`, `*-nanoserver`, `*-windowsservercore` tags: Windows
containers have no uid 0, their users are `ContainerAdministrator`/`ContainerUser`), and a
USER whose value cannot be worked out (`USER $APP_UID` without a known value). The finding
points at the final stage's FROM, or at the root USER's value.

## Why is this bad?
A training container that runs as uid 0 makes every compromise of the training code (a
malicious dataset loader, a poisoned pickle checkpoint) a root compromise of the container, and
clusters that enforce `runAsNonRoot` (AKS Deployment Safeguards, Pod Security "restricted")
refuse to start it unless the manifest sets a uid. The article lists "runtime hardening" among
the supply-chain controls that "remain essential", and its checkpointed Job runs as uid 1000.

## Example
```dockerfile
FROM pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
COPY train.py /workspace/
ENTRYPOINT ["python", "/workspace/train.py"]
```

Use instead:
```dockerfile
FROM pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
RUN useradd --uid 1000 --create-home trainer
COPY train.py /workspace/
USER 1000:1000
ENTRYPOINT ["python", "/workspace/train.py"]
```
(a numeric uid lets Kubernetes check `runAsNonRoot` without reading `/etc/passwd`).

## Fix safety
Unsafe. The fix adds a line `USER 1000:1000` after the last instruction of the final stage (the
instructions before it, installs that need root included, still run as before; a final
`USER root` stays where it is). It changes how the container runs beyond the rule's intent:
files the build wrote as root (`/workspace`, caches, a virtual environment) may not be writable
by uid 1000, uid 1000 may have no `/etc/passwd` entry (then `HOME` is `/`), and an entrypoint
that needs root at start (`chown`, binding a port below 1024) fails. Review the image, or create
the user first (`RUN useradd --uid 1000 --create-home trainer`). No fix when the final stage ends
in a here-document that is never closed (the new line would become part of its body).

## Known problems
- SPEC words the condition as "no USER instruction after the last FROM". A USER inherited from
  an earlier stage applies to the final image (BuildKit copies the stage's config), so it
  counts; a final `USER root` runs the image as root, so it is flagged too.
- The USER of a base image is known only for the few bases listed above; a base of your own that
  already switches to a non-root user is flagged, so add `USER` to make it explicit.
- A pod's `securityContext.runAsUser` overrides the image's USER; SEC003 checks the manifests.

## References
- Dockerfile reference, USER: https://docs.docker.com/reference/dockerfile/#user
- Kubernetes, Pod Security Standards (runAsNonRoot): https://kubernetes.io/docs/concepts/security/pod-security-standards/
- AKS Deployment Safeguards: https://learn.microsoft.com/azure/aks/deployment-safeguards
"""

from mlops_lint.fix import Plan, Replace
from mlops_lint.model.docker import Dockerfile, Stage, expand, final_user, node_path, repository_path
from mlops_lint.model.k8s import image_reference
from mlops_lint.model.position import Span
from mlops_lint.rule import DOCKERFILE, Finding, rule

ROOT = frozenset({"root", "0"})


def non_root_base(image: str | None) -> bool:
    """Bases whose default user is known not to be root (and Windows bases, which have no root)."""
    reference = image_reference(image)
    if reference is None:
        return False
    name, tag, _ = reference
    path = repository_path(name.lower())
    tag_parts = (tag or "").lower().replace("_", "-").split("-")
    return (
        path.startswith("windows/") or any(p in ("nanoserver", "windowsservercore", "servercore") for p in tag_parts)
        or
        path.startswith("jupyter/") and path.endswith("-notebook")
        or path in ("rayproject/ray", "rayproject/ray-ml")
        or path.startswith("chainguard/")
        or "nonroot" in tag_parts
    )


def add_user(final: Stage) -> Plan | None:
    """``USER 1000:1000`` on a line of its own after the final stage's last instruction (None when
    that instruction opens a here-document that never closes: the line would join its body)."""
    ins = (final.instructions or [final.from_instruction])[-1]
    if any(not doc.terminated for doc in ins.heredocs):
        return None
    last = ins.span
    end = Span(last.end_line, last.end_col, last.end_line, last.end_col)
    return Plan.unsafe_fix("add `USER 1000:1000` at the end of the final stage", Replace(end, "\nUSER 1000:1000"))


@rule(code="DKR007", name="image-runs-as-root", severity="info", scope=DOCKERFILE, tags=("dockerfile", "security"))
def check(dockerfile: Dockerfile, ctx):
    final = dockerfile.final_stage
    if final is None:
        return
    found = final_user(dockerfile)
    if found is None:
        if non_root_base(dockerfile.chain(final)[0].base_resolved):
            return
        yield Finding(
            final.from_instruction.span,
            "the final stage sets no USER, so the image runs as root (uid 0)",
            node=node_path(final, final.from_instruction, "user"),
            fix="create a user and end with `USER 1000:1000` (a numeric uid) after the installs",
            autofix=add_user(final),
        )
        return
    ins, stage = found
    value = expand(ins.args, dockerfile.env_before(stage, ins)) if "$" in ins.args else ins.args
    if value is None or value.split(":", 1)[0].strip() not in ROOT:
        return
    yield Finding(
        ins.args_span or ins.keyword_span,
        f"the final image's last USER is `{ins.args}`: it runs as root (uid 0)",
        node=node_path(stage, ins),
        fix="switch back to a non-root user after the steps that need root: `USER 1000:1000`",
        autofix=add_user(final),
    )
