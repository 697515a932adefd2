"""Node pools from Bicep and ARM templates: ``Microsoft.ContainerService/managedClusters`` and its ``agentPools``.

ARM templates (``*.json``, :mod:`linter.sources.arm`) come as the same blocks and expressions
and are read alike; their pools' source is ``arm`` (hints in JSON). A template Bicep compiled
(``metadata._generator.name: bicep``) beside the ``.bicep`` of the same name is not read twice.

The project's ``*.bicep`` files (read by :mod:`linter.sources.bicep`) are grouped by folder. In
each:

* a ``managedClusters`` resource is a cluster: each item of ``properties.agentPoolProfiles`` (a
  list, or a ``[for … in …: {…}]`` over a known collection) is a pool (the first is the System
  pool unless its ``mode`` says otherwise; profiles written another way are not read, and the
  cluster then does not count as describing all its pools), its
  ``autoScalerProfile['max-graceful-termination-sec']`` sets the autoscaler profile, and
  ``nodeProvisioningProfile.mode: 'Auto'`` (or ``sku.name: 'Automatic'``) is node
  auto-provisioning. A cluster in the project makes its pools all the cluster has;
* a ``managedClusters/agentPools`` resource is a pool of the cluster its ``parent`` names (a
  cluster declared ``existing`` was made elsewhere: the project does not describe all its pools).

Pool settings: ``vmSize``, ``count``, ``enableAutoScaling``, ``minCount``, ``maxCount``,
``maxPods``, ``nodeTaints``, ``nodeLabels``, ``mode``, ``osType``, ``scaleSetPriority``,
``gpuInstanceProfile``, ``gpuProfile.driver``. Values: literals, a ``param``'s default (a
``.bicepparam`` beside it is a parameters file a deployment may or may not use: a value it gives
differently makes the parameter unknown), a ``var``, and ``'${…}'`` interpolation of those;
anything else is UNKNOWN, never guessed. Origins are the property's key in the ``.bicep`` file,
with the value's span.

ARM ``copy`` loops: an agentPools resource's ``copy`` with a known ``count`` (a literal, a
parameter's default, a variable; at most ``MAX_INSTANCES``) is one pool per index, its
``copyIndex()`` that index (0 makes none); a cluster's ``properties.copy`` loop named
``agentPoolProfiles`` makes the profiles from its ``input`` the same way. An unknown count is one
pool standing for all of them, whose ``copyIndex()`` (and so its name) is unknown, never guessed.
Instances share their attributes' positions, as Terraform's ``count`` instances do. Bicep
resource loops over agent pools likewise: ``[for pool in pools: {…}]``, ``[for (pool, i) in …]``
and ``[for i in range(0, n): {…}]`` over a known collection are one pool per item, the loop's
variables bound in each; a filtered loop (``: if (…)``) or an unknown collection is one pool
standing for all.
"""

from __future__ import annotations

from typing import Any, Iterable

from msgspec.structs import replace

from mlops_lint.model.cluster.from_terraform import MAX_INSTANCES, Module, value_at, value_number, value_switch, value_text
from mlops_lint.model.cluster.pools import (AUTOMATIC, NAP, STANDARD, Cluster, ClusterMode, NodePool, Origin, ProfileSetting,
                                        set_taints)
from mlops_lint.model.unknown import UNKNOWN, Value
from mlops_lint.sources.terraform import TfBlock

CLUSTER = "Microsoft.ContainerService/managedClusters"
AGENT_POOL = "Microsoft.ContainerService/managedClusters/agentPools"


class BicepModule(Module):
    """A folder's ``param``\\ s and ``var``\\ s: a bare name is a parameter or a variable;
    ``range(start, count)`` of known integers is its list (at most MAX_INSTANCES items)."""

    def evaluate(self, expr: Any, scope: dict[str, Any], depth: int = 0) -> Any:
        if isinstance(expr, tuple) and len(expr) == 3 and expr[0] == "call" and expr[1] == "range" and len(expr[2]) == 2:
            start, count = (self.evaluate(arg, scope, depth + 1) for arg in expr[2])
            if all(isinstance(v, int) and not isinstance(v, bool) for v in (start, count)) \
                    and 0 <= count <= MAX_INSTANCES and abs(start) < 1 << 31:
                return list(range(start, start + count))
            return UNKNOWN
        return super().evaluate(expr, scope, depth)

    def _reference(self, names: tuple[str, ...], scope: dict[str, Any], depth: int) -> Any:
        from mlops_lint.model.cluster.from_terraform import MAX_LOCAL_DEPTH, value_at

        head = names[0]
        if head in self.variables:
            return value_at(self.variables[head], names[1:])
        if head in self.locals and depth <= MAX_LOCAL_DEPTH * 4:
            return value_at(self.evaluate(self.locals[head], {}, depth + 4), names[1:])
        return UNKNOWN


def _field(obj: Any, key: str) -> tuple[Any, Any, Any] | None:
    """(expression, key span, value span) of ``key`` in an object expression."""
    if obj is None or obj[0] != "object" or len(obj) < 3:
        return None
    for (k, value), (key_span, value_span) in zip(obj[1], obj[2]):
        if k == ("lit", key):
            return value, key_span, value_span
    return None


class _Reader:
    def __init__(self, cluster: Cluster, module: BicepModule):
        self.cluster, self.module = cluster, module
        self.source = "bicep"  # or "arm": the file being read (a fix hint's syntax, a setting's name)

    def value(self, obj: Any, key: str) -> Any:
        found = _field(obj, key)
        return self.module.evaluate(found[0], {}) if found is not None else None

    def origin(self, path: str, obj: Any, key: str) -> Origin | None:
        found = _field(obj, key)
        return Origin(path, found[1], found[2], written=found[0]) if found is not None else None

    def read_cluster(self, path: str, block: Any) -> Value:
        name = value_text(self.module.evaluate(block.attrs["name"].expr, {})) if "name" in block.attrs else None
        name = name if name is not None else UNKNOWN
        properties = block.attrs["properties"].expr if "properties" in block.attrs else None
        sku = value_text(self.value(block.attrs["sku"].expr, "name")) if "sku" in block.attrs else None
        nap = _field(properties, "nodeProvisioningProfile")
        mode = value_text(self.value(nap[0], "mode")) if nap is not None else None
        if sku is UNKNOWN or isinstance(sku, str) and sku.lower() == "automatic" or mode is UNKNOWN \
                or isinstance(mode, str) and mode.lower() == "auto":
            self.cluster.auto_provisioning = True
        json = self.source == "arm"
        if isinstance(sku, str) and sku.lower() == "automatic":
            how = f'`"sku": {{"name": "{sku}"}}`' if json else f"`sku: {{ name: '{sku}' }}`"
            self.cluster.modes.append(ClusterMode(AUTOMATIC, how, self.origin(path, block.attrs["sku"].expr, "name"), name))
        elif isinstance(mode, str) and mode.lower() == "auto":
            how = (f'`"nodeProvisioningProfile": {{"mode": "{mode}"}}`' if json
                   else f"`nodeProvisioningProfile: {{ mode: '{mode}' }}`")
            self.cluster.modes.append(ClusterMode(NAP, how, self.origin(path, nap[0], "mode"), name))
        elif sku is not UNKNOWN and mode is not UNKNOWN:
            self.cluster.modes.append(ClusterMode(
                STANDARD, "`managedClusters` without AKS Automatic's sku or node auto-provisioning",
                Origin(path, block.span), name))
        profile = _field(properties, "autoScalerProfile")
        grace = _field(profile[0], "max-graceful-termination-sec") if profile is not None else None
        if grace is not None:
            value = value_text(self.module.evaluate(grace[0], {}))
            self.cluster.profiles.setdefault(name, {})["max-graceful-termination-sec"] = ProfileSetting(
                UNKNOWN if value is None else value, Origin(path, grace[1], grace[2]))
        self.cluster.set_blob_driver(name, None, self.blob_driver(path, block, properties))  # the deployment's group
        self.features(path, block, properties, name,
                      automatic=isinstance(sku, str) and sku.lower() == "automatic")
        items, known = self.profiles(properties)
        if known:  # the cluster describes all its pools (with its agentPools resources)
            self.cluster.complete = True
        if items:
            for position, item in enumerate(items):
                if item[0] != "object":
                    continue
                pool = self.pool(path, item, name, ("bicep", path, block.labels[1]), first=position == 0)
                pool.origin = Origin(path, (_field(item, "name") or (None, block.span))[1])
                self.cluster.pools.append(pool)
        return name

    def blob_driver(self, path: str, block: Any, properties: Any) -> ProfileSetting:
        """``properties.storageProfile.blobCSIDriver.enabled`` (absent: off, the API's default),
        at the deepest key written."""
        origin = Origin(path, block.span)
        value: Any = self.module.evaluate(properties, {}) if properties is not None else {}
        written = properties
        for key in ("storageProfile", "blobCSIDriver", "enabled"):
            found = _field(written, key)
            if found is not None:
                origin, written = Origin(path, found[1], found[2]), found[0]
            else:
                written = None
            if not isinstance(value, dict):
                return ProfileSetting(UNKNOWN, origin)
            if key not in value:
                return ProfileSetting(False, origin)
            value = value[key]
        return ProfileSetting(value_switch(value), origin)

    def nested(self, path: str, block: Any, properties: Any, keys: tuple[str, ...]) -> tuple[Any, Origin | None]:
        """The value at ``properties.<keys>`` (None: not written; UNKNOWN: a level not known) and
        where it is written (None: not written)."""
        value: Any = self.module.evaluate(properties, {}) if properties is not None else {}
        written = properties
        origin = None
        for key in keys:
            found = _field(written, key)
            written = found[0] if found is not None else None
            if found is not None and key == keys[-1]:
                origin = Origin(path, found[1], found[2], written=found[0])
            if not isinstance(value, dict):
                return (None if value is None else UNKNOWN), origin
            if key not in value:
                return None, None
            value = value[key]
        return value, origin

    def features(self, path: str, block: Any, properties: Any, name: Value, *, automatic: bool) -> None:
        """The cluster-wide features the resource sets (linter.model.cluster.features): off when not
        written (the OIDC issuer: unknown, on by default from Kubernetes 1.34); AKS Automatic
        preconfigures workload identity, the issuer and Cilium."""
        from mlops_lint.model.cluster.features import (AI_TOOLCHAIN, MANAGED_PROMETHEUS, NETWORK_POLICY, OIDC_ISSUER,
                                                   WORKLOAD_IDENTITY, FeatureSetting, policy_value, switch_value)

        made = Origin(path, block.span)

        def record(feature: str, value: Any, origin: Origin | None, written: str) -> None:
            if origin is not None:
                how = f"`{written}: {_shown(origin.written, self.source == 'arm')}`"
            else:
                how = f"`managedClusters` without `{written}`"
            self.cluster.features.append(FeatureSetting(feature, value, origin or made, name, True, origin is not None,
                                                        self.source, how))

        for feature, keys, default in ((WORKLOAD_IDENTITY, ("securityProfile", "workloadIdentity", "enabled"), False),
                                       (OIDC_ISSUER, ("oidcIssuerProfile", "enabled"), UNKNOWN),
                                       (AI_TOOLCHAIN, ("aiToolchainOperatorProfile", "enabled"), False),
                                       (MANAGED_PROMETHEUS, ("azureMonitorProfile", "metrics", "enabled"), False)):
            value, origin = self.nested(path, block, properties, keys)
            if value is None:
                value = True if automatic and feature not in (AI_TOOLCHAIN, MANAGED_PROMETHEUS) else default
            else:
                value = switch_value(value)
            record(feature, value, origin, ".".join(keys))
        policy, policy_origin = self.nested(path, block, properties, ("networkProfile", "networkPolicy"))
        plane, plane_origin = self.nested(path, block, properties, ("networkProfile", "networkDataplane"))
        plugin, _ = self.nested(path, block, properties, ("networkProfile", "networkPlugin"))
        value = "cilium" if automatic else policy_value(value_text(policy), value_text(plane), value_text(plugin))
        if value == "cilium" and plane_origin is not None and isinstance(plane, str) and plane.lower() == "cilium":
            record(NETWORK_POLICY, value, plane_origin, "networkProfile.networkDataplane")
        else:
            record(NETWORK_POLICY, value, policy_origin, "networkProfile.networkPolicy")

    def profiles(self, properties: Any) -> tuple[tuple, bool]:
        """The cluster's ``agentPoolProfiles`` items (object expressions), and whether they are
        all the profiles it has: a list; a Bicep ``[for … in …: {…}]`` (one item per element of
        a known collection, its variables bound; else one standing for all); an ARM property
        loop. Profiles written otherwise (a parameter's array, an item that is not an object
        literal) are not read, and the cluster then does not count as describing every pool."""
        found = _field(properties, "agentPoolProfiles")
        if found is None:
            return (self.property_copy(properties, "agentPoolProfiles") if self.source == "arm" else ()), True
        written = found[0]
        if written[0] == "tuple":
            return written[1], all(item[0] == "object" for item in written[1])
        if written[0] == "forexpr" and len(written) == 3:
            loop, body = written[1], written[2]
            instances = self.loop_values(loop)
            if instances is None:
                instances = [{name: UNKNOWN for name in loop[1:3] if name}] if loop[0] == "for" else []
            return tuple(bind(body, values) for values in instances), body[0] == "object"
        return (), False

    def copy_indexes(self, copy: Any) -> list[int] | None:
        """The indexes of a ``copy`` loop whose ``count`` is known (at most MAX_INSTANCES of
        them), else None: the loop's pools are one pool standing for all, its copyIndex unknown."""
        count = value_number(self.value(copy, "count")) if copy is not None and copy[0] == "object" else UNKNOWN
        if isinstance(count, int) and 0 <= count <= MAX_INSTANCES:
            return list(range(count))
        return None

    def property_copy(self, properties: Any, name: str) -> tuple:
        """The items an ARM property loop (``properties.copy[]`` named ``name``) makes: its
        ``input`` once per index, ``copyIndex('name')`` replaced by the index; the input once,
        as written, when the count is not known."""
        loops = _field(properties, "copy")
        if loops is None or loops[0][0] != "tuple":
            return ()
        for loop in loops[0][1]:
            if value_text(self.value(loop, "name")) != name:
                continue
            written = _field(loop, "input")
            if written is None or written[0][0] != "object":
                return ()
            indexes = self.copy_indexes(loop)
            if indexes is None:
                return (written[0],)
            return tuple(substitute(written[0], {name.lower()}, index) for index in indexes)
        return ()

    def loop_values(self, loop: Any) -> list[dict[str, Any]] | None:
        """The loop variables of each instance of a Bicep resource loop over a known collection
        (at most MAX_INSTANCES items), else None (a filter, an unknown collection)."""
        if not (isinstance(loop, tuple) and len(loop) == 5 and loop[0] == "for") or loop[4]:
            return None
        _, item, index, collection, _ = loop
        items = self.module.evaluate(collection, {})
        if not isinstance(items, list) or len(items) > MAX_INSTANCES:
            return None
        return [{item: value, **({index: position} if index else {})} for position, value in enumerate(items)]

    def read_pool(self, path: str, block: Any, clusters: dict) -> None:
        """An agentPools resource's pool; a Bicep resource loop over a known collection, one pool
        per item (its loop variables bound); an ARM resource with a ``copy`` loop of known count,
        one pool per index (``copyIndex()`` replaced by it), none for a count of 0. An unknown
        loop is one pool standing for all, its loop variables unknown."""
        loop = block.attrs.get("[for]")
        if loop is not None:
            instances = self.loop_values(loop.expr)
            if instances is None:
                names = loop.expr[1:3] if isinstance(loop.expr, tuple) and loop.expr[0] == "for" else ()
                instances = [{name: UNKNOWN for name in names if name}]
            for values in instances:
                self.read_one_pool(path, TfBlock(block.type, block.labels, block.span,
                                                 {key: replace(attr, expr=bind(attr.expr, values))
                                                  for key, attr in block.attrs.items() if key != "[for]"}), clusters)
            return
        copy = block.attrs.get("copy") if self.source == "arm" else None
        indexes = self.copy_indexes(copy.expr) if copy is not None else None
        if indexes is None:
            self.read_one_pool(path, block, clusters)
            return
        loop = value_text(self.value(copy.expr, "name"))
        names = {None} | ({loop.lower()} if isinstance(loop, str) else set())
        for index in indexes:
            instance = TfBlock(block.type, block.labels, block.span,
                               {key: replace(attr, expr=substitute(attr.expr, names, index))
                                for key, attr in block.attrs.items()})
            self.read_one_pool(path, instance, clusters)

    def read_one_pool(self, path: str, block: Any, clusters: dict) -> None:
        parent = block.attrs.get("parent")
        cluster_name: Value | None = None
        key: Any = None
        if parent is not None and parent.expr[0] == "ref" and len(parent.expr[1]) == 1 \
                and (path.rpartition("/")[0], parent.expr[1][0]) in clusters:
            symbol = parent.expr[1][0]
            cluster_name, key = clusters[(path.rpartition("/")[0], symbol)], ("bicep", path, symbol)
        elif parent is not None:
            cluster_name, key = UNKNOWN, ("?", path, parent.value_span)
        properties = block.attrs["properties"].expr if "properties" in block.attrs else ("object", (), ())
        name = block.attrs.get("name")
        pool = self.pool(path, properties, cluster_name, key, first=False,
                         name=self.module.evaluate(name.expr, {}) if name is not None else None)
        pool.origin = Origin(path, block.span)
        self.cluster.pools.append(pool)

    def pool(self, path: str, obj: Any, cluster: Value | None, key: Any, *, first: bool, name: Any = None) -> NodePool:
        name = value_text(name if name is not None else self.value(obj, "name"))
        pool = NodePool(name=name if isinstance(name, str) and name else UNKNOWN,
                        display=name if isinstance(name, str) and name else "?", cluster=cluster,
                        source=self.source, path=path, cluster_key=key, mode="System" if first else "User")
        pool.vm_size, pool.vm_origin = value_text(self.value(obj, "vmSize")), self.origin(path, obj, "vmSize")
        if _field(obj, "mode") is not None:
            mode = value_text(self.value(obj, "mode"))
            pool.mode, pool.mode_origin = (mode if mode else UNKNOWN), self.origin(path, obj, "mode")
        labels = self.value(obj, "nodeLabels")
        if labels is not None:
            if isinstance(labels, dict):
                pool.labels = {k: (v if isinstance(v, str) else UNKNOWN) for k, v in labels.items()}
            else:
                pool.labels_open = True
            pool.labels_origin = self.origin(path, obj, "nodeLabels")
        taints = self.value(obj, "nodeTaints")
        if taints is not None:
            set_taints(pool, taints, self.origin(path, obj, "nodeTaints"))
        for field, attribute in (("count", "node_count"), ("minCount", "min_count"), ("maxCount", "max_count")):
            if _field(obj, field) is not None:
                setattr(pool, attribute, value_number(self.value(obj, field)))
                pool.count_origin[attribute] = self.origin(path, obj, field)  # type: ignore[assignment]
        if _field(obj, "enableAutoScaling") is not None:
            pool.autoscaler = value_switch(self.value(obj, "enableAutoScaling"))
            pool.autoscaler_origin = self.origin(path, obj, "enableAutoScaling")
        priority = value_text(self.value(obj, "scaleSetPriority"))
        pool.spot = UNKNOWN if priority is UNKNOWN else isinstance(priority, str) and priority.lower() == "spot"
        if _field(obj, "maxPods") is not None:
            pool.max_pods = value_number(self.value(obj, "maxPods"))
        if _field(obj, "osType") is not None:
            os_type = value_text(self.value(obj, "osType"))
            pool.os_type = os_type if os_type else UNKNOWN
        if _field(obj, "gpuInstanceProfile") is not None:
            pool.gpu_instance_profile = value_text(self.value(obj, "gpuInstanceProfile"))
        gpu = _field(obj, "gpuProfile")
        if gpu is not None:
            pool.gpu_driver = value_text(self.value(gpu[0], "driver"))
            pool.gpu_driver_origin = self.origin(path, gpu[0], "driver") or self.origin(path, obj, "gpuProfile")
        return pool


def _shown(written: Any, json: bool) -> str:
    """A property's value as a message shows it: a literal as written, else ``…``."""
    if isinstance(written, tuple) and len(written) == 2 and written[0] == "lit":
        value = written[1]
        if isinstance(value, bool):
            return str(value).lower()
        if isinstance(value, str):
            return f'"{value}"' if json else f"'{value}'"
        return str(value)
    return "…"


def rewrite(expr: Any, leaf: Any) -> Any:
    """``expr`` with every subexpression for which ``leaf`` gives a replacement replaced."""
    new = leaf(expr)
    if new is not None:
        return new
    kind = expr[0] if isinstance(expr, tuple) and expr else None
    if kind == "tpl":
        return ("tpl", tuple(part if isinstance(part, str) else rewrite(part, leaf) for part in expr[1]))
    if kind == "tuple":
        return ("tuple", tuple(rewrite(item, leaf) for item in expr[1]))
    if kind == "object":
        return ("object", tuple((key, rewrite(value, leaf)) for key, value in expr[1]), *expr[2:])
    if kind == "call":
        return ("call", expr[1], tuple(rewrite(arg, leaf) for arg in expr[2]))
    return expr


def substitute(expr: Any, loops: set, index: int) -> Any:
    """``expr`` with each ARM ``copyIndex(…)`` of the given loops (names in lower case; None: the
    resource's own loop, ``copyIndex()``) replaced by ``index`` plus its offset."""
    def leaf(node: Any) -> Any:
        if isinstance(node, tuple) and node and node[0] == "copyindex":
            loop = node[1].lower() if isinstance(node[1], str) else None
            return ("lit", index + node[2]) if loop in loops else node
        return None
    return rewrite(expr, leaf)


def bind(expr: Any, values: dict[str, Any]) -> Any:
    """``expr`` with each reference to a Bicep loop's variables (``pool``, ``pool.vmSize``, ``i``)
    replaced by its value in this instance (UNKNOWN when not known)."""
    def leaf(node: Any) -> Any:
        if isinstance(node, tuple) and len(node) == 2 and node[0] == "ref" and node[1] and node[1][0] in values:
            return ("lit", value_at(values[node[1][0]], node[1][1:]))
        return None
    return rewrite(expr, leaf)


def _compiled(arm: Any, paths: set[str]) -> bool:
    """An ARM template Bicep generated beside its ``.bicep`` source (``main.json`` of ``main.bicep``)."""
    return arm.generator.lower() == "bicep" and arm.path.rpartition(".")[0] + ".bicep" in paths


def read_bicep(cluster: Cluster, files: Iterable[Any]) -> None:
    """Add the pools of the project's Bicep files and ARM templates (in path order) to ``cluster``."""
    from mlops_lint.sources.arm import ArmFile

    files = list(files)
    paths = {bicep.path for bicep in files}
    by_folder: dict[str, list[Any]] = {}
    for bicep in files:
        if isinstance(bicep, ArmFile) and _compiled(bicep, paths):
            continue  # the .bicep beside it is read
        by_folder.setdefault(bicep.folder, []).append(bicep)
    clusters: dict[tuple[str, str], Any] = {}
    readers = {folder: _Reader(cluster, BicepModule(items)) for folder, items in by_folder.items()}
    for folder, items in by_folder.items():
        for bicep in items:
            readers[folder].source = "arm" if isinstance(bicep, ArmFile) else "bicep"
            for block in bicep.blocks:
                if block.type == "resource" and block.labels and block.labels[0] == CLUSTER:
                    clusters[(folder, block.labels[1])] = readers[folder].read_cluster(bicep.path, block)
                elif block.type == "existing" and block.labels and block.labels[0] == CLUSTER:
                    name = block.attrs.get("name")  # a cluster made elsewhere: its other pools are not here
                    value = value_text(readers[folder].module.evaluate(name.expr, {})) if name is not None else None
                    clusters[(folder, block.labels[1])] = value if value is not None else UNKNOWN
    for folder, items in by_folder.items():
        for bicep in items:
            for block in bicep.blocks:
                if block.type == "resource" and block.labels and block.labels[0] == AGENT_POOL:
                    readers[folder].source = "arm" if isinstance(bicep, ArmFile) else "bicep"
                    readers[folder].read_pool(bicep.path, block, clusters)
