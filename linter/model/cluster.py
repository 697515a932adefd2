"""The cluster the project describes: its node pools and the cluster autoscaler profile.

Built once per run (:func:`cluster_of`, memoised on the :class:`~linter.index.ProjectIndex`)
from two sources:

* the ``az aks`` commands of the project's shell scripts, merged in file order (files sorted by
  path, commands in the order they appear): ``az aks create`` makes the cluster and its first,
  System-mode pool (``nodepool1`` unless ``--nodepool-name``); ``az aks nodepool add`` adds a
  pool; ``nodepool update`` / ``scale`` / ``delete`` and ``az aks update`` change what came
  before. An update of a pool the project never adds creates a pool known only by what the
  update sets (its VM size, labels and taints stay unknown);
* ``node-pools:`` of the config (SPEC section 3), for pools the scripts do not define. In the
  ``aks-automatic`` profile only these count (SPEC section 5).

Unknown is never guessed. A value the script does not determine (``$(...)``, a ``for``
variable, ``<placeholder>``) is UNKNOWN; a command with words of unknown value
(``$EXTRA_ARGS``) may hold more options, so what it leaves unset is unknown too. Rules only
report what holds for every reading.

**Pools are keyed by cluster and name**, and the model does not depend on file order. A
cluster the script does not determine is keyed by the text it is written with (``"$CLUSTER"``
in the ``add`` and in the ``update`` is one cluster; ``"$OTHER"`` may be another); a command
that names no cluster matches any. A second ``add`` of an existing (cluster, name) is the same
pool (an idempotent re-run), not another one: counters see it once. An ``update`` or ``scale``
whose pool name is unknown (a variable never set) changes nothing known about named pools, in
files sorted before it and after it alike; one whose cluster key matches no pool's updates none
of them (it may be a cluster the project does not describe).

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
``karpenter.sh/nodepool`` is none of the project's NodePools there.

**NodePools** (``karpenter.sh/v1``, :mod:`linter.model.nap`) of the project are pools too
(``source == "nodepool"``), one per VM size they allow, in every profile (``aks-automatic`` too).

**What a pool offers.** A pod asking for a GPU, a MIG profile or GPUs through a resource claim
can land only on pools whose nodes have it (:func:`offers`; a pool made with
``--gpu-instance-profile`` offers exactly that MIG profile): :attr:`PodPlacement.serving` filters
the pools before selectors and taints are judged. **Admission**: a queued pod is placed with what
each Kueue flavor it may get injects (:mod:`linter.model.admission`).
"""

from __future__ import annotations

import json
import re
import weakref
from fractions import Fraction
from functools import cached_property, lru_cache
from importlib import resources
from itertools import chain, product
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from msgspec import Struct, field

from linter.model.bounds import MAX_NUMBER_DIGITS
from linter.model.position import Span
from linter.model.selectors import Placement, Taint, parse_taint, tolerated_by
from linter.model.memo import once
from linter.model.tree import frozen
from linter.model.unknown import UNKNOWN, Value, resolved
from linter.model.podrequests import PodRequest, pod_requests  # noqa: F401 - re-exported for the rules
from linter.model.vmsizes import VmSize, lookup

if TYPE_CHECKING:  # the script model is read only when a script exists (see linter.model.unknown)
    from linter.model.azcli import AzCommand, AzFlag, FlagValue, ShellScript

SPOT_TAINT = Taint("kubernetes.azure.com/scalesetpriority", "spot", "NoSchedule")
DEFAULT_MAX_GRACEFUL_TERMINATION_SEC = 600
FIRST_POOL = "nodepool1"


# ---------------------------------------------------------------------------------------------
# Where a setting came from


class Origin(Struct, frozen=True):
    """The script flag (or config entry) that set something: ``span`` of the flag's name,
    ``value_span`` of its (first) value."""

    path: str
    span: Span
    value_span: Span | None = None
    command: AzCommand | None = None

    @property
    def target(self) -> Span:
        return self.value_span or self.span


def _origin(path: str, flag: AzFlag | None, command: AzCommand | None = None) -> Origin | None:
    if flag is None:
        return None
    value = flag.value
    return Origin(path, flag.span, value.span if value is not None else None, command)


def _command_origin(path: str, command: AzCommand) -> Origin:
    words = command.command.words
    head = words[:4] if command.group == "aks nodepool" else words[:3]
    span = Span(head[0].span.line, head[0].span.col, head[-1].span.end_line, head[-1].span.end_col)
    return Origin(path, span, None, command)


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
    source: str  # "script" | "config" | "elsewhere"
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
    # a node auto-provisioning NodePool (``source == "nodepool"``, linter.model.nap): the object,
    # and the label keys its template sets (the rest of ``labels`` is Karpenter's)
    nodepool: Any = None
    template_label_keys: frozenset = frozenset()
    requirements: tuple = ()  # the NodePool's requirements (linter.model.selectors.Requirement)
    # updates read before any command created the pool (a later file adds it): replayed onto it
    pending: list[tuple[str, AzCommand]] = field(default_factory=list)
    # what pools are keyed by with the name (see _cluster_key): the cluster's name, the text of
    # an undetermined one (``"$CLUSTER"``), or None when the command names none
    cluster_key: Any = None

    # -- derived ---------------------------------------------------------------------------

    @property
    def vm(self) -> VmSize | None:
        return lookup(self.vm_size) if isinstance(self.vm_size, str) else None

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


# ---------------------------------------------------------------------------------------------
# Autoscaler profile


@lru_cache(maxsize=1)
def autoscaler_profile_keys() -> dict[str, dict[str, Any]]:
    """``--cluster-autoscaler-profile`` keys: {key: {type, default, ...}} (aks-platform.md section B)."""
    text = resources.files("linter").joinpath("data/autoscaler_profile.json").read_text(encoding="utf-8")
    return json.loads(text)["keys"]


_DURATION = re.compile(r"(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+")


def parse_duration(text: str) -> Fraction | None:
    """A Go duration (``10s``, ``10m``, ``1h30m``, ``0``) in seconds; None when unparsable.

    The cluster autoscaler reads these flags with Go's ``time.ParseDuration``: a unit is required
    on every number except a lone ``0``. Negative durations are rejected.
    """
    text = text.strip()
    if text == "0":
        return Fraction(0)
    if not _DURATION.fullmatch(text):
        return None
    units = {"ns": Fraction(1, 10**9), "us": Fraction(1, 10**6), "µs": Fraction(1, 10**6),
             "ms": Fraction(1, 1000), "s": 1, "m": 60, "h": 3600}
    total = Fraction(0)
    for number, unit in re.findall(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)", text):
        total += Fraction(number) * units[unit]
    return total


def profile_value_problem(key: str, value: str) -> str | None:
    """Why ``value`` is not valid for autoscaler-profile ``key`` (None when it is)."""
    spec = autoscaler_profile_keys().get(key)
    if spec is None:
        return None
    kind = spec["type"]
    text = value.strip()
    if kind == "duration":
        seconds = parse_duration(text)
        if seconds is None:
            hint = f" (a number needs a unit: `{text}s`)" if re.fullmatch(r"\d+", text) else ""
            return f"`{text}` is not a duration{hint}; use a Go duration such as `{spec['default']}`"
        return None
    if kind == "integer":
        if not re.fullmatch(r"\d+", text):
            unitless = re.fullmatch(r"(\d+)s", text)
            hint = f" (write `{unitless.group(1)}`, without a unit)" if unitless and key.endswith("-sec") else ""
            return f"`{text}` is not a whole number{hint}"
        number = int(text)
        if "min" in spec and number < spec["min"] or "max" in spec and number > spec["max"]:
            return f"`{text}` is outside {spec.get('min', 0)}..{spec.get('max', '')}".rstrip(".")
        return None
    if kind == "float":
        try:
            number = float(text)
        except ValueError:
            return f"`{text}` is not a number"
        if number != number or "min" in spec and number < spec["min"] or "max" in spec and number > spec["max"]:
            return f"`{text}` is outside {spec['min']}..{spec['max']}"
        return None
    if kind == "bool":
        return None if text.lower() in ("true", "false") else f"`{text}` is not `true` or `false`"
    if kind == "enum":
        return None if text.lower() in spec["values"] else f"`{text}` is not one of {', '.join(spec['values'])}"
    return None


class ProfileEntry(Struct, frozen=True):
    """One ``key=value`` of a ``--cluster-autoscaler-profile`` (value UNKNOWN when unresolved)."""

    key: str | None  # None: the text is not key=value (or its key is unknown to the reader)
    value: Value
    text: str  # the entry as written after expansion
    span: Span  # the entry (narrowed to it inside a comma-separated token when possible)
    flag_value: FlagValue


def profile_entries(flag: AzFlag) -> Iterator[ProfileEntry]:
    """The entries of one ``--cluster-autoscaler-profile`` option: each value token may itself be
    a comma-separated list (as the CLI splits it). ``""`` (reset to defaults) yields nothing."""
    for token in flag.values:
        value = token.value
        if value is UNKNOWN:
            yield ProfileEntry(None, UNKNOWN, token.raw, token.span, token)
            continue
        assert isinstance(value, str)
        offset = _literal_offset(token)
        position = 0
        for part in value.split(","):
            start = position
            position += len(part) + 1
            text = part.strip()
            if not text:
                continue
            lead = len(part) - len(part.lstrip())
            span = token.span
            if offset is not None:
                col = token.span.col + offset + start + lead
                span = Span(token.span.line, col, token.span.line, col + len(text))
            key, eq, rest = text.partition("=")
            value = resolved(rest.strip()) if eq else UNKNOWN  # key=<placeholder>: not determined
            yield ProfileEntry(key.strip() if eq else None, value, text, span, token)


def _literal_offset(token: FlagValue) -> int | None:
    """Columns from the token's start to its value's text, when the raw text is the value itself
    (optionally quoted) on one line; None otherwise (the whole token's span is used)."""
    raw, value = token.raw, token.value
    if token.span.line != token.span.end_line or not isinstance(value, str):
        return None
    if raw == value:
        return 0
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"" and raw[1:-1] == value:
        return 1
    return None


class ProfileSetting(Struct):
    value: Value
    origin: Origin


# ---------------------------------------------------------------------------------------------
# The cluster


class Cluster(Struct, eq=False, dict=True):
    pools: list[NodePool] = field(default_factory=list)
    # cluster name (None: not determined) -> key -> setting; "" resets a cluster's profile
    profiles: dict[Value | None, dict[str, ProfileSetting]] = field(default_factory=dict)
    complete: bool = False  # an az aks create (or config node-pools) describes every pool
    auto_provisioning: bool = False  # NAP / AKS Automatic: nodes of any shape may appear
    scripted: bool = False  # any az aks command describes pools
    project: Any = None  # (index, config) it was built for: what Kueue admission injects is read there
    _by_signature: dict[tuple, "PodPlacement | None"] = field(default_factory=dict)
    _graceful: dict[int, list] = field(default_factory=dict)  # id(pool) -> max_graceful_termination
    _memo: dict[Any, Any] = field(default_factory=dict)

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
        names = frozenset(str(p.name) for p in self.pools if p.source == "nodepool")
        excluded = (("karpenter.sh/nodepool", names),) if names else ()
        pool.__dict__["_view"] = LabelView({}, open=True, closed_keys=closed, excluded=excluded)
        return pool

    def pools_defined_in(self, path: str) -> list[NodePool]:
        return [p for p in self.pools if p.source == "script" and p.path == path]

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

    def placement(self, pod: Any) -> "PodPlacement | None":
        """Which pools a pod template can land on (memoised per pod view, and shared by every
        pod with the same constraints: a project's pods mostly repeat a few placements, so the
        pools are matched once per distinct placement, not once per pod)."""
        # kept in the pod view's own memo, so it goes with the view (a cluster is hashed by identity)
        return once(pod, ("cluster-placement", self), lambda: self._placement(pod))

    def _placement(self, pod: Any) -> "PodPlacement | None":
        if not self.has_pools or pod.spec.get("nodeName"):
            return None
        options = _admissions_of(self, pod)
        signature = _placement_signature(pod, options)
        if signature in self._by_signature:
            return self._by_signature[signature]
        result = self._by_signature[signature] = _place(self, options, _asked(pod))
        return result


# ---------------------------------------------------------------------------------------------
# Reading the scripts


def _int(value: Value) -> int | Value | None:
    if value is UNKNOWN:
        return UNKNOWN
    text = str(value).strip()
    if len(text.lstrip("+-")) > MAX_NUMBER_DIGITS:  # no count has that many digits: unknown
        return UNKNOWN
    try:
        return int(text)
    except ValueError:
        return UNKNOWN


def _flag_text(az: AzCommand, *names: str) -> tuple[Value | None, AzFlag | None]:
    flag = az.flag(*names)
    if flag is None:
        return None, None
    value = flag.value
    return (resolved(value.value) if value is not None else ""), flag


def _cluster_key(az: AzCommand, option: str) -> tuple[Value | None, Any]:
    """The cluster a command names, and the key pools are matched by: its name when the script
    determines it, else the text it is written with (``$CLUSTER`` is one cluster wherever it is
    written the same way, an unknown one; ``$OTHER`` may be another), None when not given."""
    value, flag = _flag_text(az, option)
    if value is UNKNOWN and flag is not None and flag.value is not None:
        return value, ("?", flag.value.raw)
    return value, value


def _switch(az: AzCommand, *names: str) -> bool | Value | None:
    """A switch: True when given (or given ``true``), False for ``false``, None when absent."""
    flag = az.flag(*names)
    if flag is None:
        return None
    if flag.value is None:
        return True
    value = resolved(flag.value.value)
    if value is UNKNOWN:
        return UNKNOWN
    return str(value).lower() != "false"


def parse_labels(values: Iterable[FlagValue]) -> tuple[dict[str, Value], bool]:
    """``--labels a=b c=d`` (space-separated; a quoted token holding several is split too).
    Returns (labels, open): ``open`` when a token's value is unknown, so any label may be set."""
    labels: dict[str, Value] = {}
    is_open = False
    for token in values:
        value = resolved(token.value)
        if value is UNKNOWN:
            # KEY=$VALUE: the key is known when the raw text spells it
            key, eq, _ = token.raw.strip("'\"").partition("=")
            if eq and re.fullmatch(r"[A-Za-z0-9][\w.\-/]*", key):
                labels[key] = UNKNOWN
            else:
                is_open = True
            continue
        for item in str(value).replace(",", " ").split():
            key, eq, rest = item.partition("=")
            if eq and key:
                labels[key] = rest
    return labels, is_open


def parse_taints(values: Iterable[FlagValue]) -> tuple[list[Taint], bool, list[tuple[str, FlagValue]]]:
    """``--node-taints k=v:NoSchedule,k2=v2:NoExecute`` (the CLI splits on commas; tokens
    separated by spaces are accepted too). Returns (taints, open, malformed)."""
    taints: list[Taint] = []
    is_open = False
    bad: list[tuple[str, FlagValue]] = []
    for token in values:
        value = resolved(token.value)
        if value is UNKNOWN:
            is_open = True
            continue
        for item in str(value).replace(",", " ").split():
            taint = parse_taint(item)
            if taint is None:
                bad.append((item, token))
            else:
                taints.append(taint)
    return taints, is_open, bad


def _display(name: Value | None, flag: AzFlag | None) -> str:
    """How messages name a pool: its name, else the text the script names it with (``"$POOL"``)."""
    if isinstance(name, str) and name:
        return name
    return flag.value.raw if flag is not None and flag.value is not None else "?"


class _Builder:
    def __init__(self) -> None:
        self.cluster = Cluster()
        self.created_clusters: set[Any] = set()  # keys (_cluster_key) of the clusters an az aks create makes
        # script pools by name (UNKNOWN: the name is unknown), then by cluster key (None: not
        # given, so every cluster's lookup meets them), each list in the order they were made: a
        # lookup costs the pools it returns, not every pool of that name or every pool (thousands
        # of `az aks create` lines for as many clusters were quadratic)
        self._pools: dict[Value, dict[Any, list[NodePool]]] = {}
        self._order: dict[int, int] = {}

    # pools ---------------------------------------------------------------------------------

    def _lists(self, pool: NodePool) -> list[NodePool]:
        return self._pools.setdefault(pool.name, {}).setdefault(pool.cluster_key, [])

    def _register(self, pool: NodePool) -> None:
        self.cluster.pools.append(pool)
        self._order[id(pool)] = len(self._order)
        self._lists(pool).append(pool)

    def _unregister(self, pool: NodePool) -> None:
        self.cluster.pools.remove(pool)
        self._lists(pool).remove(pool)

    def find(self, cluster: Any, name: Value) -> list[NodePool]:
        """The pools keyed by (cluster, name): ``cluster`` is a key of :func:`_cluster_key`; one
        not given (None) matches any cluster."""
        if name is UNKNOWN:
            return [p for p in self.cluster.pools if p.source == "script"
                    and (cluster is None or p.cluster_key is None or p.cluster_key == cluster)]
        lists = []
        for by_cluster in (self._pools.get(name), self._pools.get(UNKNOWN)):
            if by_cluster:
                if cluster is None:
                    lists.extend(by_cluster.values())
                else:
                    lists += [by_cluster.get(cluster, ()), by_cluster.get(None, ())]
        return sorted(chain.from_iterable(lists), key=lambda p: self._order[id(p)])

    def run(self, path: str, script: ShellScript) -> None:
        for az in script.az_commands:
            handler = {
                ("aks", "create"): self.create,
                ("aks nodepool", "add"): self.add,
                ("aks nodepool", "update"): self.update,
                ("aks nodepool", "scale"): self.scale,
                ("aks nodepool", "delete"): self.delete,
                ("aks", "update"): self.update_cluster,
                ("aks", "delete"): self.delete_cluster,
            }.get((az.group, az.verb))
            if handler is not None:
                self.cluster.scripted = True
                handler(path, az)

    def _new_pool(self, path: str, az: AzCommand, name: Value, display: str, cluster: tuple[Value | None, Any],
                  mode: Value) -> NodePool:
        pool = NodePool(name=name, display=display, cluster=cluster[0], source="script", path=path,
                        origin=_command_origin(path, az), mode=mode, cluster_key=cluster[1])
        if az.has_unknown_words:  # $EXTRA_ARGS may hold any option
            pool.labels_open = pool.taints_open = True
            pool.vm_size = UNKNOWN
            pool.spot = UNKNOWN
            pool.autoscaler = UNKNOWN
            pool.node_count = UNKNOWN
            pool.max_pods = UNKNOWN
        return pool

    def _apply(self, pool: NodePool, path: str, az: AzCommand, *, creating: bool, labels_flag: str,
               taints_flag: str) -> None:
        """Apply a create/add/update command's pool options to ``pool``."""
        vm, flag = _flag_text(az, "--node-vm-size")
        if flag is not None and creating:
            pool.vm_size, pool.vm_origin = vm, _origin(path, flag, az)
        mode, flag = _flag_text(az, "--mode")
        if flag is not None:
            pool.mode, pool.mode_origin = mode if mode else UNKNOWN, _origin(path, flag, az)
        flag = az.flag(labels_flag)
        if flag is not None:
            labels, is_open = parse_labels(flag.values)
            pool.labels, pool.labels_open, pool.labels_origin = labels, is_open, _origin(path, flag, az)
        flag = az.flag(taints_flag)
        if flag is not None:
            taints, is_open, _ = parse_taints(flag.values)
            origin = _origin(path, flag, az)
            pool.taints = [PoolTaint(t, origin) for t in taints]
            pool.taints_open, pool.taints_origin = is_open, origin
        for option, attribute in (("--node-count", "node_count"), ("--min-count", "min_count"),
                                  ("--max-count", "max_count")):
            value, flag = _flag_text(az, option)
            if flag is not None:
                setattr(pool, attribute, _int(value) if value else UNKNOWN)
                pool.count_origin[attribute] = _origin(path, flag, az)  # type: ignore[assignment]
        enable = _switch(az, "--enable-cluster-autoscaler")
        disable = _switch(az, "--disable-cluster-autoscaler")
        update = _switch(az, "--update-cluster-autoscaler")
        if enable is not None:
            pool.autoscaler = enable
            pool.autoscaler_origin = _origin(path, az.flag("--enable-cluster-autoscaler"), az)
        elif disable is True:
            pool.autoscaler = False
            pool.autoscaler_origin = _origin(path, az.flag("--disable-cluster-autoscaler"), az)
        elif update is True and pool.autoscaler is UNKNOWN:
            pool.autoscaler = True  # the CLI accepts --update-cluster-autoscaler only on an autoscaled pool
        if creating:
            priority, flag = _flag_text(az, "--priority")
            if flag is not None:
                pool.spot = UNKNOWN if priority is UNKNOWN else str(priority).lower() == "spot"
            elif pool.spot is not UNKNOWN:
                pool.spot = False
            pods, flag = _flag_text(az, "--max-pods")
            if flag is not None:
                pool.max_pods = _int(pods) if pods else UNKNOWN
            os_type, flag = _flag_text(az, "--os-type")
            if flag is not None:
                pool.os_type = os_type if os_type else UNKNOWN
            profile, flag = _flag_text(az, "--gpu-instance-profile")
            if flag is not None:
                pool.gpu_instance_profile = profile
        driver, flag = _flag_text(az, "--gpu-driver")
        if flag is not None:
            pool.gpu_driver = driver
        elif az.has("--skip-gpu-driver-install"):
            pool.gpu_driver = "None"

    def create(self, path: str, az: AzCommand) -> None:
        keyed = _cluster_key(az, "--name")
        cluster = keyed[0]
        self.created_clusters.add(keyed[1])
        self.cluster.complete = True
        sku, _ = _flag_text(az, "--sku")
        provisioning, _ = _flag_text(az, "--node-provisioning-mode")
        if (isinstance(sku, str) and sku.lower() == "automatic") or sku is UNKNOWN \
                or (isinstance(provisioning, str) and provisioning.lower() == "auto") or provisioning is UNKNOWN \
                or az.has("--enable-node-autoprovision"):
            self.cluster.auto_provisioning = True
        name, flag = _flag_text(az, "--nodepool-name")
        if flag is None:
            name = FIRST_POOL
        pool = self._new_pool(path, az, name if name else UNKNOWN, _display(name, flag), keyed, "System")
        pool.node_count = 3 if pool.node_count is None else pool.node_count
        self._apply(pool, path, az, creating=True, labels_flag="--nodepool-labels", taints_flag="--nodepool-taints")
        pool.mode, pool.mode_origin = "System", None  # the first pool of a cluster is a System pool
        self._created(pool)
        self.profile(path, az, cluster)

    def _created(self, pool: NodePool) -> None:
        """Add a pool made by create/add; updates of it read earlier (in a file sorted before the
        one that creates it) are replayed on top, since the pool must have existed for them."""
        same = self.find(pool.cluster_key, pool.name) if isinstance(pool.name, str) else []
        if any(p.created and p.name == pool.name for p in same):
            return  # the pool exists (an idempotent re-run adds it again): one pool per (cluster, name), the first
        stubs = [p for p in same if not p.created and p.name == pool.name]
        self._register(pool)
        for stub in stubs:
            self._unregister(stub)
            for path, az in stub.pending:
                self._apply(pool, path, az, creating=False, labels_flag="--labels", taints_flag="--node-taints")
                if az.has_unknown_words:
                    self._unsettle(pool, az)

    def add(self, path: str, az: AzCommand) -> None:
        keyed = _cluster_key(az, "--cluster-name")
        name, flag = _flag_text(az, "--name")
        pool = self._new_pool(path, az, name if name else UNKNOWN, _display(name, flag), keyed, "User")
        if pool.node_count is None:
            pool.node_count = 3  # the CLI's default
        self._apply(pool, path, az, creating=True, labels_flag="--labels", taints_flag="--node-taints")
        self._created(pool)

    def update(self, path: str, az: AzCommand) -> None:
        cluster, key = _cluster_key(az, "--cluster-name")
        name, flag = _flag_text(az, "--name")
        if not name or name is UNKNOWN:
            # which pool it updates is unknown: it changes nothing known about named pools, in
            # files sorted before it and after it alike (the model does not depend on file order)
            return
        pools = self.find(key, name)
        if az.has_unknown_words:
            for pool in pools:  # what it sets is unknown
                self._unsettle(pool, az)
        if not pools:
            pool = NodePool(name=name, display=_display(name, flag), cluster=cluster, cluster_key=key,
                            source="script", path=path,
                            origin=_command_origin(path, az), created=False, mode=UNKNOWN, vm_size=UNKNOWN,
                            labels_open=True, taints_open=True, autoscaler=UNKNOWN, spot=UNKNOWN,
                            os_type=UNKNOWN, max_pods=UNKNOWN)
            self._register(pool)
            pools = [pool]
        for pool in pools:
            if not pool.created:
                pool.pending.append((path, az))
            self._apply(pool, path, az, creating=False, labels_flag="--labels", taints_flag="--node-taints")
            if az.has_unknown_words:
                self._unsettle(pool, az)

    def _unsettle(self, pool: NodePool, az: AzCommand) -> None:
        """An update that may or may not apply to ``pool``, or may hold more options."""
        every = az.has_unknown_words
        if every or az.has("--labels"):
            pool.labels_open = True
            pool.labels = {k: UNKNOWN for k in pool.labels} if not every else pool.labels
        if every or az.has("--node-taints"):
            pool.taints_open = True
        if every or az.has("--mode"):
            pool.mode = UNKNOWN
        if every or any(az.has(o) for o in ("--enable-cluster-autoscaler", "--disable-cluster-autoscaler",
                                              "--update-cluster-autoscaler")):
            pool.autoscaler = UNKNOWN
        if every or az.has("--min-count"):
            pool.min_count = UNKNOWN
        if every or az.has("--max-count"):
            pool.max_count = UNKNOWN

    def scale(self, path: str, az: AzCommand) -> None:
        _, key = _cluster_key(az, "--cluster-name")
        name, _ = _flag_text(az, "--name")
        count, flag = _flag_text(az, "--node-count")
        if not name or name is UNKNOWN:
            return  # which pool it scales is unknown: nothing known changes (see update)
        for pool in self.find(key, name):
            if count is None:
                pool.node_count = UNKNOWN
            else:
                pool.node_count = _int(count)
                pool.count_origin["node_count"] = _origin(path, flag, az)  # type: ignore[assignment]

    def delete(self, path: str, az: AzCommand) -> None:
        # Teardown and clean-up scripts delete the pools a setup script made, and which one runs
        # last is not a matter of file order: a deleted pool stays a pool the manifests may target.
        return

    delete_cluster = delete

    def update_cluster(self, path: str, az: AzCommand) -> None:
        cluster, key = _cluster_key(az, "--name")
        provisioning, _ = _flag_text(az, "--node-provisioning-mode")
        if (isinstance(provisioning, str) and provisioning.lower() == "auto") or provisioning is UNKNOWN:
            self.cluster.auto_provisioning = True
        pool_options = ("--enable-cluster-autoscaler", "--disable-cluster-autoscaler", "--update-cluster-autoscaler",
                        "--min-count", "--max-count", "--nodepool-labels", "--nodepool-taints")
        if any(az.has(o) for o in pool_options) or az.has_unknown_words:
            pools = self.find(key, UNKNOWN)
            if len(pools) == 1 and pools[0].created and key in self.created_clusters and not az.has_unknown_words:
                self._apply(pools[0], path, az, creating=False, labels_flag="--nodepool-labels",
                            taints_flag="--nodepool-taints")
            else:
                for pool in pools:
                    if az.has("--nodepool-labels") or az.has_unknown_words:
                        pool.labels_open = True
                    if az.has("--nodepool-taints") or az.has_unknown_words:
                        pool.taints_open = True
                    if any(az.has(o) for o in pool_options[:5]) or az.has_unknown_words:
                        pool.autoscaler = pool.min_count = pool.max_count = UNKNOWN
        self.profile(path, az, cluster)

    def profile(self, path: str, az: AzCommand, cluster: Value | None) -> None:
        flag = az.flag("--cluster-autoscaler-profile")
        if flag is None:
            if az.has_unknown_words:
                for key in ("max-graceful-termination-sec",):
                    self.cluster.profiles.setdefault(cluster, {})[key] = ProfileSetting(
                        UNKNOWN, _command_origin(path, az))
            return
        settings = self.cluster.profiles.setdefault(cluster, {})
        entries = list(profile_entries(flag))
        if not entries and all(v.value == "" for v in flag.values):
            settings.clear()  # --cluster-autoscaler-profile "" resets to the defaults
            return
        for entry in entries:
            origin = Origin(path, flag.span, entry.span, az)
            if entry.key is None:
                if entry.value is UNKNOWN and entry.text.startswith("$"):
                    for key in autoscaler_profile_keys():  # $PROFILE: any key may be set
                        settings[key] = ProfileSetting(UNKNOWN, origin)
                continue
            settings[entry.key] = ProfileSetting(entry.value, origin)

    # config --------------------------------------------------------------------------------

    def config_pools(self, pools: Iterable[dict[str, Any]], path: str) -> None:
        names = {p.name for p in self.cluster.pools if p.source == "script"}
        for entry in pools:
            name = str(entry.get("name", ""))
            if name in names:
                continue  # the scripts define it
            labels = {str(k): str(v) for k, v in (entry.get("labels") or {}).items()}
            taints = [t for t in (parse_taint(text) for text in entry.get("taints") or ()) if t is not None]
            autoscaler = bool(entry.get("enable-cluster-autoscaler", "min-count" in entry or "max-count" in entry))
            pool = NodePool(
                name=name, display=name, cluster=None, source="config", path=path,
                mode=str(entry.get("mode", "User")).capitalize(),
                vm_size=str(entry["vm-size"]) if entry.get("vm-size") else None,
                labels=labels, taints=[PoolTaint(t, None) for t in taints],
                node_count=entry.get("node-count", 3 if not autoscaler else None),
                min_count=entry.get("min-count"), max_count=entry.get("max-count"),
                autoscaler=autoscaler, spot=str(entry.get("priority", "Regular")).lower() == "spot",
                max_pods=entry.get("max-pods"), os_type=str(entry.get("os-type", "Linux")),
                gpu_instance_profile=entry.get("gpu-instance-profile"), gpu_driver=entry.get("gpu-driver"),
            )
            self.cluster.pools.append(pool)
            self.cluster.complete = True


def build_cluster(scripts: Iterable[ShellScript], config: Any = None) -> Cluster:
    """The cluster the scripts (in the given order) and the config describe."""
    builder = _Builder()
    automatic = getattr(config, "profile", None) == "aks-automatic"
    if not automatic:
        for script in scripts:
            builder.run(script.path, script)
    config_pools = getattr(config, "node_pools", ()) or ()
    if config_pools:
        config_path = getattr(config, "path", None)
        builder.config_pools(config_pools, str(config_path) if config_path is not None else ".mlops-lint.yaml")
    return builder.cluster


_CACHE: "weakref.WeakKeyDictionary[Any, tuple[int, Any, Cluster]]" = weakref.WeakKeyDictionary()


def cluster_of(index: Any, config: Any) -> Cluster:
    """The project's cluster, built once per index (and config)."""
    cached = _CACHE.get(index)
    if cached is not None and cached[0] == id(config) and cached[1] is config:
        return cached[2]
    scripts = sorted((d for d in index.scripts if d.shell is not None), key=lambda d: d.path)
    for document in scripts:
        if not document.shell.path:
            document.shell.path = document.path
    cluster = build_cluster([d.shell for d in scripts], config)
    add_nodepools(cluster, index)
    cluster.project = (index, config)
    _CACHE[index] = (id(config), config, cluster)
    return cluster


def add_nodepools(cluster: Cluster, index: Any) -> None:
    """The project's node auto-provisioning NodePools, as pools (``linter.model.nap``): in the
    ``aks-automatic`` profile too, whose nodes NAP makes."""
    from linter.model.nap import nodepool_pools

    cluster.pools.extend(nodepool_pools(index.of_kind("NodePool"), NodePool, PoolTaint))


# ---------------------------------------------------------------------------------------------
# Placement: which pools a pod template can land on


class PoolVerdict(Struct, frozen=True):
    pool: NodePool
    labels: str  # "yes" | "no" | "maybe"
    label_reason: str  # why "no"
    taints: str  # "ok" | "no" | "maybe"
    untolerated: tuple[Taint, ...] = ()
    offers: str = "yes"  # "yes" | "no" | "maybe": whether its nodes have the extended resources asked for

    @property
    def possible(self) -> bool:
        """Labels and taints allow the pod (what the pool offers is :attr:`PodPlacement.serving`'s)."""
        return self.labels != "no" and self.taints != "no"

    @property
    def elsewhere(self) -> bool:
        return self.pool.source == "elsewhere"

    def why_not(self) -> str:
        if self.labels == "no":
            return f"{self.pool.display}: {self.label_reason}"
        shown = ", ".join(str(t) for t in self.untolerated)
        word = "taint" if len(self.untolerated) == 1 else "taints"
        return f"{self.pool.display}: {word} {shown} not tolerated"


class PodPlacement(Struct, frozen=True, eq=False, dict=True):
    """Every pool's verdict for one placement. Shared by every pod with the same constraints
    (:meth:`Cluster.placement`), so what is derived from it alone is derived once: the filtered
    lists below, and what rules keep with :meth:`memo`. The lists returned are fresh copies."""

    verdicts: tuple[PoolVerdict, ...]
    _memo: dict = field(default_factory=dict)

    @cached_property
    def serving(self) -> tuple[PoolVerdict, ...]:
        """The pools the pod is judged on. A pod asking for extended resources (a GPU, a MIG
        profile, GPUs through a resource claim) lands only on pools whose nodes may have them
        (:func:`offers`): those, when its node selection reaches one of them. Otherwise (no pool
        offers them, or its selection reaches none that does) every pool, judged as written:
        that the pools it reaches lack what it asks is XPL003's and XPL005's finding."""
        found = tuple(v for v in self.verdicts if v.offers != "no")
        if found and any(v.labels != "no" for v in found):
            return found
        return self.verdicts

    @cached_property
    def _candidates(self) -> tuple[PoolVerdict, ...]:
        return tuple(v for v in self.serving if v.possible)

    @cached_property
    def _label_matches(self) -> tuple[PoolVerdict, ...]:
        return tuple(v for v in self.serving if v.labels != "no")

    @cached_property
    def selector_matches(self) -> tuple[PoolVerdict, ...]:
        """The pools the pod's node selection allows, whatever they offer."""
        return tuple(v for v in self.verdicts if v.labels != "no")

    @cached_property
    def _any_elsewhere(self) -> bool:
        return any(v.elsewhere for v in self._candidates)

    @property
    def candidates(self) -> list[PoolVerdict]:
        return list(self._candidates)

    @property
    def label_matches(self) -> list[PoolVerdict]:
        return list(self._label_matches)

    @property
    def repelled_everywhere(self) -> bool:
        """Some pool matches the pod's labels and every such pool repels it with a taint (XPL002's
        finding; GPU005 defers to it: one cause, the stronger finding)."""
        return bool(self._label_matches) and not self._candidates

    @property
    def known_candidates(self) -> list[PoolVerdict] | None:
        """The candidates, if all of them are pools of the project (None if a pool described
        nowhere may take the pod)."""
        return None if self._any_elsewhere else list(self._candidates)

    def memo(self, key: Any, build: Any) -> Any:
        """``build()``, computed once per placement (for what depends only on the placement and
        the run's options: the capacities of the candidate pools, say). ``key`` names the rule
        and every option the result depends on."""
        return once(self, key, build)


_ABSENT = object()
_OTHER = "\x00another value"
_MAX_COMBINATIONS = 512


def _assignments(placement: Placement, view: LabelView) -> tuple[dict[str, str], list[tuple[str, list[Any]]]] | None:
    keys = list(dict.fromkeys([*placement.node_selector,
                               *(req.key for term in placement.terms for req in term)]))
    fixed: dict[str, str] = {}
    free: list[tuple[str, list[Any]]] = []
    size = 1
    for key in keys:
        state, value = view.state(key)
        if state == "known":
            fixed[key] = value  # type: ignore[assignment]
        elif state == "unknown":
            mentioned = [placement.node_selector[key]] if key in placement.node_selector else []
            for term in placement.terms:
                for req in term:
                    if req.key != key:
                        continue
                    mentioned += req.values
                    if req.operator in ("Gt", "Lt") and len(req.values) == 1 and _is_int(req.values[0]):
                        step = 1 if req.operator == "Gt" else -1  # a value on the far side of the bound
                        mentioned.append(str(int(req.values[0]) + step))
            ruled_out = dict(view.excluded).get(key, ())
            choices = [_ABSENT, _OTHER, *(v for v in dict.fromkeys(mentioned) if v not in ruled_out)]
            free.append((key, choices))
            size *= len(choices)
            if size > _MAX_COMBINATIONS:
                return None
    return fixed, free


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def label_verdict(placement: Placement, view: LabelView) -> tuple[str, str]:
    """("yes" | "no" | "maybe", why not) for one pool's labels against a pod's placement."""
    if not placement.constrained:
        return "yes", ""
    found = _assignments(placement, view)
    if found is None:
        return "maybe", ""
    fixed, free = found
    outcomes = set()
    for combination in product(*(choices for _, choices in free)):
        labels = dict(fixed)
        for (key, _), value in zip(free, combination):
            if value is not _ABSENT:
                labels[key] = value
        outcomes.add(placement.matches(labels))
        if len(outcomes) == 2:
            return "maybe", ""
    if outcomes == {True}:
        return "yes", ""
    return "no", _label_reason(placement, view)


def _shown(view: LabelView, key: str) -> str:
    state, value = view.state(key)
    return f"the pool has {key}={value}" if state == "known" else f"the pool has no label {key}"


def _label_reason(placement: Placement, view: LabelView) -> str:
    for key, wanted in placement.node_selector.items():
        state, value = view.state(key)
        if state == "absent" or state == "known" and value != wanted:
            return f"nodeSelector {key}={wanted} does not match ({_shown(view, key)})"
    parts = []
    for term in placement.terms:
        for req in term:
            state, value = view.state(req.key)
            if state == "unknown":
                continue
            labels = {req.key: value} if state == "known" else {}
            if not req.matches(labels):  # type: ignore[arg-type]
                values = ", ".join(req.values)
                shown = f"{req.key} {req.operator} ({values})" if req.values else f"{req.key} {req.operator}"
                parts.append(f"{shown}: {_shown(view, req.key)}")
                break
    if len(parts) == 1:
        return f"required node affinity {parts[0]}"
    if parts:
        return "required node affinity matches no term (" + "; ".join(parts) + ")"
    return "required node affinity matches no term"


def taint_verdict(pool: NodePool, tolerations: list[Any]) -> tuple[str, tuple[Taint, ...]]:
    untolerated = tuple(t.taint for t in pool.effective_taints
                        if t.taint.repels and not tolerated_by(tolerations, t.taint))
    if untolerated:
        return "no", untolerated
    if not pool.taints_known:
        return "maybe", ()
    return "ok", ()


def _placement_signature(pod: Any, admissions: tuple) -> tuple:
    """Everything :func:`place` reads from a pod: node name, what it asks for that pools may not
    offer, and each admission's placement and tolerations."""
    return (frozen(pod.spec.get("nodeName")), _asked(pod),
            tuple((tuple(sorted(a.placement.node_selector.items())), a.placement.terms, a.placement.unknown_terms,
                   tuple(frozen(t) for t in a.tolerations)) for a in admissions))


def _asked(pod: Any) -> tuple[str, ...]:
    """The extended resources a pool must offer for the pod (GPUs, MIG profiles, DRA GPUs)."""
    from linter.model.dra import claimed_gpus
    from linter.model.k8s import gpu_resources

    names = set()
    for container in pod.containers:
        for entries in (container.requests, container.limits):
            names.update(name for name, res in gpu_resources(entries).items() if res.value is None or res.value > 0)
        if any(claimed.value is None or claimed.value > 0 for claimed in claimed_gpus(container)):
            names.add("dra:gpu")
    return tuple(sorted(names))


def offers(pool: NodePool, resource: str) -> str:
    """Whether one node of ``pool`` has ``resource``: "yes", "no" or "maybe" (unknown VM size,
    a resource the catalogue does not say). A pool AKS partitions with ``--gpu-instance-profile``
    offers exactly that MIG profile, with no MIG Manager label."""
    from linter.model.mig import aks_instance_profile, is_mig_resource, normalise_profile

    if pool.source == "elsewhere":
        return "maybe"
    vm = pool.vm
    if vm is None:
        return "maybe"
    if resource in ("nvidia.com/gpu", "amd.com/gpu", "dra:gpu", "nvidia.com/gpu.shared"):
        wanted = "amd.com/gpu" if resource == "amd.com/gpu" else "nvidia.com/gpu"
        if not vm.is_gpu or vm.gpu_resource != wanted:
            return "no"
        return "maybe" if isinstance(pool.gpu_instance_profile, str) and pool.gpu_instance_profile else "yes"
    if is_mig_resource(resource):
        if not vm.is_gpu or not vm.mig_capable:
            return "no"
        setting = pool.gpu_instance_profile
        if isinstance(setting, str) and setting:
            given = aks_instance_profile(vm.gpu_key or "", setting)
            if given is None:
                return "maybe"
            return "yes" if given.name == normalise_profile(resource) else "no"
        return "maybe"  # the GPU Operator's MIG Manager may partition it
    return "maybe"


def place(cluster: Cluster, pod: Any) -> PodPlacement | None:
    """Every pool's verdict for ``pod`` (a :class:`linter.model.k8s.PodSpec`); None when the
    cluster has no pools or the pod names its node (``nodeName`` bypasses the scheduler).
    A pod that admission may place several ways (Kueue flavors, ``linter.model.admission``) gets,
    per pool, its best verdict over them: a pool is a candidate when some admission lets the pod
    land there, so what the rules report holds for every admission."""
    if not cluster.has_pools or pod.spec.get("nodeName"):
        return None
    return _place(cluster, _admissions_of(cluster, pod), _asked(pod))


def _admissions_of(cluster: Cluster, pod: Any) -> tuple:
    from linter.model.admission import admissions, own

    return admissions(pod, cluster.project[0]) if cluster.project is not None else (own(pod),)


def _rank(verdict: PoolVerdict) -> int:
    return 0 if verdict.possible else 1 if verdict.labels != "no" else 2


def _place(cluster: Cluster, options: tuple, asked: tuple[str, ...]) -> PodPlacement:
    pools = list(cluster.pools)
    offered = []
    for pool in pools:
        answers = {offers(pool, name) for name in asked}
        offered.append("no" if "no" in answers else "maybe" if "maybe" in answers else "yes")
    best: list[PoolVerdict | None] = [None] * len(pools)
    other = cluster.elsewhere
    best_other: PoolVerdict | None = None
    for option in options:
        placement, tolerations = option.placement, list(option.tolerations)
        for position, pool in enumerate(pools):
            labels, reason = label_verdict(placement, pool.label_view())
            taints, untolerated = taint_verdict(pool, tolerations)
            verdict = PoolVerdict(pool, labels, reason, taints, untolerated, offered[position])
            if best[position] is None or _rank(verdict) < _rank(best[position]):
                best[position] = verdict
        if other is not None:
            labels, reason = label_verdict(placement, other.label_view())
            verdict = PoolVerdict(other, labels, reason, "maybe", (), "maybe")
            if best_other is None or _rank(verdict) < _rank(best_other):
                best_other = verdict
    verdicts = [v for v in best if v is not None]
    if best_other is not None:
        verdicts.append(best_other)
    return PodPlacement(tuple(verdicts))


def summarize(verdicts: Iterable[PoolVerdict], limit: int = 6) -> str:
    """``gpunp: taint sku=gpu:NoSchedule not tolerated; cpupool: nodeSelector …``."""
    items = [v.why_not() for v in verdicts]
    if len(items) > limit:
        items = items[:limit] + [f"and {len(items) - limit} more"]
    return "; ".join(items)


def describe_pool(pool: NodePool) -> str:
    """``gpunp (Standard_NC4as_T4_v3, 1 x NVIDIA Tesla T4)``."""
    vm = pool.vm
    if vm is None:
        return f"`{pool.display}` ({pool.describe_vm()})"
    if vm.is_gpu:
        count = f"{vm.gpus} x " if vm.gpus else ""
        return f"`{pool.display}` ({vm.name}, {count}{vm.gpu_model})"
    return f"`{pool.display}` ({vm.name})"


def changed_after_creation(origin: Origin | None, pool: NodePool) -> bool:
    """Whether ``origin`` is a later command than the one that created ``pool``."""
    return origin is not None and pool.origin is not None and origin.command is not pool.origin.command


def known_pools_summary(verdicts: Iterable[PoolVerdict], limit: int = 6) -> str:
    """:func:`summarize` over the project's own pools (the stand-in for the rest is left out)."""
    return summarize([v for v in verdicts if not v.elsewhere], limit)


def selector_anchor(pod: Any, verdicts: Iterable[PoolVerdict]) -> tuple[Span, tuple[str | int, ...]]:
    """Where a placement finding points: the nodeSelector entry no pool matches, else the required
    node affinity, else ``nodeSelector:``; with the node path."""
    spec = pod.spec
    selector = spec.get_map("nodeSelector")
    views = [v.pool.label_view() for v in verdicts]
    if selector is not None:
        for key, wanted in pod.placement.node_selector.items():
            states = [view.state(key) for view in views]
            if all(s == "absent" or s == "known" and value != wanted for s, value in states):
                return selector.key_span(key), pod.path + ("nodeSelector", key)
    affinity = spec.get_map("affinity")
    node_affinity = affinity.get_map("nodeAffinity") if affinity is not None else None
    if node_affinity is not None and "requiredDuringSchedulingIgnoredDuringExecution" in node_affinity.kspans:
        return (node_affinity.key_span("requiredDuringSchedulingIgnoredDuringExecution"),
                pod.path + ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"))
    if "nodeSelector" in spec.kspans:
        return spec.key_span("nodeSelector"), pod.path + ("nodeSelector",)
    return pod.span, pod.path


def workload_name(pod: Any) -> str:
    """``pod template of Job ml-training/train`` / ``Worker replicas of PyTorchJob ml-training/ddp``."""
    obj = pod.obj
    where = f"{obj.namespace}/{obj.name}" if obj.namespace else obj.name
    return f"{pod.describe()} of {obj.kind} `{where}`"


def resource_anchor(request: PodRequest) -> tuple[Span, tuple[str | int, ...]]:
    """The value of the container entry that asks the most of a resource, with its node path."""
    container, entry = request.container, request.entry
    section = "requests" if entry.name in container.requests else "limits"
    return entry.value_span, container.path + ("resources", section, entry.name)


def gpus_of(pool: NodePool, resource: str) -> int | None:
    """How many of ``resource`` (``nvidia.com/gpu``, ``amd.com/gpu``) one node of the pool has;
    None when the VM size (or its GPU count) is unknown."""
    vm = pool.vm
    if vm is None:
        return None
    if not vm.is_gpu or vm.gpu_resource != resource:
        return 0
    return vm.gpus


class Capacity(Struct, frozen=True):
    """What one node of a pool offers pods: the VM, less AKS's reservations when subtracted."""

    cpu: Fraction | None  # cores
    memory: Fraction | None  # bytes
    vm_cpu: int | None
    vm_memory: int | None
    reserved_cpu: Fraction = Fraction(0)
    reserved_memory: int = 0


def _before_1_29(version: Any) -> bool:
    match = re.match(r"v?(\d+)\.(\d+)", str(version or ""))
    return bool(match) and (int(match.group(1)), int(match.group(2))) < (1, 29)


def node_capacity(pool: NodePool, *, subtract_reserved: bool = True, kubernetes_version: Any = None) -> Capacity | None:
    """One node's allocatable cpu and memory (azure-vm-sizes.md section C), None when the VM is unknown.

    CPU: vCPUs less kube-reserved. Memory (Kubernetes 1.29+ unless ``kubernetes_version`` is older):
    the VM's memory less kube-reserved (20 MB per pod of ``--max-pods``, 30 when not given: the
    smallest CLI default, so the smallest reservation) and the 100 Mi eviction threshold.
    """
    vm = pool.vm
    if vm is None:
        return None
    max_pods = pool.max_pods if isinstance(pool.max_pods, int) and pool.max_pods > 0 else 30
    return _capacity(vm, max_pods, subtract_reserved, _before_1_29(kubernetes_version) if subtract_reserved else False)


@lru_cache(maxsize=4096)
def _capacity(vm: Any, max_pods: int, subtract_reserved: bool, before_1_29: bool) -> Capacity:
    """:func:`node_capacity` of a VM size (memoised: every pod asks it of every pool it may land on)."""
    from linter.model.vmsizes import reserved_cpu_millis, reserved_memory_bytes

    cpu = Fraction(vm.vcpus) if vm.vcpus is not None else None
    memory = Fraction(vm.memory_bytes) if vm.memory_bytes is not None else None
    if not subtract_reserved:
        return Capacity(cpu, memory, vm.vcpus, vm.memory_bytes)
    reserved_cpu = Fraction(reserved_cpu_millis(vm.vcpus), 1000) if vm.vcpus is not None else Fraction(0)
    reserved_memory = reserved_memory_bytes(vm.memory_bytes, max_pods=max_pods,
                                            before_1_29=before_1_29) if vm.memory_bytes else 0
    return Capacity(cpu - reserved_cpu if cpu is not None else None,
                    memory - reserved_memory if memory is not None else None,
                    vm.vcpus, vm.memory_bytes, reserved_cpu, reserved_memory)


def format_bytes(amount: Fraction | int) -> str:
    """``16Gi``, ``27.3Gi``, ``512Mi``."""
    value = Fraction(amount)
    for unit, size in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if value >= size:
            shown = f"{float(value / size):.1f}".removesuffix(".0")
            return f"{shown}{unit}"
    return str(int(value))


def format_cpu(amount: Fraction) -> str:
    """``4``, ``3860m``."""
    if amount.denominator == 1:
        return str(amount.numerator)
    return f"{int(amount * 1000)}m"


def taint_note(placement: PodPlacement) -> str:
    """``; ruled out by taints: gpunp: taint sku=gpu:NoSchedule not tolerated`` (or "")."""
    excluded = [v for v in placement.verdicts if v.labels != "no" and v.taints == "no" and not v.elsewhere]
    return f"; ruled out by taints: {summarize(excluded)}" if excluded else ""


def on_aks_managed_mig_pools(pod: Any, index: Any, config: Any) -> bool:
    """Every pool the pod's labels can reach is one of the project's, made with
    ``--gpu-instance-profile`` (AKS-managed MIG: a fixed layout, no MIG Manager labels)."""
    placement = cluster_of(index, config).placement(pod)
    if placement is None:
        return False
    matches = placement.label_matches
    return bool(matches) and all(not v.elsewhere and isinstance(v.pool.gpu_instance_profile, str) for v in matches)


def _largest_grace(values: list) -> tuple[int, Any] | None:
    """The largest possible max-graceful-termination-sec, with where it is set (None: unknown)."""
    best = None
    for value, origin in values:
        if value is UNKNOWN or not str(value).strip().isdigit():
            return None
        if best is None or int(value) > best[0]:
            best = (int(value), origin)
    return best
