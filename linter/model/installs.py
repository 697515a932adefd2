"""NVIDIA (and other cluster) components the project's shell scripts install on the cluster (``helm``, ``kubectl apply``).

A script that runs ``helm install|upgrade --install RELEASE CHART`` of the GPU Operator
(``…/gpu-operator``), the device plugin (``…/nvidia-device-plugin``) or the DCGM exporter
(``…/dcgm-exporter``) chart, KAITO's (``kaito/workspace``, ``…/kaito/ragengine``), azure-workload-identity's
webhook (``…/workload-identity-webhook``), a CNI that enforces NetworkPolicies (``cilium/cilium``,
Calico's ``projectcalico/tigera-operator``), the Prometheus Operator (``…/kube-prometheus-stack``,
``…/kube-prometheus``, ``…/prometheus-operator``), whatever the repository alias (``nvidia/``, ``oci://…/``, a
``.tgz``, ``--repo URL`` with a bare chart name), or ``kubectl apply|create -f URL`` of NVIDIA's
published device-plugin or DCGM-exporter manifest, puts that component on the cluster: the rules
that look for a duplicate (GPU009, OBS003) count it as they count a manifest of the project, and
the rules that need a component (GPU014: the operator's driver, KAI006: KAITO, AKS008: the
workload identity webhook, AKS009: a policy engine, OBS005: the Prometheus Operator) take it as installed.

Only what the command determines is taken: a chart or URL word of unknown value is not an
install; for the GPU Operator, whether it deploys its device plugin and DCGM exporter is read
from ``--set``/``--set-string`` (``devicePlugin.enabled=false``; ``driver.enabled`` likewise); a values file (``-f``,
``--values``) or a word of unknown value may turn them off, so they are then unknown (a later
``--set`` still decides, as it overrides the files). A local manifest path is not an install
here: the file is in the project and linted as a manifest. Nothing is run or fetched.

Terraform's ``helm_release`` resources install charts the same way (:func:`terraform_installs`):
the chart and repository as written, the GPU Operator's operands from its ``set`` blocks; the
rules that only need to know a component is there read them too (``project_installs(index,
terraform=True)``).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, Final

from msgspec import Struct

from mlops_lint.model.document import TERRAFORM
from mlops_lint.model.position import Span
from mlops_lint.model.unknown import UNKNOWN

if TYPE_CHECKING:  # the script model is read only when a script exists
    from mlops_lint.model.azcli import Command, ShellScript

GPU_OPERATOR: Final = "gpu-operator"
DEVICE_PLUGIN: Final = "device-plugin"
DCGM_EXPORTER: Final = "dcgm-exporter"
KAITO: Final = "kaito"  # the KAITO operator's charts (workspace, ragengine): KAI006
WORKLOAD_IDENTITY_WEBHOOK: Final = "workload-identity-webhook"  # azure-workload-identity's webhook: AKS008
POLICY_CNI: Final = "policy-cni"  # a CNI that enforces NetworkPolicies (Cilium, Calico's operator): AKS009
PROMETHEUS_OPERATOR: Final = "prometheus-operator"  # the Prometheus Operator and its Prometheus: OBS005

# chart name (the last path segment, without a .tgz version) -> component
CHARTS: Final = {"gpu-operator": GPU_OPERATOR, "nvidia-device-plugin": DEVICE_PLUGIN, "dcgm-exporter": DCGM_EXPORTER,
                 "workload-identity-webhook": WORKLOAD_IDENTITY_WEBHOOK,
                 "cilium": POLICY_CNI, "tigera-operator": POLICY_CNI, "calico": POLICY_CNI,
                 "kube-prometheus-stack": PROMETHEUS_OPERATOR, "kube-prometheus": PROMETHEUS_OPERATOR,
                 "prometheus-operator": PROMETHEUS_OPERATOR}
# KAITO's charts have generic names: they count when the chart's path or --repo names KAITO
KAITO_CHARTS: Final = frozenset({"workspace", "ragengine", "kaito-workspace", "kaito-ragengine"})
# the GPU Operator's values that turn its operands off (``<operand>.enabled``)
OPERANDS: Final = ("devicePlugin", "dcgmExporter", "driver")
# the chart's custom resources (``<name>.deployCR``) and whether it creates each by default
OPERATOR_CRS: Final = {"clusterPolicy": True, "gpuCluster": False}

# helm options that take a value (the next word unless written ``--opt=value``); others are switches
_HELM_VALUE_OPTIONS: Final = frozenset({
    "--namespace", "-n", "--version", "--set", "--set-string", "--set-file", "--set-json", "--set-literal",
    "--values", "-f", "--repo", "--kube-context", "--kubeconfig", "--timeout", "--description",
    "--post-renderer", "--post-renderer-args", "--username", "--password", "--ca-file", "--cert-file",
    "--key-file", "--keyring", "--name-template", "--output", "-o", "--history-max", "--labels",
    "--registry-config", "--repository-config", "--repository-cache", "--kube-apiserver", "--kube-as-user",
    "--kube-as-group", "--kube-ca-file", "--kube-token", "--kube-tls-server-name", "--burst-limit", "--qps",
})
_TGZ_VERSION = re.compile(r"-v?\d[\w.+-]*\.tgz$")
# NVIDIA's published manifests: the device plugin's static DaemonSet (any release, any path in
# the k8s-device-plugin repository) and the DCGM exporter's
_DEVICE_PLUGIN_URL = re.compile(r"^https?://\S*k8s-device-plugin/\S*nvidia-device-plugin[\w.-]*\.ya?ml$", re.IGNORECASE)
_DCGM_URL = re.compile(r"^https?://\S*dcgm-exporter/\S*dcgm-exporter[\w.-]*\.ya?ml$", re.IGNORECASE)


class Install(Struct, frozen=True):
    """One component a script installs: what, where (the chart or URL word), how it is named.

    ``operands`` (GPU Operator only): ``devicePlugin`` / ``dcgmExporter`` / ``driver`` -> True (deployed),
    False (``--set <operand>.enabled=false``) or UNKNOWN (a values file or unknown word may say);
    ``clusterPolicy`` / ``gpuCluster`` likewise for the custom resources the chart creates
    (``--set <name>.deployCR=…``; by default the ClusterPolicy and no GPUCluster).
    """

    component: str
    path: str
    span: Span  # the chart or manifest URL as written
    how: str  # "helm" | "kubectl"
    source: str  # the chart or URL as written (expanded)
    release: str = ""  # the Helm release name ("" for kubectl, or --generate-name)
    namespace: str = "default"
    operands: dict[str, Any] = {}

    def deploys(self, operand: str) -> Any:
        """True, False or UNKNOWN: whether this install runs ``operand`` (``devicePlugin``…)."""
        if self.component == GPU_OPERATOR:
            return self.operands.get(operand, UNKNOWN)
        return (self.component == DEVICE_PLUGIN and operand == "devicePlugin") or (
            self.component == DCGM_EXPORTER and operand == "dcgmExporter")

    def what(self) -> str:
        """How it is installed, without where: ``Helm chart `nvidia/gpu-operator`, release `x```."""
        if self.how == "helm":
            return f"Helm chart `{self.source}`" + (f", release `{self.release}`" if self.release else "")
        return f"manifest `{self.source}`"

    def describe(self) -> str:
        return f"{self.what()} ({self.path}:{self.span.line})"


def _chart_component(chart: str, repo: Any = None) -> str | None:
    name = chart.rstrip("/").rsplit("/", 1)[-1]
    name = _TGZ_VERSION.sub("", name)
    if name.endswith(".tgz"):
        name = name[:-4]
    if name in KAITO_CHARTS and ("kaito" in chart.lower() or (isinstance(repo, str) and "kaito" in repo.lower())):
        return KAITO
    return CHARTS.get(name)


def _set_values(text: str) -> list[tuple[str, str]]:
    """``a.b=c,d=e`` as helm's --set reads it (no escaped commas: rare in these keys)."""
    pairs = []
    for part in text.split(","):
        key, eq, value = part.partition("=")
        if eq:
            pairs.append((key.strip(), value.strip()))
    return pairs


def _helm(command: Command, path: str) -> Install | None:
    words = command.words
    k = 1
    verb = None
    while k < len(words):  # global flags may come before the verb
        value = words[k].value
        if value is UNKNOWN or not isinstance(value, str):
            return None
        if value.startswith("-"):
            k += 2 if value in _HELM_VALUE_OPTIONS and "=" not in value else 1
            continue
        verb = value
        k += 1
        break
    if verb not in ("install", "upgrade"):
        return None
    positional: list[Any] = []
    options: list[tuple[str, Any]] = []
    unknown_words = False
    upgrade_installs = verb == "install"
    generate = False
    while k < len(words):
        token = words[k]
        value = token.value
        k += 1
        if value is UNKNOWN or not isinstance(value, str):
            if token.raw.startswith("-"):  # an option of unknown value (`--version=$V`): its name is known
                name = token.raw.partition("=")[0]
                if "=" in token.raw:
                    options.append((name, UNKNOWN))
                elif name in _HELM_VALUE_OPTIONS:
                    options.append((name, words[k].value if k < len(words) else UNKNOWN))
                    k += 1
                continue
            unknown_words = True  # `$EXTRA_ARGS` may hold any option
            positional.append(token)
            continue
        if value.startswith("-") and len(value) > 1:
            name, eq, attached = value.partition("=")
            if name in ("--install", "-i"):
                upgrade_installs = True
            elif name in ("--generate-name", "-g"):
                generate = True
            if eq:
                options.append((name, attached))
            elif name in _HELM_VALUE_OPTIONS:
                options.append((name, words[k].value if k < len(words) else UNKNOWN))
                k += 1
            continue
        positional.append(token)
    if not upgrade_installs:
        return None  # a plain upgrade changes a release installed elsewhere (counted where it was)
    wanted = 1 if generate else 2
    if len(positional) < wanted:
        return None
    chart_token = positional[wanted - 1]
    chart = chart_token.value
    if chart is UNKNOWN or not isinstance(chart, str):
        return None
    component = _chart_component(chart, next((value for name, value in options if name == "--repo"), None))
    if component is None:
        return None
    release = "" if generate else positional[0].value
    namespace: Any = "default"
    operands: dict[str, Any] = {}
    if component == GPU_OPERATOR:
        start = UNKNOWN if unknown_words else True
        operands = {operand: start for operand in OPERANDS}
        operands.update({cr: UNKNOWN if unknown_words else default for cr, default in OPERATOR_CRS.items()})
    for name, value in options:
        if name in ("--namespace", "-n"):
            namespace = value
        elif component != GPU_OPERATOR:
            continue
        elif name in ("--values", "-f", "--set-file", "--set-json"):
            for operand in operands:  # a file (or JSON) may set anything; a later --set still decides
                operands[operand] = UNKNOWN
        elif name in ("--set", "--set-string", "--set-literal"):
            if value is UNKNOWN or not isinstance(value, str):
                for operand in operands:
                    operands[operand] = UNKNOWN
                continue
            for key, setting in _set_values(value):
                operand = key[:-len(".enabled")] if key.endswith(".enabled") else None
                if key.endswith(".deployCR") and key[:-len(".deployCR")] in OPERATOR_CRS:
                    operand = key[:-len(".deployCR")]
                if operand in operands:
                    lowered = setting.lower()
                    operands[operand] = True if lowered == "true" else False if lowered == "false" else UNKNOWN
    return Install(component, path, chart_token.span, "helm", chart,
                   release if isinstance(release, str) else "",
                   namespace if isinstance(namespace, str) else "", operands)


def _kubectl(command: Command, path: str) -> list[Install]:
    words = command.words
    if len(words) < 3 or words[1].value not in ("apply", "create", "replace"):
        return []
    found = []
    k = 2
    namespace: Any = "default"
    urls = []
    while k < len(words):
        value = words[k].value
        k += 1
        if not isinstance(value, str):
            continue
        name, eq, attached = value.partition("=")
        if name in ("-f", "--filename"):
            if eq:
                urls.append((attached, words[k - 1].raw.partition("=")[2], words[k - 1].span))
            elif k < len(words):
                urls.append((words[k].value, words[k].raw, words[k].span))
                k += 1
        elif name in ("-n", "--namespace"):
            if eq:
                namespace = attached
            elif k < len(words):
                namespace = words[k].value
                k += 1
    for url, raw, span in urls:
        if not isinstance(url, str):
            # NVIDIA's URL with a version the script does not determine (`…/k8s-device-plugin/${VERSION}/…`)
            # is still that manifest: what it installs is read from the text as written
            url = raw.strip("'\"") if isinstance(raw, str) and raw.strip("'\"").startswith("http") else None
            if url is None:
                continue
        component = DEVICE_PLUGIN if _DEVICE_PLUGIN_URL.match(url) else DCGM_EXPORTER if _DCGM_URL.match(url) else None
        if component is not None:
            found.append(Install(component, path, span, "kubectl", url,
                                 namespace=namespace if isinstance(namespace, str) else ""))
    return found


def script_installs(script: ShellScript, path: str) -> list[Install]:
    """The NVIDIA components ``script`` installs, in the order it runs them."""
    found: list[Install] = []
    for command in script.commands:
        if not command.words:
            continue
        head = command.words[0].value
        if not isinstance(head, str):
            continue
        program = os.path.basename(head)
        if program == "helm":
            install = _helm(command, path)
            if install is not None:
                found.append(install)
        elif program == "kubectl":
            found.extend(_kubectl(command, path))
    return found


def _literal(attr: Any) -> Any:
    """A Terraform attribute's value when it is written as a literal, else UNKNOWN (None: absent)."""
    if attr is None:
        return None
    expr = attr.expr
    return expr[1] if isinstance(expr, tuple) and len(expr) == 2 and expr[0] == "lit" else UNKNOWN


def terraform_installs(tf: Any) -> list[Install]:
    """The components a Terraform file installs with the Helm provider's ``helm_release``
    resources: ``chart`` and ``repository`` as literals; for the GPU Operator, its operands from
    the ``set`` blocks (or a ``set`` list of objects), unknown under ``values`` or a value that is
    not a literal. A chart that is not a literal is not an install."""
    found: list[Install] = []
    for block in getattr(tf, "blocks", ()):
        if block.type != "resource" or len(block.labels) != 2 or block.labels[0] != "helm_release":
            continue
        chart = _literal(block.attrs.get("chart"))
        if not isinstance(chart, str):
            continue
        repository = _literal(block.attrs.get("repository"))
        component = _chart_component(chart, repository)
        if component is None:
            continue
        shown = f"{repository.rstrip('/')}/{chart}" if isinstance(repository, str) and "/" not in chart else chart
        release = _literal(block.attrs.get("name"))
        namespace = _literal(block.attrs.get("namespace"))
        operands: dict[str, Any] = {}
        if component == GPU_OPERATOR:
            unknown = "values" in block.attrs or "set" in block.attrs and not _set_list(block.attrs["set"])
            operands = {operand: UNKNOWN if unknown else True for operand in OPERANDS}
            operands.update({cr: UNKNOWN if unknown else default for cr, default in OPERATOR_CRS.items()})
            pairs = [(_literal(b.attrs.get("name")), _literal(b.attrs.get("value")))
                     for b in block.blocks if b.type == "set"]
            pairs += _set_list(block.attrs["set"]) if "set" in block.attrs else []
            for key, value in pairs:
                operand = key[:-len(".enabled")] if isinstance(key, str) and key.endswith(".enabled") else None
                if isinstance(key, str) and key.endswith(".deployCR") and key[:-len(".deployCR")] in OPERATOR_CRS:
                    operand = key[:-len(".deployCR")]
                if not isinstance(key, str):
                    operands = {name: UNKNOWN for name in operands}  # a key not known may set any
                elif operand in operands:
                    text = str(value).lower() if isinstance(value, (str, bool)) else ""
                    operands[operand] = True if text == "true" else False if text == "false" else UNKNOWN
        found.append(Install(component, tf.path, block.attrs["chart"].value_span, "helm", shown,
                             release if isinstance(release, str) else "",
                             namespace if isinstance(namespace, str) else "default", operands))
    return found


def _set_list(attr: Any) -> list[tuple[Any, Any]]:
    """``set = [{ name = …, value = … }, …]`` (the Helm provider's v3 form) as (name, value) pairs
    (UNKNOWN where not literal); empty when it is written otherwise."""
    expr = attr.expr
    if not (isinstance(expr, tuple) and expr and expr[0] == "tuple"):
        return []
    pairs = []
    for item in expr[1]:
        if not (isinstance(item, tuple) and item and item[0] == "object"):
            return []
        fields = {k[1]: v for k, v in item[1] if isinstance(k, tuple) and len(k) == 2 and k[0] == "lit"}
        pairs.append(tuple(v[1] if isinstance(v, tuple) and len(v) == 2 and v[0] == "lit" else UNKNOWN
                           for v in (fields.get("name"), fields.get("value"))))
    return pairs


def project_installs(index: Any, terraform: bool = False) -> list[Install]:
    """Every script's installs (scripts sorted by path), found once per index; with
    ``terraform``, then every Terraform file's ``helm_release``s (files sorted by path). The rules
    that report at an install (GPU009, GPU013, OBS003: "this script installs …") read scripts only;
    those that only need to know a component is installed (AKS008, AKS009, GPU014, KAI006) read both."""
    def build() -> tuple[Install, ...]:
        scripts = sorted((d for d in getattr(index, "scripts", ()) if d.shell is not None), key=lambda d: d.path)
        return tuple(install for d in scripts for install in script_installs(d.shell, d.path))

    def build_terraform() -> tuple[Install, ...]:
        files = sorted((d for d in getattr(index, "iac", ()) if d.iac is not None and d.kind == TERRAFORM),
                       key=lambda d: d.path)
        return tuple(install for d in files for install in terraform_installs(d.iac))

    if terraform:
        return list(index.memo("script-installs", build)) + list(index.memo("terraform-installs", build_terraform))

    return list(index.memo("script-installs", build))


def operator_installs(index: Any, part: str) -> list[Install]:
    """The project's GPU Operator installs that surely deploy ``part``: an operand
    (``devicePlugin``, ``dcgmExporter``) or a custom resource the chart creates (``clusterPolicy``,
    ``gpuCluster``); one whose values file or unknown word may turn it off is not one (GPU009,
    GPU013 and OBS003 count them as they count a ClusterPolicy)."""
    return [install for install in project_installs(index)
            if install.component == GPU_OPERATOR and install.deploys(part) is True]
