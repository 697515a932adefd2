"""A container that keeps the container runtime's default Linux capabilities.

## What it does
Flags every container (init, sidecar and ephemeral containers included) whose
`securityContext.capabilities.drop` does not list `ALL`. The value must be exactly `ALL`: the
restricted Pod Security Standard (and the policy engines that implement it) compare the string
as written, so a lower-case `all`, which the container runtimes accept, is reported with a note.
The finding points at the `drop:` key, else `capabilities:`, else `securityContext:`, else the
container's `name:`. Windows pods are exempt, as in the Pod Security Standards: `spec.os.name:
windows`, or a nodeSelector or required node affinity that admits only `kubernetes.io/os:
windows` nodes. A privileged container is not flagged: it has every capability whatever it
drops, and SEC004 reports it, once for the one cause.

{{pod-views}}

## Why is this bad?
Container runtimes grant a default set of capabilities (`CHOWN`, `DAC_OVERRIDE`, `FOWNER`,
`SETUID`, `SETGID`, `NET_RAW`, `MKNOD`, …) that a training or inference process never needs and an
attacker can use: `NET_RAW` for spoofing on the pod network, `DAC_OVERRIDE` to read any file in
the container, `SETUID` to change user. The article's hardened device plugin drops them all
(`capabilities: drop: [ALL]`), and the restricted Pod Security Standard requires it, allowing
only `NET_BIND_SERVICE` to be added back.

## Example
```yaml
        securityContext:
          allowPrivilegeEscalation: false
```

Use instead:
```yaml
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            drop: ["ALL"]
```

## Fix safety
Unsafe. The fix makes `securityContext.capabilities.drop` hold `ALL`: it creates
`capabilities: {drop: [ALL]}` (and `securityContext:`) when missing, adds `drop: [ALL]` beside an
`add:` list (Kubernetes drops first, then adds those back, so what the container adds is kept),
appends `ALL` to a `drop` list that names only some capabilities (they are then redundant, and
left as written), and writes an `all` in another case as `ALL`. Dropping the runtime's default
capabilities (`CHOWN`, `SETUID`, `SETGID`, `NET_BIND_SERVICE`, `KILL` …) can break an image
that changes users, owns files or binds ports below 1024 as root: add back what it needs under
`add:`. Review it, then apply with `--unsafe-fixes`. There is no fix when `drop` or
`capabilities` is not a list or a mapping.

## Known problems
Capabilities added back (`add:`) are not judged here. Defaults injected at
admission by a mutating webhook or policy engine are not seen.

## References
- Kubernetes, Pod Security Standards (Capabilities): https://kubernetes.io/docs/concepts/security/pod-security-standards/
- Kubernetes, Set capabilities for a Container: https://kubernetes.io/docs/tasks/configure-pod-container/security-context/#set-capabilities-for-a-container
"""

from mlops_lint.fix.plans import drop_all_capabilities
from mlops_lint.model.k8s import Container
from mlops_lint.model.security import anchor, capabilities, is_privileged, is_windows
from mlops_lint.rule import CONTAINER, Finding, rule


@rule(code="SEC002", name="capabilities-not-dropped", severity="warning", scope=CONTAINER,
      tags=("security", "pod-security"), security_severity="5.0")
def check(container: Container, ctx):
    if is_windows(container.pod) or is_privileged(container):
        return  # Linux-only field; a privileged container has every capability whatever it drops: SEC004
    caps = capabilities(container)
    dropped = [name for name, _, _ in caps.drop]
    if "ALL" in dropped:
        return
    who = f"{container.kind_label} `{container.name}`"
    if caps.node is not None and "drop" in caps.node.kspans:
        span, node = caps.node.kspans["drop"], container.path + ("securityContext", "capabilities", "drop")
        if any(name.upper() == "ALL" for name in dropped):
            message = f"{who} drops `all` in lower case; Pod Security Admission looks for exactly `ALL`"
        else:
            message = (f"{who} drops only {', '.join(dropped) or 'nothing'} and keeps the rest of the runtime's "
                       "default capabilities; drop `ALL`")
    elif caps.node is not None:
        span, node = container.security_context.kspans["capabilities"], container.path + ("securityContext", "capabilities")
        message = f"{who} sets capabilities but drops none, keeping the runtime's defaults; add `drop: [\"ALL\"]`"
    else:
        span, node = anchor(container)
        message = f"{who} keeps the runtime's default capabilities; set `capabilities: {{drop: [\"ALL\"]}}`"
    yield Finding(span, message, node=node, fix='capabilities:\n  drop: ["ALL"]',
                  autofix=drop_all_capabilities(container))
