"""Node pools from Terraform: ``azurerm_kubernetes_cluster`` and ``azurerm_kubernetes_cluster_node_pool``.

The project's ``*.tf`` files (read by :mod:`linter.sources.terraform`) are grouped by folder, a
Terraform module. In each module:

* an ``azurerm_kubernetes_cluster`` is a cluster: its ``default_node_pool`` block is its first,
  System-mode pool (``only_critical_addons_enabled`` adds AKS's ``CriticalAddonsOnly=true:NoSchedule``
  taint), its ``auto_scaler_profile`` block sets the autoscaler profile
  (``max_graceful_termination_sec``), and a ``node_provisioning_profile`` with ``mode = "Auto"``
  (or ``sku_tier = "Automatic"``) is node auto-provisioning. A cluster in the project makes its
  pools all the cluster has, as an ``az aks create`` does;
* an ``azurerm_kubernetes_cluster_node_pool`` is a pool (``name``, ``vm_size``, ``node_count``,
  ``auto_scaling_enabled`` or the older ``enable_auto_scaling``, ``min_count``, ``max_count``,
  ``max_pods``, ``node_taints``, ``node_labels``, ``mode``, ``os_type``, ``priority``,
  ``gpu_instance``, ``gpu_driver``) of the cluster its ``kubernetes_cluster_id`` names
  (``azurerm_kubernetes_cluster.<name>.id``).

Values: literals; ``var.x`` with the ``default`` of its ``variable`` block, overridden by
``terraform.tfvars`` / ``*.auto.tfvars`` beside it (another ``*.tfvars`` is a ``-var-file`` a run
may or may not pass: when its value differs the variable is unknown); ``local.x``; string
interpolation of those; ``toset``/``tolist`` of a literal list. Anything else (a data source, a
module output, an operator, a conditional) is UNKNOWN, never guessed. ``count`` and ``for_each``
over literal collections make one pool each (``count.index``, ``each.key``, ``each.value``); a
collection of more than :data:`MAX_INSTANCES` items, or one not known, makes one pool whose
name is unknown (it stands for all of them). Every setting's :class:`Origin` is the attribute's
name in the ``.tf`` file, with the value's span.
"""

from __future__ import annotations

from typing import Any, Iterable

from mlops_lint.model.cluster.pools import (AUTOMATIC, NAP, STANDARD, ClusterMode, Cluster, NodePool, Origin, PoolTaint,
                                        ProfileSetting, set_taints)
from mlops_lint.model.selectors import Taint
from mlops_lint.model.unknown import UNKNOWN, Value

CLUSTER = "azurerm_kubernetes_cluster"
NODE_POOL = "azurerm_kubernetes_cluster_node_pool"
MAX_INSTANCES = 256  # count / for_each items expanded one pool each; more: one pool for all
MAX_LOCAL_DEPTH = 32  # locals referring to locals, followed this deep
AUTO_VARS = ("terraform.tfvars", "terraform.tfvars.json")
CRITICAL_TAINT = Taint("CriticalAddonsOnly", "true", "NoSchedule")


class Module:
    """The variables and locals of one folder of ``.tf`` files, and an evaluator over them."""

    def __init__(self, files: list[Any]):
        self.defaults: dict[str, Any] = {}
        self.declared: set[str] = set()
        self.locals: dict[str, Any] = {}
        auto: dict[str, Any] = {}
        chosen: dict[str, list[Any]] = {}
        for tf in files:
            if tf.is_vars:
                name = tf.path.rpartition("/")[2]
                target = auto if name in AUTO_VARS or name.endswith(".auto.tfvars") else None
                for block in tf.blocks:
                    for attr in block.attrs.values():
                        if target is not None:
                            target[attr.name] = attr.expr
                        else:
                            chosen.setdefault(attr.name, []).append(attr.expr)
                continue
            for block in tf.blocks:
                if block.type == "variable" and block.labels:
                    self.declared.add(block.labels[0])
                    if "default" in block.attrs:
                        self.defaults[block.labels[0]] = block.attrs["default"].expr
                elif block.type == "locals":
                    for attr in block.attrs.values():
                        self.locals[attr.name] = attr.expr
        self.variables: dict[str, Any] = {}
        for name in self.declared | set(auto) | set(chosen):
            base = auto.get(name, self.defaults.get(name))
            if base is None:
                self.variables[name] = UNKNOWN  # no default: a value given at plan time
                continue
            values = [self.evaluate(e, {}) for e in [base, *chosen.get(name, ())]]
            same = all(v == values[0] and v is not UNKNOWN for v in values)
            self.variables[name] = values[0] if same else UNKNOWN

    def evaluate(self, expr: Any, scope: dict[str, Any], depth: int = 0) -> Any:
        """The value of ``expr`` (strings, numbers, booleans, None, lists, dicts), UNKNOWN when
        it is not determined; a list or dict may hold UNKNOWN items."""
        if expr is None or depth > MAX_LOCAL_DEPTH * 4:
            return UNKNOWN
        kind = expr[0]
        if kind == "lit":
            return expr[1]
        if kind == "tpl":
            out = []
            for part in expr[1]:
                value = part if isinstance(part, str) else self.evaluate(part, scope, depth + 1)
                if value is UNKNOWN or isinstance(value, (list, dict)) or value is None:
                    return UNKNOWN
                out.append(str(value).lower() if isinstance(value, bool) else str(value))
            return "".join(out)
        if kind == "ref":
            return self._reference(expr[1], scope, depth)
        if kind == "tuple":
            return [self.evaluate(e, scope, depth + 1) for e in expr[1]]
        if kind == "object":
            out_map: dict[str, Any] = {}
            for key_expr, value_expr in expr[1]:
                key = self.evaluate(key_expr, scope, depth + 1)
                if not isinstance(key, (str, int)) or isinstance(key, bool):
                    return UNKNOWN  # a key not known: any label may be set
                out_map[str(key)] = self.evaluate(value_expr, scope, depth + 1)
            return out_map
        if kind == "call" and expr[1] in ("toset", "tolist", "tomap") and len(expr[2]) == 1:
            value = self.evaluate(expr[2][0], scope, depth + 1)
            if expr[1] == "toset" and isinstance(value, list) and all(isinstance(v, str) for v in value):
                return list(dict.fromkeys(value))
            return value
        return UNKNOWN

    def _reference(self, names: tuple[str, ...], scope: dict[str, Any], depth: int) -> Any:
        head = names[0]
        if head in ("var", "local") and len(names) >= 2:
            if head == "var":
                value = self.variables.get(names[1], UNKNOWN)
            else:
                if names[1] not in self.locals or depth > MAX_LOCAL_DEPTH * 4:
                    return UNKNOWN
                value = self.evaluate(self.locals[names[1]], {}, depth + 4)
            return value_at(value, names[2:])
        if head in ("each", "count") and len(names) >= 2 and names[:2] in (("each", "key"), ("each", "value"),
                                                                          ("count", "index")):
            return value_at(scope.get(".".join(names[:2]), UNKNOWN), names[2:])
        return UNKNOWN


def _written(expr: Any) -> str:
    """An attribute's value as a message shows it: a literal as written, else ``…``."""
    if isinstance(expr, tuple) and len(expr) == 2 and expr[0] == "lit":
        value = expr[1]
        return str(value).lower() if isinstance(value, bool) else f'"{value}"' if isinstance(value, str) else str(value)
    return "…"


def value_at(value: Any, path: tuple[str, ...]) -> Any:
    for step in path:
        if isinstance(value, dict):
            value = value.get(step, UNKNOWN)
        elif isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        else:
            return UNKNOWN
    return value


def value_text(value: Any) -> Value | None:
    """A string setting: None when not given (null), UNKNOWN when not a known scalar."""
    if value is None:
        return None
    if value is UNKNOWN or isinstance(value, (list, dict)):
        return UNKNOWN
    return str(value).lower() if isinstance(value, bool) else str(value)


def value_number(value: Any) -> int | Value | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return UNKNOWN
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 100:
        return int(value.strip())
    return UNKNOWN


def value_switch(value: Any) -> bool | Value:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return UNKNOWN


class _Reader:
    def __init__(self, cluster: Cluster):
        self.cluster = cluster

    def origin(self, path: str, block: Any, name: str) -> Origin | None:
        attr = block.attrs.get(name)
        return Origin(path, attr.span, attr.value_span, written=attr.expr) if attr is not None else None

    def instances(self, module: Module, block: Any) -> list[dict[str, Any]]:
        """The scopes of a resource's instances: one per ``count`` index or ``for_each`` item."""
        if "count" in block.attrs:
            count = value_number(module.evaluate(block.attrs["count"].expr, {}))
            if isinstance(count, int) and 0 <= count <= MAX_INSTANCES:
                return [{"count.index": i} for i in range(count)]
            return [{"count.index": UNKNOWN}]
        if "for_each" in block.attrs:
            items = module.evaluate(block.attrs["for_each"].expr, {})
            if isinstance(items, list) and len(items) <= MAX_INSTANCES and all(isinstance(i, str) for i in items):
                return [{"each.key": i, "each.value": i} for i in items]
            if isinstance(items, dict) and len(items) <= MAX_INSTANCES:
                return [{"each.key": k, "each.value": v} for k, v in items.items()]
            return [{"each.key": UNKNOWN, "each.value": UNKNOWN}]
        return [{}]

    def read(self, modules: dict[str, tuple[Module, list[Any]]]) -> None:
        clusters: dict[tuple[str, str], Any] = {}  # (folder, resource name) -> cluster name
        for folder, (module, files) in modules.items():
            for tf in files:
                for block in tf.blocks:
                    if block.type == "resource" and len(block.labels) == 2 and block.labels[0] == CLUSTER:
                        clusters[(folder, block.labels[1])] = self.read_cluster(module, tf.path, block)
        for folder, (module, files) in modules.items():
            for tf in files:
                for block in tf.blocks:
                    if block.type == "resource" and len(block.labels) == 2 and block.labels[0] == NODE_POOL:
                        self.read_pool(module, tf.path, block, clusters, folder)

    def read_cluster(self, module: Module, path: str, block: Any) -> Value:
        self.cluster.complete = True
        name = value_text(module.evaluate(block.attrs["name"].expr, {})) if "name" in block.attrs else None
        name = name if name is not None else UNKNOWN
        sku = value_text(module.evaluate(block.attrs["sku_tier"].expr, {})) if "sku_tier" in block.attrs else None
        nap = block.block("node_provisioning_profile")
        mode = value_text(module.evaluate(nap.attrs["mode"].expr, {})) if nap is not None and "mode" in nap.attrs else None
        sku_block = block.block("sku")  # azapi-style `sku { name = "Automatic" }`
        sku_name = (value_text(module.evaluate(sku_block.attrs["name"].expr, {}))
                    if sku_block is not None and "name" in sku_block.attrs else None)
        if sku is UNKNOWN or isinstance(sku, str) and sku.lower() == "automatic" or mode is UNKNOWN \
                or isinstance(mode, str) and mode.lower() == "auto" or sku_name is UNKNOWN \
                or isinstance(sku_name, str) and sku_name.lower() == "automatic":
            self.cluster.auto_provisioning = True
        if isinstance(sku, str) and sku.lower() == "automatic":
            attr = block.attrs["sku_tier"]
            self.cluster.modes.append(ClusterMode(AUTOMATIC, f'`sku_tier = "{sku}"`', Origin(path, attr.span, attr.value_span), name))
        elif isinstance(sku_name, str) and sku_name.lower() == "automatic":
            attr = sku_block.attrs["name"]
            self.cluster.modes.append(ClusterMode(AUTOMATIC, f'`sku {{ name = "{sku_name}" }}`',
                                                  Origin(path, attr.span, attr.value_span), name))
        elif isinstance(mode, str) and mode.lower() == "auto":
            attr = nap.attrs["mode"]
            self.cluster.modes.append(ClusterMode(NAP, f'`node_provisioning_profile {{ mode = "{mode}" }}`',
                                                  Origin(path, attr.span, attr.value_span), name))
        elif sku is not UNKNOWN and mode is not UNKNOWN and sku_name is not UNKNOWN:
            self.cluster.modes.append(ClusterMode(
                STANDARD, f"`{CLUSTER}` without AKS Automatic's sku or node auto-provisioning", Origin(path, block.span), name))
        profile = block.block("auto_scaler_profile")
        if profile is not None and "max_graceful_termination_sec" in profile.attrs:
            attr = profile.attrs["max_graceful_termination_sec"]
            value = value_text(module.evaluate(attr.expr, {}))
            self.cluster.profiles.setdefault(name, {})["max-graceful-termination-sec"] = ProfileSetting(
                UNKNOWN if value is None else value, Origin(path, attr.span, attr.value_span))
        storage = block.block("storage_profile")
        attr = storage.attrs.get("blob_driver_enabled") if storage is not None else None
        group = value_text(module.evaluate(block.attrs["resource_group_name"].expr, {})) \
            if "resource_group_name" in block.attrs else None
        self.cluster.set_blob_driver(name, group, ProfileSetting(  # azurerm's default: off
            value_switch(module.evaluate(attr.expr, {})) if attr is not None else False,
            Origin(path, attr.span, attr.value_span) if attr is not None else Origin(path, block.span)))
        automatic = any(isinstance(v, str) and v.lower() == "automatic" for v in (sku, sku_name))
        self.features(module, path, block, name, automatic)
        default = block.block("default_node_pool")
        if default is not None:
            pool = self.pool(module, path, default, {}, name, ("tf", path.rpartition("/")[0], block.labels[1]),
                             default_pool=True)
            pool.origin = Origin(path, default.span)
            pool.mode, pool.mode_origin = "System", None  # the default node pool is a System pool
            self.cluster.pools.append(pool)
        return name

    def features(self, module: Module, path: str, block: Any, name: Value, automatic: bool) -> None:
        """The cluster-wide features the resource sets (linter.model.cluster.features): azurerm's
        defaults are off (the OIDC issuer: unknown when not written, as AKS turns it on from
        Kubernetes 1.34); AKS Automatic preconfigures workload identity, the issuer and Cilium."""
        from mlops_lint.model.cluster.features import (AI_TOOLCHAIN, MANAGED_PROMETHEUS, NETWORK_POLICY, OIDC_ISSUER,
                                                   WORKLOAD_IDENTITY, FeatureSetting, policy_value)

        made = Origin(path, block.span)

        def record(feature: str, value: Any, owner: Any, attr_name: str | None) -> None:
            attr = owner.attrs.get(attr_name) if owner is not None and attr_name else None
            origin = Origin(path, attr.span, attr.value_span, written=attr.expr) if attr is not None else made
            how = f"`{attr_name} = {_written(attr.expr)}`" if attr is not None else f"`{CLUSTER}` without `{attr_name}`"
            self.cluster.features.append(FeatureSetting(feature, value, origin, name, True, attr is not None,
                                                        "terraform", how))

        for feature, attr_name, default in ((WORKLOAD_IDENTITY, "workload_identity_enabled", False),
                                            (OIDC_ISSUER, "oidc_issuer_enabled", UNKNOWN),
                                            (AI_TOOLCHAIN, "ai_toolchain_operator_enabled", False)):
            attr = block.attrs.get(attr_name)
            if attr is not None:
                value = value_switch(module.evaluate(attr.expr, {}))
            else:
                value = True if automatic and feature != AI_TOOLCHAIN else default
            record(feature, value, block, attr_name)
        metrics = block.block("monitor_metrics")  # managed Prometheus: on when the block is written
        self.cluster.features.append(FeatureSetting(
            MANAGED_PROMETHEUS, metrics is not None, Origin(path, metrics.span) if metrics is not None else made, name,
            True, metrics is not None, "terraform",
            "`monitor_metrics {}`" if metrics is not None else f"`{CLUSTER}` without `monitor_metrics`"))
        network = block.block("network_profile")

        def setting(attr_name: str) -> Any:
            attr = network.attrs.get(attr_name) if network is not None else None
            return value_text(module.evaluate(attr.expr, {})) if attr is not None else None

        plane = setting("network_data_plane")
        plane = plane if plane is not None else setting("ebpf_data_plane")
        value = "cilium" if automatic else policy_value(setting("network_policy"), plane, setting("network_plugin"))
        written = next((n for n in ("network_data_plane", "ebpf_data_plane") if isinstance(plane, str)
                        and plane.lower() == "cilium" and network is not None and n in network.attrs), "network_policy")
        if network is None:
            record(NETWORK_POLICY, value, None, "network_profile { network_policy }")
        else:
            record(NETWORK_POLICY, value, network, written)

    def read_pool(self, module: Module, path: str, block: Any, clusters: dict, folder: str) -> None:
        cluster_name: Value | None = None
        key: Any = None
        attr = block.attrs.get("kubernetes_cluster_id")
        if attr is not None and attr.expr[0] == "ref" and len(attr.expr[1]) >= 2 and attr.expr[1][0] == CLUSTER:
            resource = attr.expr[1][1]
            if (folder, resource) in clusters:
                cluster_name, key = clusters[(folder, resource)], ("tf", folder, resource)
        elif attr is not None:
            cluster_name, key = UNKNOWN, ("?", path, attr.value_span)
        for scope in self.instances(module, block):
            pool = self.pool(module, path, block, scope, cluster_name, key)
            pool.origin = Origin(path, block.span)
            self.cluster.pools.append(pool)

    def pool(self, module: Module, path: str, block: Any, scope: dict, cluster: Value | None, key: Any,
             default_pool: bool = False) -> NodePool:
        def get(name: str) -> Any:
            attr = block.attrs.get(name)
            return module.evaluate(attr.expr, scope) if attr is not None else None

        name = value_text(get("name"))
        written = block.attrs.get("name")
        display = name if isinstance(name, str) and name else "?"
        if not isinstance(name, str) and written is not None:
            display = f"{block.labels[1] if len(block.labels) > 1 else 'default_node_pool'}.name"
        pool = NodePool(name=name if isinstance(name, str) and name else UNKNOWN, display=display, cluster=cluster,
                        source="terraform", path=path, cluster_key=key, mode="System" if default_pool else "User")
        pool.vm_size = value_text(get("vm_size"))
        pool.vm_origin = self.origin(path, block, "vm_size")
        if not default_pool and "mode" in block.attrs:
            mode = value_text(get("mode"))
            pool.mode = mode if mode else UNKNOWN
            pool.mode_origin = self.origin(path, block, "mode")
        labels = get("node_labels")
        if labels is not None:
            if isinstance(labels, dict):
                pool.labels = {k: (v if isinstance(v, str) else value_text(v) if v is not None else UNKNOWN)
                               for k, v in labels.items()}
                pool.labels = {k: (UNKNOWN if v is None else v) for k, v in pool.labels.items()}
            else:
                pool.labels_open = True
            pool.labels_origin = self.origin(path, block, "node_labels")
        taints = get("node_taints")
        if taints is not None:
            set_taints(pool, taints, self.origin(path, block, "node_taints"))
        if default_pool and value_switch(get("only_critical_addons_enabled")) is True:
            pool.taints.append(PoolTaint(CRITICAL_TAINT, self.origin(path, block, "only_critical_addons_enabled")))
        elif default_pool and value_switch(get("only_critical_addons_enabled")) is UNKNOWN:
            pool.taints_open = True
        for attribute in ("node_count", "min_count", "max_count"):
            if attribute in block.attrs:
                setattr(pool, attribute, value_number(get(attribute)))
                pool.count_origin[attribute] = self.origin(path, block, attribute)  # type: ignore[assignment]
        for switch in ("auto_scaling_enabled", "enable_auto_scaling"):
            if switch in block.attrs:
                pool.autoscaler = value_switch(get(switch))
                pool.autoscaler_origin = self.origin(path, block, switch)
        priority = value_text(get("priority"))
        pool.spot = UNKNOWN if priority is UNKNOWN else isinstance(priority, str) and priority.lower() == "spot"
        if "max_pods" in block.attrs:
            pool.max_pods = value_number(get("max_pods"))
        if "os_type" in block.attrs:
            os_type = value_text(get("os_type"))
            pool.os_type = os_type if os_type else UNKNOWN
        if "gpu_instance" in block.attrs:
            pool.gpu_instance_profile = value_text(get("gpu_instance"))
        if "gpu_driver" in block.attrs:
            pool.gpu_driver = value_text(get("gpu_driver"))
            pool.gpu_driver_origin = self.origin(path, block, "gpu_driver")
        return pool


def read_terraform(cluster: Cluster, files: Iterable[Any]) -> None:
    """Add the pools of the project's Terraform files (in path order) to ``cluster``."""
    by_folder: dict[str, list[Any]] = {}
    for tf in files:
        by_folder.setdefault(tf.folder, []).append(tf)
    if not any(b.type == "resource" and b.labels and b.labels[0] in (CLUSTER, NODE_POOL)
               for files_ in by_folder.values() for tf in files_ for b in tf.blocks):
        return
    modules = {folder: (Module(files_), files_) for folder, files_ in by_folder.items()}
    _Reader(cluster).read(modules)


def hint(pool: NodePool, what: str, value: str) -> str:
    """A setting written in the syntax of the source that defines ``pool``: ``--node-taints
    sku=gpu:NoSchedule`` for a script, ``node_taints = ["sku=gpu:NoSchedule"]`` for Terraform,
    ``nodeTaints: ['sku=gpu:NoSchedule']`` for Bicep, ``"nodeTaints": ["sku=gpu:NoSchedule"]`` for ARM,
    ``taints: ["sku=gpu:NoSchedule"]`` for a config ``node-pools`` entry."""
    if pool.source == "terraform":
        if what == "taints":
            return f'node_taints = ["{value}"]'
        if what == "labels":
            pairs = ", ".join(f'"{k}" = "{v}"' for k, _, v in (p.partition("=") for p in value.split()))
            return f"node_labels = {{ {pairs} }}"
    if pool.source == "arm":  # an ARM template: JSON
        if what == "taints":
            return f'"nodeTaints": ["{value}"]'
        if what == "labels":
            pairs = ", ".join(f'"{k}": "{v}"' for k, _, v in (p.partition("=") for p in value.split()))
            return f'"nodeLabels": {{{pairs}}}'
    if pool.source == "bicep":
        if what == "taints":
            return f"nodeTaints: ['{value}']"
        if what == "labels":
            pairs = ", ".join(f"'{k}': '{v}'" for k, _, v in (p.partition("=") for p in value.split()))
            return f"nodeLabels: {{ {pairs} }}"
    if pool.source == "config":  # a node-pools entry of .mlops-lint.yaml
        if what == "taints":
            return f'taints: ["{value}"]'
        if what == "labels":
            pairs = ", ".join(f"{k}: {v}" for k, _, v in (p.partition("=") for p in value.split()))
            return f"labels: {{{pairs}}}"
    return f"--node-taints {value}" if what == "taints" else f"--labels {value}"

