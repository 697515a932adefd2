"""A torchrun process count per node that differs from the GPUs the pod gets.

## What it does
Compares the number of processes PyTorch's elastic launcher starts on each pod with the GPUs
that pod requests, when both are literal numbers:

- a PyTorchJob's `spec.nprocPerNode` (the training operator passes it to every replica as
  `PET_NPROC_PER_NODE`), against each GPU replica type;
- a container's `PET_NPROC_PER_NODE` env var;
- `torchrun`'s (or `python -m torch.distributed.run`'s) `--nproc_per_node` /
  `--nproc-per-node` flag in a container's `command` or `args`, also inside a `sh -c` script.

The GPUs are the container's `nvidia.com/gpu` (or `amd.com/gpu`) limit, else its request; for
`nprocPerNode` and the env var, those of the container that runs the launcher (the
replica's `pytorch` container, else its first GPU container). Values such as `auto`, `gpu` or a
variable are not judged, nor pods without a GPU (CPU training with gloo may start any number).
A container whose command line gives the flag is judged by the flag (it wins over the env var
and `nprocPerNode`). The finding points at the value.

## Why is this bad?
Each torchrun process drives one GPU (`LOCAL_RANK` picks it). More processes than GPUs and
the extra ranks either crash (`invalid device ordinal`) or share a GPU and run out of memory;
fewer and the remaining GPUs, the most expensive part of the node, sit idle while the job is
billed for them. The article: "Align replica counts with the number of GPUs and processes
required by the training framework", and its PyTorchJob calls `torch.cuda.set_device(0)` in
pods that request one GPU each.

## Example
```yaml
spec:
  nprocPerNode: "8"
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: pytorch
            resources:
              limits:
                nvidia.com/gpu: 4
```

Use instead:
```yaml
spec:
  nprocPerNode: "4"
```

## Known problems
- Model-parallel launchers that run one process over several GPUs (one rank per node driving
  all of its GPUs) differ on purpose: suppress the finding there.
- A count set in a script the image runs, or through a variable, is not seen.

## References
- PyTorch, torchrun (`--nproc-per-node`): https://docs.pytorch.org/docs/stable/elastic/run.html
- Kubeflow Training Operator, PyTorchJob (`nprocPerNode`): https://www.kubeflow.org/docs/components/trainer/legacy-v1/user-guides/pytorch/
"""

from __future__ import annotations

from mlops_lint.model.distributed import KUBEFLOW, default_container
from mlops_lint.model.shellc import statements
from mlops_lint.rule import POD, Finding, rule

FLAGS = ("--nproc_per_node", "--nproc-per-node")
GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")
ENV = "PET_NPROC_PER_NODE"


def _count(value) -> int | None:
    """A literal whole number (``4`` or ``"4"``), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= _MAX_DIGITS:
        return int(value.strip())  # (more digits than any process count: Python refuses over 4,300)
    return None


_MAX_DIGITS = 18


def _gpus(container) -> int | None:
    """The container's GPUs when they are a literal whole number (limit, else request)."""
    total = None
    for resource in GPU_RESOURCES:
        entry = container.limits.get(resource) or container.requests.get(resource)
        if entry is None:
            continue
        value = entry.value
        if value is None or value.denominator != 1:
            return None
        total = (total or 0) + int(value)
    return total


def _launcher_flag(container):
    """(count text, span, node) of the launcher's ``--nproc-per-node``, or None."""
    if not any("nproc" in item for item in container.command_strings):
        return None  # the common case, decided by one substring test per item
    for field in ("command", "args"):
        items = container.body.get_seq(field)
        if items is None:
            continue
        for index, item in enumerate(items):
            if not isinstance(item, str):
                continue
            if "nproc" not in item and item not in FLAGS:
                continue
            words = [w for command, _ in statements(item) for w in command] if any(c.isspace() for c in item) else [item]
            if index + 1 < len(items) and item in FLAGS:
                following = items[index + 1]
                return str(following), items.item_span(index + 1), container.path + (field, index + 1)
            for position, word in enumerate(words):
                name, eq, value = word.partition("=")
                if name in FLAGS:
                    if not eq:
                        value = words[position + 1] if position + 1 < len(words) else ""
                    return value, items.item_span(index), container.path + (field, index)
    return None


def _gpu_text(gpus: int) -> str:
    return f"{gpus} GPU" if gpus == 1 else f"{gpus} GPUs"


def _mismatch(count: int, gpus: int) -> str:
    return ("more processes than GPUs: the extra ranks crash on `invalid device ordinal` or share a GPU"
            if count > gpus else "fewer processes than GPUs: the other GPUs sit idle")


@rule(code="DST009", name="nproc-gpu-mismatch", severity="error", scope=POD, tags=("distributed", "gpu"))
def check(pod, ctx):
    for container in pod.app_containers:
        gpus = _gpus(container)
        if not gpus:
            continue  # a count is judged against the container's GPUs: none, nothing to judge
        found = _launcher_flag(container)
        if found is not None:
            count = _count(found[0])
            if count is not None and count != gpus:
                yield Finding(found[1], f"container `{container.name}` starts {count} processes per node "
                              f"(`--nproc-per-node {found[0]}`) on {_gpu_text(gpus)}: {_mismatch(count, gpus)}",
                              node=found[2], fix=f"--nproc-per-node={gpus}")
            continue
        var = container.env_value(ENV)
        count = _count(var.value) if var is not None and not var.from_ref else None
        if count is not None and count != gpus:
            yield Finding(var.value_span, f"container `{container.name}` sets `{ENV}={var.value}` on {_gpu_text(gpus)}: "
                          f"{_mismatch(count, gpus)}", node=var.path + ("value",), fix=f"{ENV}: \"{gpus}\"")
    obj = pod.obj
    if obj.kind != "PyTorchJob" or obj.group != KUBEFLOW or pod.workload is None:
        return
    spec = obj.body.get_map("spec")
    count = _count(spec.get("nprocPerNode")) if spec is not None else None
    if count is None:
        return
    wrong = [(other, launcher, gpus) for other in pod.workload.pods
             for launcher in [default_container(other)] if launcher is not None
             and _launcher_flag(launcher) is None and launcher.env_value(ENV) is None
             for gpus in [_gpus(launcher)] if gpus and gpus != count]
    if not wrong or wrong[0][0] is not pod:
        return  # one finding at the field, from the first replica type it does not fit
    shown = ", ".join(f"{other.role or 'its'} pods get {_gpu_text(gpus)}" for other, _, gpus in wrong)
    yield Finding(spec.value_span("nprocPerNode"),
                  f"`nprocPerNode: {spec.get('nprocPerNode')}` starts {count} processes in every pod, but {shown}: "
                  f"{_mismatch(count, wrong[0][2])}",
                  node=("spec", "nprocPerNode"), fix=f"nprocPerNode: \"{wrong[0][2]}\"")
