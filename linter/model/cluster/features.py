"""Cluster-wide features the project's cluster definitions switch on or leave off.

The readers (:mod:`.from_az`, :mod:`.from_terraform`, :mod:`.from_bicep`) record, for every
command or resource that makes or changes a cluster, what it says of each feature below as a
:class:`FeatureSetting`: its value, where it is said (the flag or attribute, else the command or
resource that makes the cluster, where the source's default applies) and the syntax a hint
should use. The rules that join a feature with the manifests that need it (AKS008, AKS009,
KAI006) ask :func:`clusters_without` which clusters have it off by every setting that may apply.

| feature | `az aks create/update` | Terraform `azurerm_kubernetes_cluster` | Bicep / ARM `managedClusters` | off by default |
|---|---|---|---|---|
| :data:`WORKLOAD_IDENTITY` | `--enable-workload-identity` / `--disable-workload-identity` | `workload_identity_enabled` | `securityProfile.workloadIdentity.enabled` | yes |
| :data:`OIDC_ISSUER` | `--enable-oidc-issuer` (no way to turn it off) | `oidc_issuer_enabled` | `oidcIssuerProfile.enabled` | only when written off: AKS turns it on by default on clusters created with Kubernetes 1.34 or later, so a definition that does not say is unknown |
| :data:`NETWORK_POLICY` | `--network-policy azure\\|calico\\|cilium\\|none`, `--network-dataplane cilium` | `network_profile { network_policy, network_data_plane, ebpf_data_plane }` | `networkProfile.networkPolicy`, `networkProfile.networkDataplane` | yes (no engine); the Cilium dataplane enforces policies itself, and with the network plugin `none` (bring your own CNI) the engine is unknown |
| :data:`AI_TOOLCHAIN` | `--enable-ai-toolchain-operator` / `--disable-ai-toolchain-operator` | `ai_toolchain_operator_enabled` | `aiToolchainOperatorProfile.enabled` | yes |
| :data:`MANAGED_PROMETHEUS` | `--enable-azure-monitor-metrics` / `--disable-azure-monitor-metrics` | a `monitor_metrics` block | `azureMonitorProfile.metrics.enabled` | yes |

A cluster made as AKS Automatic (``--sku automatic`` and its IaC twins) has workload identity,
the OIDC issuer and Cilium's policy engine preconfigured: those are recorded on. A value a source
does not determine (a variable without a default, words of unknown value that may hold the
flag) is UNKNOWN, never guessed; a rule judges a cluster only when every setting is known off.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from msgspec import Struct

from mlops_lint.model.cluster.pools import Origin
from mlops_lint.model.unknown import UNKNOWN, Value

WORKLOAD_IDENTITY = "workload-identity"
OIDC_ISSUER = "oidc-issuer"
NETWORK_POLICY = "network-policy"
AI_TOOLCHAIN = "ai-toolchain-operator"
MANAGED_PROMETHEUS = "azure-monitor-metrics"  # Azure Monitor managed Prometheus (OBS005)

# the network policy engines AKS runs (``--network-policy``); ``none`` is no engine
POLICY_ENGINES = ("azure", "calico", "cilium")


class FeatureSetting(Struct, frozen=True):
    """What one command or resource says of one feature of one cluster.

    ``value``: True (on), False (off) or UNKNOWN; for :data:`NETWORK_POLICY` the engine's name
    (``azure``, ``calico``, ``cilium``) when on. ``creates``: said by what makes the cluster
    (``az aks create``, the resource), where an unwritten feature has the source's default;
    ``written``: the flag or attribute is in the file (``origin`` is then where, else the command
    or resource). ``source`` (``script``, ``terraform``, ``bicep``, ``arm``) is the syntax a hint uses;
    ``how`` what the source wrote, for messages."""

    feature: str
    value: Any
    origin: Origin
    cluster: Value | None
    creates: bool
    written: bool
    source: str
    how: str = ""

    @property
    def on(self) -> Any:
        """True, False or UNKNOWN."""
        if self.value is UNKNOWN or isinstance(self.value, bool):
            return self.value
        return bool(self.value)


def _loose(name: Value | None) -> bool:
    """A cluster name that may be any cluster's: not given, or not determined."""
    return name is None or name is UNKNOWN


def clusters_without(settings: Iterable[FeatureSetting], feature: str,
                     applies: Callable[[FeatureSetting], bool] = lambda s: True) -> list[tuple[FeatureSetting, list[FeatureSetting]]]:
    """The clusters the project defines on which ``feature`` is off by every setting that may apply
    to them (its own name's, and every setting whose cluster name is not known): (where to report,
    those settings), in reading order. A cluster is reported at what creates it, else (only updated
    here) at its first setting written off. ``applies`` narrows the settings counted (a rule's
    project unit): a setting it rejects neither turns a cluster on nor is reported. Linear in the
    settings: projects with thousands of clusters exist."""
    chosen = [s for s in settings if s.feature == feature and applies(s)]
    named: dict[Any, list[FeatureSetting]] = {}
    loose: list[FeatureSetting] = []
    for setting in chosen:
        (loose if _loose(setting.cluster) else named.setdefault(setting.cluster, [])).append(setting)
    loose_off = all(s.on is False for s in loose)
    named_off = {name: all(s.on is False for s in group) for name, group in named.items()}
    every_off = loose_off and all(named_off.values())
    anchors = [s for s in chosen if s.creates]
    anchored = {a.cluster for a in anchors if not _loose(a.cluster)}
    any_loose = any(_loose(a.cluster) for a in anchors)
    for setting in chosen:  # a cluster only updated here: where it is written off, once
        if setting.creates or not setting.written or setting.on is not False:
            continue
        if any_loose or (_loose(setting.cluster) and anchors) or setting.cluster in anchored:
            continue  # an anchor may be that cluster
        anchors.append(setting)
        if _loose(setting.cluster):
            any_loose = True
        else:
            anchored.add(setting.cluster)
    found = []
    shared: dict[Any, list[FeatureSetting]] = {}
    position = {id(s): n for n, s in enumerate(chosen)}
    for anchor in sorted(anchors, key=lambda a: position[id(a)]):
        if _loose(anchor.cluster):
            if every_off:
                found.append((anchor, chosen))
        elif named_off[anchor.cluster] and loose_off:
            own = shared.get(anchor.cluster)
            if own is None:
                own = shared[anchor.cluster] = named[anchor.cluster] + loose
            found.append((anchor, own))
    return found


def hint_for(setting: FeatureSetting, script: str, terraform: str, bicep: str, arm: str) -> str:
    """The text of a hint in the syntax of the source that defines the cluster."""
    return {"terraform": terraform, "bicep": bicep, "arm": arm}.get(setting.source, script)


def cluster_name(setting: FeatureSetting) -> str:
    """The cluster's name for an `az aks update --name …` hint: its literal name, else ``<cluster>``."""
    return setting.cluster if isinstance(setting.cluster, str) and setting.cluster else "<cluster>"


def first_and_more(items: list[Any], describe: Callable[[Any], str]) -> str:
    """How a message names what needs the feature: the first item (``describe``) and how many more."""
    more = f" and {len(items) - 1} more" if len(items) > 1 else ""
    return describe(items[0]) + more


def cluster_label(setting: FeatureSetting) -> str:
    """How a message names the cluster: ``cluster `ml-aks``` or ``the cluster``."""
    return f"cluster `{setting.cluster}`" if isinstance(setting.cluster, str) and setting.cluster else "the cluster"


def switch_value(value: Any) -> Any:
    """A boolean as an IaC source evaluated it: True, False or UNKNOWN (absent is the caller's)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return UNKNOWN


def policy_value(policy: Any, dataplane: Any, plugin: Any = None) -> Any:
    """The engine of ``network_policy`` / ``networkPolicy``, the dataplane and the network plugin
    (None: not written): the engine's name, False (none), or UNKNOWN. With the plugin ``none``
    (bring your own CNI) the CNI the user installs (Cilium, Calico) may enforce policies: unknown."""
    if isinstance(dataplane, str) and dataplane.lower() == "cilium":
        return "cilium"  # Azure CNI powered by Cilium enforces NetworkPolicies itself
    if plugin is UNKNOWN or (isinstance(plugin, str) and plugin.lower() == "none"):
        return UNKNOWN
    if policy is None or (isinstance(policy, str) and policy.lower() == "none"):
        return UNKNOWN if dataplane is UNKNOWN else False
    if isinstance(policy, str) and policy.lower() in POLICY_ENGINES:
        return policy.lower()
    return UNKNOWN


def needs_unmet(settings: Iterable[FeatureSetting], feature: str, needs: list[Any],
                unit: Callable[[str], str]) -> list[tuple[FeatureSetting, list[Any]]]:
    """The clusters with ``feature`` off (:func:`clusters_without`), each with the needs it governs
    (anything with a ``path``: the manifests that need the feature), in the order given. A need
    counts only when every setting of ``feature`` that governs it (its project unit,
    :mod:`linter.model.locality`) is off: one cluster with it on (or unknown) may be the one the
    manifest is applied to. Linear in settings and needs (grouped by unit, not paired)."""
    from mlops_lint.model.locality import ONE

    chosen = [s for s in settings if s.feature == feature]
    if not chosen or not needs:
        return []
    off_in: dict[str, bool] = {}  # a unit -> every setting written there is off
    for setting in chosen:
        key = unit(setting.origin.path)
        off_in[key] = off_in.get(key, True) and setting.on is False
    every_off = all(off_in.values())
    one_off = off_in.get(ONE, True)

    def unmet(key: str) -> bool:
        return every_off if key == ONE else one_off and off_in.get(key, True)

    units = [unit(n.path) for n in needs]
    open_needs = [(key, n) for key, n in zip(units, needs) if unmet(key)]
    governed_in: dict[str, list[Any]] = {}  # an anchor's unit -> the needs it governs

    def governed(key: str) -> list[Any]:
        if key not in governed_in:
            governed_in[key] = [n for k, n in open_needs if key == ONE or k in (key, ONE)]
        return governed_in[key]

    found = []
    for anchor, _ in clusters_without(chosen, feature):
        mine = governed(unit(anchor.origin.path))
        if mine:
            found.append((anchor, mine))
    return found
