"""NCCL runs over TCP sockets in a distributed GPU job without `NCCL_SOCKET_IFNAME`.

## What it does
Flags each GPU container of a distributed job (a Kubeflow PyTorchJob, TFJob, MPIJob,
XGBoostJob, PaddleJob or JAXJob, a Volcano Job whose pods can find each other, or a JobSet,
running two or more pods in total)
that sends NCCL traffic over TCP sockets and does not choose the interface: `NCCL_SOCKET_IFNAME`
is unset or empty. NCCL uses sockets when `NCCL_IB_DISABLE` is a non-zero integer (`1`), or when
it is unset and the pod asks for no RDMA device (`rdma/…`, `nvidia.com/hostdev`, AWS EFA's
`vpc.amazonaws.com/efa`, …), so that no InfiniBand or EFA transport exists. For an MPIJob worker, `mpirun -x NAME[=VALUE]` on the launcher's
command line counts as setting the variable. The finding points at the empty value, else the
container's `env:` key, else its `name:`.

{{dra-gpus}}

Only where NCCL is the backend: a container that chooses another one (`--backend gloo`,
`--dist-backend=mpi`, `backend="gloo"` or `init_process_group("gloo")` in a `python -c` or
`sh -c` command line, or an env var whose name ends in `BACKEND` holding `gloo`), and does not
name `nccl` as well, is not asked for NCCL settings (`linter.model.distributed.uses_nccl`; for an
MPIJob worker, the launcher's command line counts too). A container that names no backend is
taken to use NCCL, PyTorch's default on GPUs.

## Why is this bad?
Without `NCCL_SOCKET_IFNAME`, NCCL picks an interface itself: on a node with several (a second
CNI through Multus, a VPN, `docker0`-like bridges) it can bind the bootstrap or data sockets to
one the other ranks cannot reach, and the job hangs at initialisation or runs slowly. The
article's baseline for "a portable TCP baseline on AKS CNI": "use the pod network interface,
normally eth0", i.e. "NCCL_SOCKET_IFNAME=eth0 selects the pod network interface".

## Example
```yaml
            env:
            - name: NCCL_IB_DISABLE
              value: "1"
```

Use instead:
```yaml
            env:
            - name: NCCL_IB_DISABLE
              value: "1"
            - name: NCCL_SOCKET_IFNAME
              value: eth0
```

## Fix safety
Unsafe. The fix sets `NCCL_SOCKET_IFNAME` to `eth0`, the article's value and the pod's interface
under AKS's CNIs (kubenet, Azure CNI, Azure CNI Overlay): an empty entry gets the value, else
`{name: NCCL_SOCKET_IFNAME, value: eth0}` is appended to the container's `env`. A pod with
other interfaces (Multus, host networking, a secondary NIC for NCCL) needs another name, and a
wrong one makes NCCL fail to find its interface at start-up: review it, then apply with
`--unsafe-fixes`. No fix for ranks that mpirun starts over ssh (an MPIJob, a Volcano Job with the
`ssh` or `mpi` plugin: sshd does not pass the container's `env` on; `-x NCCL_SOCKET_IFNAME=eth0`
on the launcher's `mpirun` is the place), for a TrainJob's trainer container (its `env` merges
the TrainJob's and the runtime's), or when `env` is not a list.

## Known problems
Single-pod jobs are not checked: NCCL then uses NVLink, PCIe or shared memory inside the node.
Plain Jobs with `parallelism` and Ray clusters are not checked either, nor a Volcano Job of
one task type without a plugin that connects its pods (`svc`, `ssh`, `pytorch`, `mpi`,
`tensorflow`, `ray`): that is a gang of independent pods. `NCCL_IB_DISABLE=0` means
the job intends InfiniBand (DST005 checks that the pod can have it) and is left alone. A
variable from `valueFrom`, `envFrom`, a `$(…)` reference, or a launch script in
`command`/`args` that mentions it is unknown and not judged. Init containers are not checked.

## References
- NVIDIA NCCL, environment variables: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html
- Azure, Set up InfiniBand on HPC VMs: https://learn.microsoft.com/azure/virtual-machines/setup-infiniband
"""

from mlops_lint.fix import AppendItem
from mlops_lint.fix.plans import env_entry, plan, set_path
from mlops_lint.model.distributed import is_distributed, rank_env, uses_nccl, uses_rdma
from mlops_lint.model.k8s import Container, container_uses_gpu
from mlops_lint.rule import CONTAINER, Finding, rule

FIX = "- name: NCCL_SOCKET_IFNAME\n  value: eth0"


def as_int(value: str | None) -> int | None:
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def _over_ssh(container: Container) -> bool:
    """Ranks started over ssh by mpirun (an MPIJob, a Volcano Job with the ``ssh`` or ``mpi``
    plugin): sshd does not hand the container's env to them, ``mpirun -x`` on the launcher does."""
    obj = container.obj
    if obj.kind == "MPIJob":
        return True
    spec = obj.body.get_map("spec") if obj.group == "batch.volcano.sh" else None
    plugins = spec.get("plugins") if spec is not None else None
    return isinstance(plugins, dict) and bool({"ssh", "mpi"} & set(map(str, plugins)))


def _autofix(container: Container, ifname):
    """``NCCL_SOCKET_IFNAME=eth0`` (the article's value): the empty entry's value set, else an entry
    appended to the container's own ``env``."""
    title = "set `NCCL_SOCKET_IFNAME: eth0` (the pod interface on AKS)"
    if ifname.is_literal:
        return plan(title, set_path(env_entry(container, ifname.var), ("value",), "eth0"), safe=False)
    env = container.body.get("env")
    if env is not None and not isinstance(env, list) or container.pod.merged or _over_ssh(container):
        return None  # not a list; a TrainJob's trainer, whose env merges two objects; or MPI ranks
    return plan(title, AppendItem(container.body, "env", {"name": "NCCL_SOCKET_IFNAME", "value": "eth0"}), safe=False)


@rule(code="DST004", name="nccl-socket-ifname-missing", severity="info", scope=CONTAINER,
      tags=("distributed", "nccl", "networking"))
def check(container: Container, ctx):
    pod = container.pod
    if container.field != "containers" or pod.workload is None or not is_distributed(pod.workload):
        return
    if not container_uses_gpu(container) or not uses_nccl(container):
        return
    ib = rank_env(container, "NCCL_IB_DISABLE")
    if ib.is_unknown or (ib.is_unset and uses_rdma(pod)):
        return
    if ib.is_literal:
        if not as_int(ib.value):  # 0 (InfiniBand intended) or not a number (NCCL falls back to 0)
            return
        why = f"NCCL_IB_DISABLE={ib.value}"
    else:
        why = "NCCL_IB_DISABLE is unset and the pod has no RDMA device"
    ifname = rank_env(container, "NCCL_SOCKET_IFNAME")
    if ifname.is_unknown or (ifname.is_literal and ifname.value.strip()):
        return
    span = ifname.span if ifname.is_literal and ifname.span else container.body.kspans.get("env", container.span)
    yield Finding(
        span,
        f"container `{container.name}` of the {pod.describe()} runs NCCL over TCP sockets ({why}) without "
        "NCCL_SOCKET_IFNAME: NCCL may bind to an interface other ranks cannot reach; set it to the pod "
        "interface (eth0 on AKS CNI)",
        node=container.path + ("env",), fix=FIX,
        autofix=_autofix(container, ifname),
    )
