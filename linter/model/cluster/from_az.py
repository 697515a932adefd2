"""Node pools from the ``az aks`` commands of the project's shell scripts.

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

Unknown is never guessed. A value the script does not determine (``$(...)``, a ``for``
variable, ``<placeholder>``) is UNKNOWN; a command with words of unknown value
(``$EXTRA_ARGS``) may hold more options, so what it leaves unset is unknown too. Rules only
report what holds for every reading.
"""

from __future__ import annotations

import re
from itertools import chain
from typing import TYPE_CHECKING, Any, Iterable

from mlops_lint.model.bounds import MAX_NUMBER_DIGITS
from mlops_lint.model.cluster.autoscaler import autoscaler_profile_keys, profile_entries
from mlops_lint.model.cluster.pools import (AUTOMATIC, MANUAL, NAP, STANDARD, Cluster, ClusterMode, NodePool, Origin,
                                        PoolTaint, ProfileSetting)
from mlops_lint.model.position import Span
from mlops_lint.model.selectors import Taint, parse_taint
from mlops_lint.model.unknown import UNKNOWN, Value, resolved

if TYPE_CHECKING:  # the script model is read only when a script exists (see linter.model.unknown)
    from mlops_lint.model.azcli import AzCommand, AzFlag, FlagValue, ShellScript

FIRST_POOL = "nodepool1"


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
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
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
            pool.gpu_driver, pool.gpu_driver_origin = driver, _origin(path, flag, az)
        elif az.has("--skip-gpu-driver-install"):
            pool.gpu_driver = "None"
            pool.gpu_driver_origin = _origin(path, az.flag("--skip-gpu-driver-install"), az)
        managed = _switch(az, "--enable-managed-gpu")
        if managed is not None:
            pool.managed_gpu = managed
        elif az.has_unknown_words and creating:
            pool.managed_gpu = UNKNOWN

    def create(self, path: str, az: AzCommand) -> None:
        keyed = _cluster_key(az, "--name")
        cluster = keyed[0]
        self.created_clusters.add(keyed[1])
        self.cluster.complete = True
        sku, sku_flag = _flag_text(az, "--sku")
        provisioning, nap_flag = _flag_text(az, "--node-provisioning-mode")
        if (isinstance(sku, str) and sku.lower() == "automatic") or sku is UNKNOWN \
                or (isinstance(provisioning, str) and provisioning.lower() == "auto") or provisioning is UNKNOWN \
                or az.has("--enable-node-autoprovision"):
            self.cluster.auto_provisioning = True
        self.cluster_mode(path, az, cluster, sku, sku_flag, provisioning, nap_flag)
        name, flag = _flag_text(az, "--nodepool-name")
        if flag is None:
            name = FIRST_POOL
        pool = self._new_pool(path, az, name if name else UNKNOWN, _display(name, flag), keyed, "System")
        pool.node_count = 3 if pool.node_count is None else pool.node_count
        self._apply(pool, path, az, creating=True, labels_flag="--nodepool-labels", taints_flag="--nodepool-taints")
        pool.mode, pool.mode_origin = "System", None  # the first pool of a cluster is a System pool
        self._created(pool)
        self.profile(path, az, cluster)
        self.blob_driver(path, az, cluster, creating=True)
        self.features(path, az, cluster, creating=True,
                      automatic=isinstance(sku, str) and sku.lower() == "automatic")

    def cluster_mode(self, path: str, az: AzCommand, cluster: Value | None, sku: Value | None, sku_flag: Any,
                     provisioning: Value | None, nap_flag: Any) -> None:
        """What ``az aks create`` (or ``az aks update``: only its ``--node-provisioning-mode
        Auto`` or ``Manual``, which turns NAP off) says of the cluster's kind (:class:`ClusterMode`);
        nothing when a value is not determined, or words of unknown value may hold the option."""
        creating = az.is_("aks", "create")
        if isinstance(sku, str) and sku.lower() == "automatic":
            self.cluster.modes.append(ClusterMode(AUTOMATIC, f"`az aks create --sku {sku}`",
                                                  _origin(path, sku_flag, az), cluster))
        elif isinstance(provisioning, str) and provisioning.lower() == "auto":
            verb = "create" if creating else "update"
            self.cluster.modes.append(ClusterMode(NAP, f"`az aks {verb} --node-provisioning-mode {provisioning}`",
                                                  _origin(path, nap_flag, az), cluster))
        elif not creating and isinstance(provisioning, str) and provisioning.lower() == "manual":
            self.cluster.modes.append(ClusterMode(MANUAL, f"`az aks update --node-provisioning-mode {provisioning}`",
                                                  _origin(path, nap_flag, az), cluster))
        elif creating and az.has("--enable-node-autoprovision"):
            self.cluster.modes.append(ClusterMode(NAP, "`az aks create --enable-node-autoprovision`",
                                                  _origin(path, az.flag("--enable-node-autoprovision"), az), cluster))
        elif creating and sku is not UNKNOWN and provisioning is not UNKNOWN and not az.has_unknown_words:
            self.cluster.modes.append(ClusterMode(
                STANDARD, "`az aks create` without `--sku automatic` or `--node-provisioning-mode Auto`",
                _command_origin(path, az), cluster))

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
        provisioning, nap_flag = _flag_text(az, "--node-provisioning-mode")
        if (isinstance(provisioning, str) and provisioning.lower() == "auto") or provisioning is UNKNOWN:
            self.cluster.auto_provisioning = True
        self.cluster_mode(path, az, cluster, None, None, provisioning, nap_flag)
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
        self.blob_driver(path, az, cluster, creating=False)
        self.features(path, az, cluster, creating=False)

    def blob_driver(self, path: str, az: AzCommand, cluster: Value | None, *, creating: bool) -> None:
        """``--enable-blob-driver`` / ``--disable-blob-driver`` (a create without either: off;
        words of unknown value may hold either: unknown)."""
        enable, disable = _switch(az, "--enable-blob-driver"), _switch(az, "--disable-blob-driver")
        flag = az.flag("--enable-blob-driver", "--disable-blob-driver")
        if enable is UNKNOWN or disable is UNKNOWN or (enable is True and disable is True):  # the CLI refuses both
            value: Value | bool = UNKNOWN
        elif enable is True or disable is True:
            value = enable is True
        elif az.has_unknown_words:
            value = UNKNOWN
        elif creating:
            value = False
        else:
            return  # an update that says nothing of it
        origin = _origin(path, flag, az) if flag is not None else _command_origin(path, az)
        self.cluster.set_blob_driver(cluster, _cluster_key(az, "--resource-group")[1], ProfileSetting(value, origin))

    def features(self, path: str, az: AzCommand, cluster: Value | None, *, creating: bool,
                 automatic: bool = False) -> None:
        """What the command says of the cluster-wide features (linter.model.cluster.features): a
        switch pair per feature, the network policy engine; a create without one has the AKS
        default (off; the OIDC issuer unknown: on by default from Kubernetes 1.34), AKS Automatic
        its preconfigured ones (workload identity, OIDC issuer, Cilium). Words of unknown value
        may hold any flag."""
        from mlops_lint.model.cluster.features import (AI_TOOLCHAIN, MANAGED_PROMETHEUS, NETWORK_POLICY, OIDC_ISSUER,
                                                   WORKLOAD_IDENTITY, FeatureSetting, policy_value)

        made = _command_origin(path, az)
        verb = "create" if creating else "update"

        def record(feature: str, value: Any, flag: AzFlag | None, how: str) -> None:
            if flag is None and az.has_unknown_words:
                value = UNKNOWN
            self.cluster.features.append(FeatureSetting(
                feature, value, _origin(path, flag, az) if flag is not None else made, cluster, creating,
                flag is not None, "script", how))

        for feature, name, default in ((WORKLOAD_IDENTITY, "workload-identity", False), (OIDC_ISSUER, "oidc-issuer", UNKNOWN),
                                       (AI_TOOLCHAIN, "ai-toolchain-operator", False),
                                       (MANAGED_PROMETHEUS, "azure-monitor-metrics", False)):
            enable, disable = _switch(az, f"--enable-{name}"), _switch(az, f"--disable-{name}")
            flag = az.flag(f"--enable-{name}", f"--disable-{name}")
            if enable is UNKNOWN or disable is UNKNOWN or (enable is True and disable is True):
                value: Any = UNKNOWN
            elif enable is not None or disable is not None:
                value = enable is True or disable is False
            elif automatic and feature not in (AI_TOOLCHAIN, MANAGED_PROMETHEUS):
                value = True  # preconfigured on AKS Automatic
            elif creating:
                value = default
            elif az.has_unknown_words:
                value = UNKNOWN
            else:
                continue  # an update that says nothing of it
            record(feature, value, flag, f"`az aks {verb} {flag.name}`" if flag is not None
                   else f"`az aks {verb}` without `--enable-{name}`")
        policy, policy_flag = _flag_text(az, "--network-policy")
        dataplane, plane_flag = _flag_text(az, "--network-dataplane")
        if policy_flag is None and plane_flag is None and not creating and not az.has_unknown_words:
            return
        plugin, _ = _flag_text(az, "--network-plugin")
        value = "cilium" if automatic else policy_value(policy if policy != "" else UNKNOWN, dataplane, plugin)
        flag = policy_flag or plane_flag
        shown = f"{flag.name} {flag.value.raw}" if flag is not None and flag.value is not None else ""
        record(NETWORK_POLICY, value, flag, f"`az aks {verb} {shown}`" if shown
               else f"`az aks {verb}` without `--network-policy`")

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


def read_scripts(cluster: Cluster, scripts: Iterable[ShellScript]) -> None:
    """Add the pools and autoscaler profiles of ``scripts`` (in the given order) to ``cluster``."""
    builder = _Builder(cluster)
    for script in scripts:
        builder.run(script.path, script)
