"""A container that may gain more privileges than its process started with.

## What it does
Flags every container (init, sidecar and ephemeral containers included, as Pod Security
Admission checks them) whose effective `allowPrivilegeEscalation` is not `false`: it is unset
(the default is `true`), `true`, or not a boolean; or the container adds `CAP_SYS_ADMIN`
(`SYS_ADMIN`), which always allows escalation whatever the field says. The finding points at the
`SYS_ADMIN` entry when it is the cause, else at the `allowPrivilegeEscalation` value, else at
the container's `securityContext:` key, else its `name:`. Windows pods are exempt, as in the Pod
Security Standards: `spec.os.name: windows`, or a nodeSelector or required node affinity that
admits only `kubernetes.io/os: windows` nodes.

A privileged container (`privileged: true`) is not flagged here: privileged overrides
`allowPrivilegeEscalation`, and SEC004 reports it, once for the one cause.

{{pod-views}}

## Why is this bad?
Without `no_new_privs`, a setuid binary or file capability in the image lets a compromised
training or serving process become root in the container, one step from the node and from
every GPU job and credential on it. The restricted Pod Security Standard requires
`allowPrivilegeEscalation: false`, and the article's hardened device plugin sets it; AKS
Deployment Safeguards and Azure Policy's Kubernetes baseline check the same field.

## Example
```yaml
      containers:
      - name: trainer
        image: myacr.azurecr.io/train:1.4.0
```

Use instead:
```yaml
      containers:
      - name: trainer
        image: myacr.azurecr.io/train:1.4.0
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            drop: ["ALL"]
```

## Fix safety
Unsafe. The fix sets `securityContext.allowPrivilegeEscalation: false` on the container
(adding `securityContext:` when it has none, or replacing `true` or a value that is not a
boolean). That is the article's setting and what Pod Security's `restricted` level asks, but it
changes what the process may do: `no_new_privs` stops setuid binaries (`sudo`, `su`, `ping` on
some images) and file capabilities from taking effect, and an image that relies on them fails at
run time. Review it, then apply with `--unsafe-fixes`. When the container adds `CAP_SYS_ADMIN`
(the API server rejects `false` beside it), the fix removes every `SYS_ADMIN` and `CAP_SYS_ADMIN`
item of `capabilities.add` (with its line and the comment on it; `add: []` when nothing else is
left) and sets `allowPrivilegeEscalation: false`: a process that mounts filesystems (FUSE, blob
CSI), profiles the GPU or otherwise calls what only `CAP_SYS_ADMIN` allows fails then, so review
it. There is no fix when the value is a placeholder.

## Known problems
There is no pod-level field: every container needs its own setting. A LimitRange, mutating webhook or policy
engine that injects the field at admission is not seen.

## References
- Kubernetes, Pod Security Standards: https://kubernetes.io/docs/concepts/security/pod-security-standards/
- Kubernetes, Configure a Security Context: https://kubernetes.io/docs/tasks/configure-pod-container/security-context/
- AKS, Pod security best practices: https://learn.microsoft.com/azure/aks/developer-best-practices-pod-security
"""

from mlops_lint.fix.plans import no_privilege_escalation, remove_sys_admin
from mlops_lint.model.k8s import Container
from mlops_lint.model.security import is_privileged, is_windows, privilege_escalation
from mlops_lint.rule import CONTAINER, Finding, rule

WHY = {
    "CAP_SYS_ADMIN": "adds CAP_SYS_ADMIN, which always allows privilege escalation; remove it and set "
                     "`allowPrivilegeEscalation: false`",
    "explicit": "sets `allowPrivilegeEscalation: true`; set it to false",
    "invalid": "sets `allowPrivilegeEscalation` to a value that is not a boolean; write `false`",
    "default": "may escalate privileges (`allowPrivilegeEscalation` defaults to true); set "
               "`allowPrivilegeEscalation: false`",
}


@rule(code="SEC001", name="privilege-escalation-allowed", severity="warning", scope=CONTAINER,
      tags=("security", "pod-security"), security_severity="5.5")
def check(container: Container, ctx):
    if is_windows(container.pod) or is_privileged(container):
        return  # Linux-only field; privileged is SEC004's finding alone
    escalation = privilege_escalation(container)
    if escalation.allowed:
        if escalation.reason == "CAP_SYS_ADMIN":
            fix = "remove `SYS_ADMIN` from `capabilities.add`; set `allowPrivilegeEscalation: false`"
            autofix = remove_sys_admin(container)
        else:
            fix, autofix = "allowPrivilegeEscalation: false", no_privilege_escalation(container)
        yield Finding(escalation.span, f"{container.kind_label} `{container.name}` {WHY[escalation.reason]}",
                      node=escalation.path, fix=fix, autofix=autofix)
