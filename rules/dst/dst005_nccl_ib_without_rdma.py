"""`NCCL_IB_DISABLE=0` on a pod that has no RDMA device or no InfiniBand VM.

## What it does
Flags each GPU container whose NCCL environment sets `NCCL_IB_DISABLE=0` (InfiniBand wanted:
in its own `env`, or for an MPIJob worker through the launcher's `mpirun -x`) when

- the pod asks for no RDMA device: no container requests an RDMA extended resource (a name
  starting with `rdma/`, `nvidia.com/rdma`, `nvidia.com/hostdev`, `nvidia.com/mlnxnics`,
  `mellanox.com/`, AWS EFA's `vpc.amazonaws.com/efa`, or containing `sriov`), the pod attaches no secondary network
  (`k8s.v1.cni.cncf.io/networks`), mounts no `/dev/infiniband` host path and no container is
  privileged; or
- the node pools the pod can land on are all known and none has an RDMA-capable VM size
  (InfiniBand in the catalogue: `Standard_ND96asr_v4`, `Standard_ND96isr_H100_v5`,
  `Standard_NC24rs_v3` …; not `Standard_NC24ads_A100_v4` or any NCas T4 size).

The first half needs no cluster; the second needs node pools from an `az` script or the config.
The finding points at the `NCCL_IB_DISABLE` value and says which half (or both) fails.

{{dra-gpus}}

Only where NCCL is the backend: a container that chooses another one (`--backend gloo`,
`--dist-backend=mpi`, `backend="gloo"` or `init_process_group("gloo")` in a `python -c` or
`sh -c` command line, or an env var whose name ends in `BACKEND` holding `gloo`), and does not
name `nccl` as well, is not asked for NCCL settings (`linter.model.distributed.uses_nccl`; for an
MPIJob worker, the launcher's command line counts too). A container that names no backend is
taken to use NCCL, PyTorch's default on GPUs.

## Why is this bad?
With InfiniBand forced on and no verbs device in the container, NCCL fails to initialise its IB
transport (or falls back silently after timeouts), so the job crashes or runs at TCP speed while
reporting an RDMA configuration. The article: "For a portable TCP baseline on AKS CNI … start
with NCCL_IB_DISABLE=1. On supported RDMA-capable VM sizes, use the documented NVIDIA and Azure
RDMA configuration and validate it before setting NCCL_IB_DISABLE=0."

## Example
```yaml
            env:
            - name: NCCL_IB_DISABLE
              value: "0"
            resources:
              limits:
                nvidia.com/gpu: 8
```

Use instead:
```yaml
            env:
            - name: NCCL_IB_DISABLE
              value: "0"
            resources:
              limits:
                nvidia.com/gpu: 8
                rdma/rdma_shared_device_a: 1
```

## Options
- `rdma-resource-prefixes` (list of strings): extended resources that give a container RDMA
  devices, matched as name prefixes (default: `rdma/`, `nvidia.com/rdma`, `nvidia.com/hostdev`,
  `nvidia.com/mlnxnics`, `mellanox.com/`, `vpc.amazonaws.com/efa`); names containing `sriov`
  always count.

## Known problems
- Only the literal `0` is judged; a value from `valueFrom`, `envFrom` or a launch script is not.
- The VM half reads only pools the project describes; pools whose VM size is unknown, and pools
  a cluster made elsewhere has, may have InfiniBand: no finding from that half then.
- Init containers and pods that request no GPU are not checked (NCCL runs in GPU containers).

## References
- NVIDIA NCCL, environment variables: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html
- Azure, InfiniBand on HPC and GPU VMs: https://learn.microsoft.com/azure/virtual-machines/setup-infiniband
- NVIDIA Network Operator, RDMA shared device plugin: https://docs.nvidia.com/networking/display/cokan10/network+operator
"""

from mlops_lint.model.cluster import cluster_of, workload_name
from mlops_lint.model.distributed import RDMA_RESOURCE_PREFIXES, rank_env, uses_nccl
from mlops_lint.model.k8s import Container, PodSpec
from mlops_lint.rule import CONTAINER, Finding, rule

PREFIXES = list(dict.fromkeys([*RDMA_RESOURCE_PREFIXES, "nvidia.com/rdma"]))


def _has_rdma_device(pod: PodSpec, prefixes: tuple[str, ...]) -> bool:
    for container in pod.containers:
        if any(name.startswith(prefixes) or "sriov" in name for name in (*container.requests, *container.limits)):
            return True
        context = container.security_context
        if context is not None and context.get("privileged") is True:
            return True
    annotations = pod.metadata.get("annotations") if pod.metadata is not None else None
    if isinstance(annotations, dict) and annotations.get("k8s.v1.cni.cncf.io/networks"):
        return True
    for _, volume in pod.volumes:
        host = volume.get_map("hostPath")
        if host is not None and str(host.get("path", "")).rstrip("/").startswith("/dev/infiniband"):
            return True
    return False


@rule(code="DST005", name="nccl-ib-without-rdma", severity="error", scope=CONTAINER,
      tags=("distributed", "nccl", "rdma"), options={"rdma-resource-prefixes": list[str]}, defaults={"rdma-resource-prefixes": PREFIXES})
def check(container: Container, ctx):
    pod = container.pod
    if container.field != "containers" or not pod.uses_gpu or not uses_nccl(container):
        return
    setting = rank_env(container, "NCCL_IB_DISABLE")
    if not setting.is_literal or setting.value.strip() not in ("0", "00") or setting.span is None:
        return
    problems = []
    if not _has_rdma_device(pod, tuple(ctx.options["rdma-resource-prefixes"])):
        problems.append("the pod requests no RDMA device (e.g. `rdma/rdma_shared_device_a`)")
    placement = cluster_of(ctx.index, ctx.config).placement(pod)
    pools = placement.known_candidates if placement is not None else None
    if pools and all(v.pool.vm is not None for v in pools) and not any(v.pool.vm.rdma for v in pools):
        shown = ", ".join(f"`{v.pool.display}` ({v.pool.vm.name})" for v in pools)
        problems.append(f"no node pool it can land on has an InfiniBand VM size: {shown}")
    if not problems:
        return
    yield Finding(
        setting.span,
        f"container `{container.name}` of the {workload_name(pod)} sets NCCL_IB_DISABLE=0 (InfiniBand), but "
        f"{' and '.join(problems)}; set NCCL_IB_DISABLE=1 for TCP, or run on an RDMA VM size with its RDMA device",
        node=container.path + ("env",),
    )
