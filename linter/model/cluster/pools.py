"""The cluster's data: node pools, what is known of their labels and taints, and the cluster.

Every reader (:mod:`.from_az`, :mod:`.from_config`, :mod:`.from_nodepools`, :mod:`.from_terraform`,
:mod:`.from_bicep`) produces :class:`NodePool` records with the :class:`Origin` of each setting; a
rule never asks which source a pool came from except to point at it (``origin``, ``path``).


**Labels.** A pool's node labels are its ``--labels`` plus those AKS sets itself:
``kubernetes.azure.com/agentpool`` and the legacy ``agentpool`` (the pool name),
``kubernetes.azure.com/mode`` (``system``/``user``), ``node.kubernetes.io/instance-type``
(the VM size), ``kubernetes.io/os``, ``kubernetes.io/arch``,
``kubernetes.azure.com/accelerator=nvidia`` on NVIDIA GPU sizes and
``kubernetes.azure.com/scalesetpriority=spot`` on Spot pools. Any other key with a DNS prefix
(``nvidia.com/gpu.product``, ``topology.kubernetes.io/zone``, ``kubernetes.azure.com/os-sku``)
is *unknown* on every pool: AKS, GPU feature discovery, the GPU Operator or ``kubectl label``
may set it. A key without a prefix that the pool's ``--labels`` do not set is absent, except the
deprecated bare ``accelerator`` on NVIDIA GPU pools, which AKS may still set.

**Taints.** ``--node-taints`` (comma-separated, as the CLI splits them), plus
``kubernetes.azure.com/scalesetpriority=spot:NoSchedule`` that AKS adds to Spot pools.
Initialisation taints (``--node-init-taints``) are meant to be removed once a node is ready
and are not scheduling constraints here.

**Completeness.** With an ``az aks create`` in the project (or ``node-pools:`` in the config)
the pools are taken to be all the cluster has. Without one, the cluster was created elsewhere
and has pools the project does not describe (at least its system pool): an extra pool,
:data:`ELSEWHERE`, stands for them. Its labels are unknown, except the label keys the
project's own pools set with ``--labels`` (``accelerator``, ``workload``): a pod that selects
on such a key targets the pools described here. A cluster with node auto-provisioning
(``--node-provisioning-mode Auto``, ``--sku automatic``) can make nodes of any shape: the extra
pool then matches everything but the label keys the project's NodePools set and none of their
requirements lets vary (Karpenter only puts a label on a node a NodePool allows), and
``karpenter.sh/nodepool`` is none of the project's NodePools there. Node auto-provisioning is
said per cluster (:meth:`Cluster.auto_provisioned`: the clusters its records name, or every one
when a name or the mode is not determined): beside a NAP cluster, the label keys that only the
pools of the project's other (Standard) clusters set mark those clusters' nodes, and the extra
pool does not match them either. AKS010 spares only the NAP clusters' pools; NAP002 leaves alone a
pod that a Standard cluster's pool with its GPUs takes.

**NodePools** (``karpenter.sh/v1``, :mod:`linter.model.nap`) of the project are pools too
(``source == "nodepool"``), one per VM size they allow, in every profile (``aks-automatic`` too).

"""

from __future__ import annotations

import re
from functools import cached_property
from typing import TYPE_CHECKING, Any

from msgspec import Struct, field

from mlops_lint.model.memo import once
from mlops_lint.model.position import Span
from mlops_lint.model.selectors import Taint, parse_taint
from mlops_lint.model.unknown import UNKNOWN, Value
from mlops_lint.model.vmsizes import VmSize, lookup

if TYPE_CHECKING:  # the script model is read only when a script exists (see linter.model.unknown)
    from mlops_lint.model.azcli import AzCommand

SPOT_TAINT = Taint("kubernetes.azure.com/scalesetpriority", "spot", "NoSchedule")
DEFAULT_MAX_GRACEFUL_TERMINATION_SEC = 600
LINTED_SOURCES = frozenset({"script", "terraform", "bicep", "arm"})  # pools whose settings a rule can point at


# ---------------------------------------------------------------------------------------------
# Where a setting came from


class Origin(Struct, frozen=True):
    """The script flag (or config entry, or IaC attribute) that set something: ``span`` of the
    flag's name, ``value_span`` of its (first) value; for Terraform, Bicep and ARM the attribute's
    expression as written (``("lit", "System")``, ``("ref", ("var", "mode"))`` …), so a fix can
    tell a literal it may rewrite from a variable's value it must not (:mod:`linter.fix.iac`)."""

    path: str
    span: Span
    value_span: Span | None = None
    command: AzCommand | None = None
    written: Any = None  # an IaC attribute's expression as written (linter.sources.terraform's tuples)

    @property
    def target(self) -> Span:
        return self.value_span or self.span



# ---------------------------------------------------------------------------------------------
# Node pools


class PoolTaint(Struct, frozen=True):
    taint: Taint
    origin: Origin | None
    automatic: bool = False  # added by AKS (the Spot taint)


class NodePool(Struct, eq=False, dict=True):
    """One node pool, as the scripts (or the config) leave it."""

    name: Value  # UNKNOWN when the script does not determine it
    display: str  # the name, or the text the script names it with (``$POOL``)
    cluster: Value | None  # the cluster's name; None: not given
    source: str  # "script" | "terraform" | "bicep" | "arm" | "config" | "nodepool" | "elsewhere"
    path: str  # the script (or config file) that defines it
    origin: Origin | None = None  # the command that created it (None: only updated here)
    created: bool = True
    mode: Value = "User"
    mode_origin: Origin | None = None
    vm_size: Value | None = None  # as written; None: not given (the CLI's default, unknown here)
    vm_origin: Origin | None = None
    labels: dict[str, Value] = field(default_factory=dict)
    labels_open: bool = False  # other labels may exist (set by a command read only in part)
    labels_origin: Origin | None = None
    taints: list[PoolTaint] = field(default_factory=list)
    taints_open: bool = False
    taints_origin: Origin | None = None  # the last --node-taints that set them
    node_count: Value | int | None = None
    min_count: Value | int | None = None
    max_count: Value | int | None = None
    count_origin: dict[str, Origin] = field(default_factory=dict)
    autoscaler: bool | Value = False
    autoscaler_origin: Origin | None = None
    spot: bool | Value = False
    max_pods: int | Value | None = None
    os_type: Value = "Linux"
    gpu_instance_profile: Value | None = None
    gpu_driver: Value | None = None
    gpu_driver_origin: Origin | None = None  # where the driver setting is written (GPU014)
    managed_gpu: bool | Value = False  # `--enable-managed-gpu` (preview): AKS runs the GPU stack, driver included
    # a node auto-provisioning NodePool (``source == "nodepool"``, linter.model.nap): the object,
    # and the label keys its template sets (the rest of ``labels`` is Karpenter's)
    nodepool: Any = None
    template_label_keys: frozenset = frozenset()
    requirements: tuple = ()  # the NodePool's requirements (linter.model.selectors.Requirement)
    gpu_only: bool = False  # a NodePool whose requirements allow only GPU sizes (listed or not)
    # updates read before any command created the pool (a later file adds it): replayed onto it
    pending: list[tuple[str, AzCommand]] = field(default_factory=list)
    # what pools are keyed by with the name (see _cluster_key): the cluster's name, the text of
    # an undetermined one (``"$CLUSTER"``), or None when the command names none
    cluster_key: Any = None
    # a config pool placed in the linted config (linter.model.cluster.from_config): its
    # node-pools mapping (linter.model.tree.YMap), the node a fix's SetKey edits
    entry: Any = None

    # -- derived ---------------------------------------------------------------------------

    @property
    def in_linted_file(self) -> bool:
        """Defined in a file the run lints (a script, a ``.tf``, the config file when the run lints
        it: its entry is placed, :mod:`.from_config`), where its findings can point."""
        return self.source in LINTED_SOURCES or (self.source == "config" and self.origin is not None)

    @property
    def vm(self) -> VmSize | None:
        return lookup(self.vm_size) if isinstance(self.vm_size, str) else None

    @property
    def only_gpu_nodes(self) -> bool:
        """Every node of the pool is a GPU node: a GPU VM size, or a NodePool allowing only GPU sizes."""
        vm = self.vm
        return vm is not None and vm.is_gpu or self.gpu_only

    @property
    def is_system(self) -> bool | None:
        return None if self.mode is UNKNOWN else str(self.mode).lower() == "system"

    @property
    def effective_taints(self) -> list[PoolTaint]:
        taints = list(self.taints)
        if self.spot is True and not any(t.taint == SPOT_TAINT for t in taints):
            taints.append(PoolTaint(SPOT_TAINT, None, automatic=True))
        return taints

    @property
    def taints_known(self) -> bool:
        return not self.taints_open and self.spot is not UNKNOWN

    def max_nodes(self) -> int | None:
        """The most nodes the pool can have: max-count when autoscaled, else its node count."""
        if self.autoscaler is True:
            return self.max_count if isinstance(self.max_count, int) else None
        if self.autoscaler is False:
            return self.node_count if isinstance(self.node_count, int) else None
        return None

    def label_view(self) -> "LabelView":
        """What is known of the pool's node labels (computed once: pools are final once built)."""
        view = self.__dict__.get("_view")
        if view is None:
            view = self.__dict__["_view"] = _pool_label_view(self)
        return view

    def describe_vm(self) -> str:
        if isinstance(self.vm_size, str):
            return self.vm.name if self.vm is not None else self.vm_size
        return "unknown VM size"


# The pools the project does not describe (a cluster made elsewhere, or node auto-provisioning).
ELSEWHERE = "(pools not in the project)"


class LabelView(Struct, frozen=True):
    """What is known of one pool's node labels: ``state(key)`` is ("known", value),
    ("absent", None) or ("unknown", None)."""

    known: dict[str, str]
    absent: frozenset[str] = frozenset()  # modelled keys known to be absent
    unknown: frozenset[str] = frozenset()
    open: bool = False  # every key not known is unknown
    closed_keys: frozenset[str] = frozenset()  # for ELSEWHERE: keys known to be absent
    # for ELSEWHERE: values an unknown key is known not to have (``karpenter.sh/nodepool`` is
    # none of the project's NodePools there)
    excluded: tuple[tuple[str, frozenset[str]], ...] = ()

    def state(self, key: str) -> tuple[str, str | None]:
        if key in self.known:
            return "known", self.known[key]
        if key in self.closed_keys or key in self.absent:
            return "absent", None
        if key in self.unknown or self.open or "/" in key:
            return "unknown", None
        return "absent", None


def _nodepool_label_view(pool: NodePool) -> LabelView:
    """A NodePool's nodes: its labels (template and Karpenter's, linter.model.nap) are known; the
    AKS accelerator label is unknown on a GPU size, absent on a CPU size; other keys with a
    prefix are unknown, others absent."""
    known = {k: v for k, v in pool.labels.items() if v is not UNKNOWN}
    absent: set[str] = set()
    unknown = {k for k, v in pool.labels.items() if v is UNKNOWN}
    vm = pool.vm
    if vm is not None and not vm.is_gpu:
        absent.add("kubernetes.azure.com/accelerator")
    return LabelView(known, frozenset(absent), frozenset(unknown), False)


def _pool_label_view(pool: NodePool) -> LabelView:
    if pool.source == "nodepool":
        return _nodepool_label_view(pool)
    known: dict[str, str] = {}
    unknown: set[str] = set()
    absent: set[str] = set()
    for key, value in pool.labels.items():
        if value is UNKNOWN:
            unknown.add(key)
        else:
            known[key] = value  # type: ignore[assignment]
    aks: dict[str, Value] = {}
    aks["kubernetes.azure.com/agentpool"] = pool.name
    aks["agentpool"] = pool.name
    aks["kubernetes.azure.com/mode"] = UNKNOWN if pool.mode is UNKNOWN else str(pool.mode).lower()
    aks["kubernetes.io/os"] = UNKNOWN if pool.os_type is UNKNOWN else str(pool.os_type).lower()
    vm = pool.vm
    if vm is not None and pool.vm_size == vm.name:
        aks["node.kubernetes.io/instance-type"] = vm.name
    else:  # not given, unknown, or spelt differently from what Azure reports
        aks["node.kubernetes.io/instance-type"] = UNKNOWN
    nvidia = vm is not None and vm.gpu_resource == "nvidia.com/gpu"
    if vm is None or (nvidia and pool.gpu_driver is not None and str(pool.gpu_driver).lower() != "install"):
        aks["kubernetes.azure.com/accelerator"] = UNKNOWN
    elif nvidia:
        aks["kubernetes.azure.com/accelerator"] = "nvidia"
    elif vm.is_gpu:
        aks["kubernetes.azure.com/accelerator"] = UNKNOWN
    else:
        absent.add("kubernetes.azure.com/accelerator")
    if "accelerator" not in pool.labels and (vm is None or vm.is_gpu):
        unknown.add("accelerator")  # AKS's deprecated bare label on GPU nodes
    if vm is not None and vm.source == "naming":
        aks["kubernetes.io/arch"] = "arm64" if _arm(vm.name) else "amd64"
    else:
        aks["kubernetes.io/arch"] = UNKNOWN
    if "karpenter.sh/nodepool" not in pool.labels:
        absent.add("karpenter.sh/nodepool")  # Karpenter's own label: on NodePool nodes only
    if pool.spot is True:
        aks["kubernetes.azure.com/scalesetpriority"] = "spot"
    elif pool.spot is UNKNOWN:
        aks["kubernetes.azure.com/scalesetpriority"] = UNKNOWN
    else:
        absent.add("kubernetes.azure.com/scalesetpriority")
    for key, value in aks.items():
        if key in known or key in unknown:
            continue
        if value is UNKNOWN:
            unknown.add(key)
        else:
            known[key] = value  # type: ignore[assignment]
    return LabelView(known, frozenset(absent), frozenset(unknown), pool.labels_open)


_FEATURES = re.compile(r"standard_[a-z]+\d+(?:-\d+)?([a-z]*)")


def _arm(size: str) -> bool:
    match = _FEATURES.match(size.lower())
    return bool(match and "p" in match.group(1))


class ProfileSetting(Struct):
    value: Value
    origin: Origin


# The kinds of cluster a creating command or resource makes (ClusterMode.kind); MANUAL: an
# `az aks update --node-provisioning-mode Manual` turning NAP off (linter.model.cluster.modes)
AUTOMATIC, NAP, STANDARD, MANUAL = "automatic", "nap", "standard", "manual"


class ClusterMode(Struct, frozen=True):
    """What one command or resource of the project says of a cluster's kind: ``automatic`` (AKS
    Automatic: ``--sku automatic``, Terraform ``sku_tier``/``sku { name }``, Bicep/ARM ``sku.name``
    ``Automatic``), ``nap`` (node auto-provisioning: ``--node-provisioning-mode Auto``,
    ``node_provisioning_profile { mode = "Auto" }``, ``nodeProvisioningProfile.mode: 'Auto'``) or
    ``standard`` (a cluster made with neither); ``how`` is what the source wrote, for messages,
    and ``origin`` where (the value, else the command or resource). A value the source does not
    determine gives no record: unknown is never guessed."""

    kind: str
    how: str
    origin: Origin
    cluster: Value | None = None


# ---------------------------------------------------------------------------------------------
# The cluster


class Cluster(Struct, eq=False, dict=True):
    pools: list[NodePool] = field(default_factory=list)
    # cluster name (None: not determined) -> key -> setting; "" resets a cluster's profile
    profiles: dict[Value | None, dict[str, ProfileSetting]] = field(default_factory=dict)
    # (cluster name (None: not determined), resource group as the source writes it (None: not
    # given), file) -> whether its Blob CSI driver is enabled (True, False or UNKNOWN) and where
    # that is said: `az aks create/update --enable-blob-driver` / `--disable-blob-driver`,
    # Terraform `storage_profile { blob_driver_enabled }`, Bicep/ARM
    # `storageProfile.blobCSIDriver.enabled`; a cluster made without it has it off (AKS's and
    # azurerm's default), at the command or resource that made it. In reading order, the latest
    # record of a key last (:meth:`set_blob_driver`): two repositories that each make a cluster
    # of the same name keep a record each, and STO010 decides which records are one cluster
    # (same name and resource group, in files that go together: linter.model.locality).
    blob_driver: dict[tuple, ProfileSetting] = field(default_factory=dict)
    # what each cluster-making or -changing command or resource says of the cluster-wide features
    # rules join with manifests (workload identity, the OIDC issuer, the network policy engine,
    # the AI toolchain operator), in reading order (linter.model.cluster.features)
    features: list = field(default_factory=list)
    complete: bool = False  # an az aks create (or config node-pools) describes every pool
    # what each cluster-making command or resource says of the cluster's kind (AKS Automatic, node
    # auto-provisioning, Standard), in reading order: profile inference and LNT005 (linter.model.clusterkind)
    modes: list[ClusterMode] = field(default_factory=list)
    auto_provisioning: bool = False  # NAP / AKS Automatic: nodes of any shape may appear
    scripted: bool = False  # any az aks command describes pools
    project: Any = None  # (index, config) it was built for: what Kueue admission injects is read there
    _by_signature: dict[tuple, Any] = field(default_factory=dict)
    _graceful: dict[int, list] = field(default_factory=dict)  # id(pool) -> max_graceful_termination
    _memo: dict[Any, Any] = field(default_factory=dict)

    def set_blob_driver(self, name: Value | None, group: Any, setting: ProfileSetting) -> None:
        """Record what ``setting.origin``'s file says of the Blob driver of cluster ``name`` in
        resource group ``group``, after every earlier record (a later command of the same file
        about the same cluster replaces its record)."""
        key = (name, group, setting.origin.path)
        self.blob_driver.pop(key, None)
        self.blob_driver[key] = setting

    def memo(self, key: Any, build: Any) -> Any:
        """``build()``, computed once per cluster, for what depends only on the pools and on
        ``key`` (which names the rule and every input the result depends on)."""
        return once(self, key, build)

    @property
    def has_pools(self) -> bool:
        return bool(self.pools)

    @property
    def managed_label_keys(self) -> frozenset[str]:
        """Label keys the project's own pools set with ``--labels`` (or config labels, or a
        NodePool's template labels)."""
        return frozenset(key for pool in self.pools
                         for key in (pool.template_label_keys if pool.source == "nodepool" else pool.labels))

    def provisioned_clusters(self) -> list[Value | None] | None:
        """The names of the clusters the project makes AKS Automatic or node auto-provisioned (NAP)
        (a name not determined: None or UNKNOWN); None when any cluster may be (the mode is said with
        a value not known here, so which cluster is not known either)."""
        if not self.auto_provisioning:
            return []
        return [m.cluster for m in self.modes if m.kind in (AUTOMATIC, NAP)] or None

    def auto_provisioned(self, cluster: Value | None) -> bool:
        """Whether NAP (or AKS Automatic) makes nodes for the cluster ``cluster`` (a pool's
        ``cluster``): a cluster of that name is made so, or either name is not determined."""
        names = self.provisioned_clusters()
        if names is None:
            return True
        return any(not isinstance(name, str) or not isinstance(cluster, str) or name == cluster for name in names)

    @cached_property
    def elsewhere(self) -> NodePool | None:
        """The stand-in for pools the project does not describe (None when it describes all)."""
        if self.complete and not self.auto_provisioning:
            return None
        pool = NodePool(name=UNKNOWN, display=ELSEWHERE, cluster=None, source="elsewhere", path="",
                        mode=UNKNOWN, vm_size=UNKNOWN, labels_open=True, taints_open=True,
                        autoscaler=UNKNOWN, spot=UNKNOWN, os_type=UNKNOWN)
        closed = frozenset() if self.auto_provisioning else self.managed_label_keys
        if self.auto_provisioning:
            # NAP (Karpenter) puts a label on a node only when a NodePool sets it or lets its
            # requirements choose it: the keys the project's NodePools set and none lets vary
            # are the project's (AKS's default NodePools set no custom labels)
            free = frozenset(req.key for p in self.pools if p.nodepool is not None for req in p.requirements)
            closed = frozenset(k for p in self.pools if p.nodepool is not None for k in p.template_label_keys) - free
            # with a Standard cluster beside the NAP one, a label only the Standard cluster's pools set
            # marks that cluster's nodes, which it describes: NAP makes no node that carries it
            nap = frozenset(k for p in self.pools if p.nodepool is None and self.auto_provisioned(p.cluster)
                            for k in p.labels)
            standard = frozenset(k for p in self.pools if p.nodepool is None and not self.auto_provisioned(p.cluster)
                                 for k in p.labels)
            closed |= standard - nap - free
        names = frozenset(str(p.name) for p in self.pools if p.source == "nodepool")
        excluded = (("karpenter.sh/nodepool", names),) if names else ()
        # AKS labels a node with its pool's name: a pool the project does not describe has
        # another name than those it does (in one cluster: with pools of several, it may be
        # another cluster's pool of the same name)
        described = [p for p in self.pools if p.in_linted_file and p.created and isinstance(p.name, str)]
        if described and len({p.cluster_key for p in described}) == 1:
            pools = frozenset(str(p.name) for p in described)
            excluded += (("kubernetes.azure.com/agentpool", pools), ("agentpool", pools))
        pool.__dict__["_view"] = LabelView({}, open=True, closed_keys=closed, excluded=excluded)
        return pool

    def pools_defined_in(self, path: str) -> list[NodePool]:
        return [p for p in self.pools if p.in_linted_file and p.path == path]

    def max_graceful_termination(self, pool: NodePool) -> list[tuple[Value, Origin | None]]:
        """The possible ``max-graceful-termination-sec`` values for ``pool``'s cluster (UNKNOWN:
        set to a value the script does not determine), with where each was set; the AKS default
        (600) when no profile of that cluster sets it. Memoised per pool (the cluster's pools live
        as long as it does): every training pod asks it of every pool it may land on."""
        found = self._graceful.get(id(pool))
        if found is None:
            found = self._graceful[id(pool)] = self._max_graceful_termination(pool)
        return found

    def graceful_termination_caps(self, placement: Any) -> list:
        """(pool, (seconds, origin)) of each autoscaled pool ``placement`` may land on whose
        largest possible ``max-graceful-termination-sec`` is known: how long a scale-down waits
        for a pod there (AKS007 reports a grace period over it; STO005's fix never raises one past it)."""
        caps = []
        for verdict in placement.candidates:
            cap = _largest_grace(self.max_graceful_termination(verdict.pool)) if verdict.pool.autoscaler is True else None
            if cap is not None:
                caps.append((verdict.pool, cap))
        return caps

    def _max_graceful_termination(self, pool: NodePool) -> list[tuple[Value, Origin | None]]:
        names = [name for name in self.profiles
                 if pool.cluster is UNKNOWN or name is UNKNOWN or name is None or name == pool.cluster
                 or pool.cluster is None]
        found: list[tuple[Value, Origin | None]] = []
        for name in names:
            setting = self.profiles[name].get("max-graceful-termination-sec")
            if setting is not None:
                found.append((setting.value, setting.origin))
        if not found:
            found.append((str(DEFAULT_MAX_GRACEFUL_TERMINATION_SEC), None))
        return found

    def placement(self, pod: Any) -> Any:
        """Which pools a pod template can land on (memoised per pod view, and shared by every
        pod with the same constraints: a project's pods mostly repeat a few placements, so the
        pools are matched once per distinct placement, not once per pod)."""
        # kept in the pod view's own memo, so it goes with the view (a cluster is hashed by identity)
        return once(pod, ("cluster-placement", self), lambda: self._placement(pod))

    def _placement(self, pod: Any) -> Any:
        if not self.has_pools or pod.spec.get("nodeName"):
            return None
        return PLACER[0](self, pod)


def set_taints(pool: NodePool, taints: Any, origin: Any) -> None:
    """A pool's taints as an IaC source writes them (a list of `key=value:Effect` strings): each one
    that parses is a taint; an item that is not a string, or a value that is not a list, leaves
    the pool's taints open (unknown); a string that does not parse is skipped, as AKS refuses it."""
    if isinstance(taints, list):
        for item in taints:
            taint = parse_taint(item) if isinstance(item, str) else None
            if taint is None:
                pool.taints_open = pool.taints_open or not isinstance(item, str)
            else:
                pool.taints.append(PoolTaint(taint, origin))
    else:
        pool.taints_open = True
    pool.taints_origin = origin


# How a cluster places a pod: linter.model.cluster.placement registers it when imported (the
# package imports it before any cluster exists), so this module, which placement builds on,
# does not import it back (no import circle: tests/test_layout.py).
PLACER: list = []


def register_placer(function: Any) -> None:
    PLACER[:] = [function]


def _largest_grace(values: list) -> tuple[int, Any] | None:
    """The largest possible max-graceful-termination-sec, with where it is set (None: unknown)."""
    best = None
    for value, origin in values:
        if value is UNKNOWN or not str(value).strip().isdigit():
            return None
        if best is None or int(value) > best[0]:
            best = (int(value), origin)
    return best
