"""`NCCL_DEBUG=INFO` or `TRACE` left on in a workload.

## What it does
Flags a container whose environment sets `NCCL_DEBUG` to `INFO` or `TRACE` (NCCL compares the
level case-insensitively, so `info` counts too), and an exec-form `mpirun` command line that
exports it to every rank (`-x NCCL_DEBUG=INFO` in `command` or `args`). Every container is
checked, init containers included. The finding points at the value.

Only where NCCL is the backend: a container that chooses another one (`--backend gloo`,
`--dist-backend=mpi`, `backend="gloo"` or `init_process_group("gloo")` in a `python -c` or
`sh -c` command line, or an env var whose name ends in `BACKEND` holding `gloo`), and does not
name `nccl` as well, is not asked for NCCL settings (`linter.model.distributed.uses_nccl`; for an
MPIJob worker, the launcher's command line counts too). A container that names no backend is
taken to use NCCL, PyTorch's default on GPUs.

## Why is this bad?
At `INFO` every rank logs its topology, rings, channels and transport setup, and `TRACE` logs
every call: log volume grows with ranks and steps, which costs log storage and hides the
warnings that matter. The article uses the setting for bring-up only: "NCCL_DEBUG=INFO provides
diagnostics during validation. Reduce the log level after tuning."

## Example
```yaml
            env:
            - name: NCCL_DEBUG
              value: INFO
```

Use instead:
```yaml
            env:
            - name: NCCL_DEBUG
              value: WARN
```

## Fix safety
Safe. The fix sets the `NCCL_DEBUG` entry's value to `WARN` (for `mpirun -x NCCL_DEBUG=INFO`, the
argument becomes `NCCL_DEBUG=WARN`), the level the rule asks for once the network is validated.
It changes only what NCCL logs: warnings and errors are still printed, so a failing job still
says why.

## Known problems
Validation and benchmark jobs (nccl-tests) set `INFO` on purpose: suppress the rule there with
`# mlops-lint: disable=DST006 validation run`. A value from `valueFrom`, `envFrom` or a
ConfigMap is not seen, nor is a level set inside a shell script in `command`/`args`.

## References
- NVIDIA NCCL, `NCCL_DEBUG`: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-debug
"""

from mlops_lint.fix import Replace
from mlops_lint.fix.plans import env_entry, plan, set_path
from mlops_lint.model.distributed import uses_nccl
from mlops_lint.model.envvars import mpirun_exports, resolve
from mlops_lint.model.k8s import Container
from mlops_lint.rule import CONTAINER, Finding, rule

VERBOSE = ("INFO", "TRACE")


def _text(container: Container, value: str) -> str:
    """A plain scalar's replacement text: quoted in a JSON file, plain in YAML."""
    return f'"{value}"' if str(container.obj.path).endswith(".json") else value


@rule(code="DST006", name="nccl-debug-verbose", severity="info", scope=CONTAINER, tags=("distributed", "nccl"))
def check(container: Container, ctx):
    if not uses_nccl(container):
        return  # gloo or MPI chosen: NCCL_DEBUG is never read
    who = f"{container.kind_label} `{container.name}`"
    if container.pod.role:
        who += f" of the {container.pod.role} replicas"
    setting = resolve(container, "NCCL_DEBUG")
    if setting.is_literal and setting.value.strip().upper() in VERBOSE and setting.var is not None:
        yield Finding(setting.span or setting.var.span,
                      f"{who} sets NCCL_DEBUG={setting.value}, which logs every rank's NCCL setup; "
                      "use WARN once the network is validated",
                      node=setting.var.path + ("value",), fix="value: WARN",
                      autofix=plan("set `NCCL_DEBUG` to `WARN`", set_path(env_entry(container, setting.var), ("value",), "WARN")))
    for export in mpirun_exports(container):
        if export.name == "NCCL_DEBUG" and export.value is not None and export.value.strip().upper() in VERBOSE:
            yield Finding(export.span,
                          f"{who} exports NCCL_DEBUG={export.value} to every MPI rank (`mpirun -x`); "
                          "use WARN once the network is validated",
                          node=export.path, fix="NCCL_DEBUG=WARN",
                          autofix=plan("export `NCCL_DEBUG=WARN` instead", Replace(export.span, _text(container, "NCCL_DEBUG=WARN"))))
