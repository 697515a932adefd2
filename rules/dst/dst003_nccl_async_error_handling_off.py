"""A GPU container of a PyTorchJob without `TORCH_NCCL_ASYNC_ERROR_HANDLING=1`.

## What it does
Flags each container of a Kubeflow `PyTorchJob` that requests or limits a GPU and whose
environment does not turn on NCCL asynchronous error handling in a mode that tears the process
down: `TORCH_NCCL_ASYNC_ERROR_HANDLING` set to `1` (abort the communicators, then exit) or `3`
(exit without aborting them, the default of recent PyTorch). The older name
`NCCL_ASYNC_ERROR_HANDLING` is accepted too: PyTorch 2.2 renamed it and still reads the old name
(with a deprecation warning) when the new one is unset. A container that turns on blocking wait
(`TORCH_NCCL_BLOCKING_WAIT=1`, or the old `NCCL_BLOCKING_WAIT=1`) is not flagged: collectives then
raise after the process group timeout instead of hanging. An unset variable is reported at the
container's `env:` key (else its `name:`); a value of `0`, `2` or something that is not a mode
at the value.

{{dra-gpus}}

Only where NCCL is the backend: a container that chooses another one (`--backend gloo`,
`--dist-backend=mpi`, `backend="gloo"` or `init_process_group("gloo")` in a `python -c` or
`sh -c` command line, or an env var whose name ends in `BACKEND` holding `gloo`), and does not
name `nccl` as well, is not asked for NCCL settings (`linter.model.distributed.uses_nccl`; for an
MPIJob worker, the launcher's command line counts too). A container that names no backend is
taken to use NCCL, PyTorch's default on GPUs.

## Why is this bad?
When a rank dies or the network drops, the surviving ranks wait in their collectives forever:
the GPUs stay allocated, the job never fails, and the operator never restarts it. The article's
baseline: "TORCH_NCCL_ASYNC_ERROR_HANDLING=1 helps PyTorch terminate instead of hanging
indefinitely after asynchronous communication failures". `0` turns the watchdog's handling off;
`2` only aborts the communicators and leaves the process running.

## Example
```yaml
          - name: pytorch
            env:
            - name: NCCL_SOCKET_IFNAME
              value: eth0
```

Use instead:
```yaml
            env:
            - name: NCCL_SOCKET_IFNAME
              value: eth0
            - name: TORCH_NCCL_ASYNC_ERROR_HANDLING
              value: "1"
```

## Fix safety
Safe. With the variable unset, the fix appends `{name: TORCH_NCCL_ASYNC_ERROR_HANDLING, value:
"1"}` to the container's `env` (creating `env:` when there is none), the article's setting;
when the variable the rule reports (the new name, or the old `NCCL_ASYNC_ERROR_HANDLING` that
PyTorch reads in its place) is written with another value, the fix sets that entry's `value` to
the string `"1"`. Mode 1 only changes what happens after a NCCL error has already broken the
job: the process exits (and the operator restarts it) instead of hanging with its GPUs, which is
the rule's intent; a healthy run is unchanged. There is no fix when `env` is neither a list nor empty.

## Known problems
Values compare as the strings Kubernetes passes (`1` and `"1"` are the same); PyTorch reads them
as integers. A variable whose value comes from `valueFrom`, that refers to another variable
(`$(MODE)`), or that the container may get through `envFrom` is unknown and not judged; so is
one that the container's `command`/`args` mention (a launch script may export it). PyTorch
2.2 and later default to mode 3 when nothing is set, which already tears the process down, but
the image's PyTorch version is not known from the manifest (earlier releases default to 0):
the rule asks for the explicit setting the article recommends. Init containers are not checked.

## References
- PyTorch, ProcessGroupNCCL environment variables: https://pytorch.org/docs/stable/torch_nccl_environment_variables.html
- PyTorch pull request 110723 (default mode 3) and 114077 (the `TORCH_` prefix): https://github.com/pytorch/pytorch/pull/114077
"""

from mlops_lint.fix import AppendItem
from mlops_lint.fix.plans import env_entry, plan, set_path
from mlops_lint.model.distributed import KUBEFLOW, rank_env, uses_nccl
from mlops_lint.model.k8s import Container, container_uses_gpu
from mlops_lint.rule import CONTAINER, Finding, rule

NAMES = ("TORCH_NCCL_ASYNC_ERROR_HANDLING", "NCCL_ASYNC_ERROR_HANDLING")  # PyTorch reads them in this order
BLOCKING_WAIT = ("TORCH_NCCL_BLOCKING_WAIT", "NCCL_BLOCKING_WAIT")
TEAR_DOWN = {1: "abort and tear down", 3: "tear down without abort"}
OTHER = {0: "turns asynchronous error handling off", 2: "only aborts the communicators and keeps the process running"}
FIX = '- name: TORCH_NCCL_ASYNC_ERROR_HANDLING\n  value: "1"'
WANTED = "1"  # the article's value, as the string Kubernetes passes


def _append(container: Container):
    env = container.body.get("env")
    if env is not None and not isinstance(env, list):
        return None
    return plan(f'add `{NAMES[0]}: "{WANTED}"` to the env of container `{container.name}`',
                AppendItem(container.body, "env", {"name": NAMES[0], "value": WANTED}))


def _set(container: Container, var):
    return plan(f'set `{var.name}` to "{WANTED}"', set_path(env_entry(container, var), ("value",), WANTED)) \
        if var is not None else None


def first_set(container: Container, names: tuple[str, ...]):
    """The first of ``names`` that is not unset, as PyTorch's ``getCvar*`` reads them."""
    for name in names:
        setting = rank_env(container, name)
        if not setting.is_unset:
            return setting
    return None


def as_int(value: str | None) -> int | None:
    try:
        return int(str(value).strip())
    except ValueError:
        return None


@rule(code="DST003", name="nccl-async-error-handling-off", severity="warning", scope=CONTAINER,
      tags=("distributed", "nccl", "pytorch"))
def check(container: Container, ctx):
    obj = container.obj
    if obj.group != KUBEFLOW or obj.kind != "PyTorchJob" or container.field != "containers":
        return
    if not container_uses_gpu(container) or not uses_nccl(container):
        return
    blocking = first_set(container, BLOCKING_WAIT)
    if blocking is not None and (blocking.is_unknown or as_int(blocking.value) == 1):
        return
    setting = first_set(container, NAMES)
    who = f"container `{container.name}` of the {container.pod.describe()}"
    if setting is None:
        yield Finding(container.body.kspans.get("env", container.span),
                      f"{who} uses GPUs but sets no TORCH_NCCL_ASYNC_ERROR_HANDLING: a failed rank can leave the "
                      "others hanging in NCCL collectives; set it to \"1\"",
                      node=container.path + ("env",), fix=FIX, autofix=_append(container))
    elif setting.is_literal and as_int(setting.value) not in TEAR_DOWN:
        what = OTHER.get(as_int(setting.value), "is not a mode PyTorch knows (0-3)")
        yield Finding(setting.span or container.span,
                      f"{who} sets {setting.name}={setting.value}, which {what}: ranks hang instead of failing "
                      "after a NCCL error; set it to \"1\"",
                      node=setting.var.path + ("value",) if setting.var else container.path + ("env",), fix=FIX,
                      autofix=_set(container, setting.var) if setting.reason == "env" else None)
