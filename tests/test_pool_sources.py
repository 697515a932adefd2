"""The same node pools from every source the cluster model reads give the same findings.

A hypothesis property (issue 36): a small cluster (a System pool and up to three more, drawn
VM sizes, modes, Spot, counts or autoscaler bounds, labels and taints) and one or two GPU workloads
placed on it are written as an ``az aks create`` + ``az aks nodepool add`` script, as config
``node-pools``, as a Terraform module, as a Bicep file and as an ARM template, each linted in its
own project with the AKS and XPL rules. Every source gives the same findings (rule, the pool or
the workload's line, the message with the source's own words and fix hint normalised), and each
AKS finding points into its own source file at the line of the pool's attribute it is about.

Config ``node-pools`` are a pool source like the others: the run lints the ``.mlops-lint.yaml``
(it is under the PATH), and each AKS finding points at the entry's setting in it. The config
says some things in its own way, which the comparison reads as the same pool: the System pool is
written ``mode: System`` (an AKS003 there points at ``mode:``, where the script's first pool is
reported at its VM size), bounds without the autoscaler are written with
``enable-cluster-autoscaler: false``, and bounds a config cannot hold (``min-count`` greater
than ``max-count``) are a config error naming the file and line instead of an AKS004.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, Phase, event, example, given, settings
from hypothesis import strategies as st

from mlops_lint.config import ConfigError, load_config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

REGISTRY = load_registry()
SELECT = ["AKS", "XPL"]

GPU_SIZES = ["Standard_NC4as_T4_v3", "Standard_NC24ads_A100_v4", "Standard_NC6s_v3"]
CPU_SIZES = ["Standard_D4s_v5", "Standard_D8s_v5"]
UNKNOWN_SIZE = "Standard_NC99zz_v9"  # no such size in the catalogue: AKS005
SIZES = GPU_SIZES + CPU_SIZES + [UNKNOWN_SIZE]
NAMES = ["gpunp", "cpunp", "gpu2"]
GPU_TAINT = "sku=gpu:NoSchedule"
TAINTS = [GPU_TAINT, "sku=gpu:PreferNoSchedule", "dedicated=ml:NoSchedule"]
LABELS = {"accelerator": "nvidia", "workload": "training"}


# -- drawing a cluster -----------------------------------------------------------------------

def _scaling():
    """("fixed", count), ("auto", min, max, count or None) with the autoscaler switch, or
    ("bounds", min, max, count or None) without it; invalid ones included: reversed bounds, over
    1000, min 0 on a System pool, a count outside the bounds, the switch with a bound missing."""
    counts = st.sampled_from([0, 1, 2, 3, 4, 1001])
    fixed = st.tuples(st.just("fixed"), st.sampled_from([1, 2, 3]))
    auto = st.tuples(st.just("auto"), counts, counts, st.none() | st.sampled_from([0, 1, 3, 5]))
    partial = st.tuples(st.just("auto"), st.none() | counts, st.none() | counts, st.none()).filter(
        lambda s: None in s[1:3])
    unswitched = st.tuples(st.just("bounds"), counts, counts, st.none() | st.sampled_from([1, 3]))
    return st.one_of(fixed, auto, partial, unswitched)


@st.composite
def pools(draw):
    """A System pool (the cluster's first) and up to three more, each User or System, maybe Spot."""
    first = {"name": "system", "mode": "System", "vm": draw(st.sampled_from(SIZES)),
             "scaling": draw(_scaling()), "taints": draw(st.lists(st.sampled_from(TAINTS), max_size=1)),
             "labels": draw(st.dictionaries(st.sampled_from(sorted(LABELS)), st.sampled_from(["nvidia", "training"]),
                                            max_size=1))}
    names = draw(st.lists(st.sampled_from(NAMES), max_size=3, unique=True))
    out = [first]
    for name in names:
        out.append({
            "name": name, "mode": draw(st.sampled_from(["User", "User", "System"])),
            "vm": draw(st.sampled_from(SIZES)), "scaling": draw(_scaling()),
            "labels": draw(st.dictionaries(st.sampled_from(sorted(LABELS)),
                                           st.sampled_from(["nvidia", "training", "a100"]), max_size=2)),
            "taints": draw(st.lists(st.sampled_from(TAINTS), max_size=2, unique=True)),
            "spot": draw(st.booleans()),
        })
    return out


def _pool(name, vm, mode, scaling, labels=None, taints=None) -> dict:
    return {"name": name, "mode": mode, "vm": vm, "scaling": scaling, "labels": labels or {}, "taints": taints or []}


def _workload(selector=None, tolerations=None, gpus=1, name="train0") -> dict:
    return {"name": name, "selector": selector or {}, "tolerations": tolerations or [], "gpus": gpus}


@st.composite
def workloads(draw):
    """One or two GPU Jobs: a nodeSelector and tolerations (of the GPU taint, another, the Spot
    taint AKS adds) that match a drawn pool or not."""
    out = []
    for index in range(draw(st.integers(1, 2))):
        selector = draw(st.dictionaries(
            st.sampled_from(["accelerator", "workload", "agentpool", "kubernetes.azure.com/accelerator"]),
            st.sampled_from(["nvidia", "training", "gpunp", "gpu2", "a100"]), max_size=2))
        tolerations = draw(st.lists(st.sampled_from(["sku=gpu:NoSchedule", "sku:Exists", "dedicated=ml:NoSchedule",
                                                     "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]),
                                    max_size=2, unique=True))
        out.append({"name": f"train{index}", "selector": selector, "tolerations": tolerations,
                    "gpus": draw(st.sampled_from([1, 1, 8]))})
    return out


# -- writing it in each source -----------------------------------------------------------------
# Each writer returns the text and, per pool, {concept: line} of the attributes it wrote
# (concepts: vm, mode, node_count, min_count, max_count, autoscaler, labels, taints).


def _az(cluster) -> tuple[str, list[dict[str, int]]]:
    lines, where = ["#!/bin/bash"], []
    for index, pool in enumerate(cluster):
        at: dict[str, int] = {}
        if index == 0:
            head = ["az aks create", "-g rg", "-n ml-aks", f"--nodepool-name {pool['name']}"]
            label_flag, taint_flag = "--nodepool-labels", "--nodepool-taints"
        else:
            head = ["az aks nodepool add", "-g rg", "--cluster-name ml-aks", f"-n {pool['name']}"]
            label_flag, taint_flag = "--labels", "--node-taints"
        words = [(None, w) for w in head] + [("vm", f"--node-vm-size {pool['vm']}")]
        if index:
            words.append(("mode", f"--mode {pool['mode']}"))
        if pool.get("spot"):
            words.append(("spot", "--priority Spot"))
        words += _scaling_words(pool, {"node_count": "--node-count {}", "autoscaler": "--enable-cluster-autoscaler",
                                       "min_count": "--min-count {}", "max_count": "--max-count {}"})
        if pool["labels"]:
            words.append(("labels", f"{label_flag} " + " ".join(f"{k}={v}" for k, v in pool["labels"].items())))
        if pool["taints"]:
            words.append(("taints", f"{taint_flag} " + ",".join(pool["taints"])))
        for position, (concept, word) in enumerate(words):
            end = " \\" if position < len(words) - 1 else ""
            lines.append(("" if position == 0 else "  ") + word + end)
            if concept:
                at[concept] = len(lines)
        where.append(at)
    return "\n".join(lines) + "\n", where


def _scaling_words(pool, spelling: dict[str, str]) -> list[tuple[str, str]]:
    kind, *numbers = pool["scaling"]
    if kind == "fixed":
        return [("node_count", spelling["node_count"].format(numbers[0]))]
    low, high, count = numbers
    words = [] if count is None else [("node_count", spelling["node_count"].format(count))]
    if kind == "auto":
        words.append(("autoscaler", spelling["autoscaler"]))
    return words + [(name, spelling[name].format(value)) for name, value in (("min_count", low), ("max_count", high))
                    if value is not None]


def _terraform(cluster) -> tuple[str, list[dict[str, int]]]:
    lines = ['resource "azurerm_kubernetes_cluster" "aks" {', '  name       = "ml-aks"', '  dns_prefix = "mlaks"', ""]
    where = []
    for index, pool in enumerate(cluster):
        at: dict[str, int] = {}
        indent = "    " if index == 0 else "  "
        if index == 0:
            lines.append("  default_node_pool {")
        else:
            lines += ["", f'resource "azurerm_kubernetes_cluster_node_pool" "{pool["name"]}" {{']
        attrs = [(None, "name", f'"{pool["name"]}"'), ("vm", "vm_size", f'"{pool["vm"]}"')]
        if index:
            attrs.insert(1, (None, "kubernetes_cluster_id", "azurerm_kubernetes_cluster.aks.id"))
            attrs.append(("mode", "mode", f'"{pool["mode"]}"'))
        if pool.get("spot"):
            attrs.append(("spot", "priority", '"Spot"'))
        attrs += [(c, *w.split(" = ")) for c, w in _scaling_words(
            pool, {"node_count": "node_count = {}", "autoscaler": "auto_scaling_enabled = true",
                   "min_count": "min_count = {}", "max_count": "max_count = {}"})]
        if pool["labels"]:
            attrs.append(("labels", "node_labels", "{ " + ", ".join(f'"{k}" = "{v}"' for k, v in pool["labels"].items())
                          + " }"))
        if pool["taints"]:
            attrs.append(("taints", "node_taints", "[" + ", ".join(f'"{t}"' for t in pool["taints"]) + "]"))
        for concept, name, value in attrs:
            lines.append(f"{indent}{name:<21} = {value}")
            if concept:
                at[concept] = len(lines)
        lines.append("  }" if index == 0 else "}")
        if index == 0:
            lines.append("}")
        where.append(at)
    return "\n".join(lines) + "\n", where


def _bicep(cluster) -> tuple[str, list[dict[str, int]]]:
    lines = ["resource aks 'Microsoft.ContainerService/managedClusters@2024-02-01' = {", "  name: 'ml-aks'",
             "  properties: {", "    agentPoolProfiles: ["]
    where = []
    for index, pool in enumerate(cluster):
        at: dict[str, int] = {}
        if index == 0:
            indent = "        "
            lines.append("      {")
        else:
            indent = "    "
            kind = "Microsoft.ContainerService/managedClusters/agentPools@2024-02-01"
            lines += [f"resource {pool['name']} '{kind}' = {{",
                      "  parent: aks", f"  name: '{pool['name']}'", "  properties: {"]
        attrs = [("vm", f"vmSize: '{pool['vm']}'")]
        if index == 0:  # the first agentPoolProfiles entry is the System pool, as `az aks create` makes it
            attrs.insert(0, (None, f"name: '{pool['name']}'"))
        else:
            attrs.append(("mode", f"mode: '{pool['mode']}'"))
        if pool.get("spot"):
            attrs.append(("spot", "scaleSetPriority: 'Spot'"))
        attrs += _scaling_words(pool, {"node_count": "count: {}", "autoscaler": "enableAutoScaling: true",
                                       "min_count": "minCount: {}", "max_count": "maxCount: {}"})
        for concept, text in attrs:
            lines.append(indent + text)
            if concept:
                at[concept] = len(lines)
        if pool["labels"]:
            lines.append(indent + "nodeLabels: {")
            at["labels"] = len(lines)
            lines += [f"{indent}  {k}: '{v}'" for k, v in pool["labels"].items()] + [indent + "}"]
        if pool["taints"]:
            lines.append(indent + "nodeTaints: [")
            at["taints"] = len(lines)
            lines += [f"{indent}  '{t}'" for t in pool["taints"]] + [indent + "]"]
        if index == 0:
            lines += ["      }", "    ]", "  }", "}"]
        else:
            lines += ["  }", "}"]
        where.append(at)
    return "\n".join(lines) + "\n", where


def _arm(cluster) -> tuple[str, list[dict[str, int]]]:
    def profile(pool, first: bool) -> dict:
        body: dict = {"name": pool["name"]} if first else {}
        body |= {"vmSize": pool["vm"]} if first else {"vmSize": pool["vm"], "mode": pool["mode"]}
        if pool.get("spot"):
            body["scaleSetPriority"] = "Spot"
        for _, text in _scaling_words(pool, {"node_count": "count {}", "autoscaler": "enableAutoScaling true",
                                             "min_count": "minCount {}", "max_count": "maxCount {}"}):
            key, value = text.split(" ")
            body[key] = json.loads(value)
        if pool["labels"]:
            body["nodeLabels"] = dict(pool["labels"])
        if pool["taints"]:
            body["nodeTaints"] = list(pool["taints"])
        return body

    resources = [{"type": "Microsoft.ContainerService/managedClusters", "apiVersion": "2024-02-01", "name": "ml-aks",
                  "properties": {"agentPoolProfiles": [profile(cluster[0], True)]}}]
    resources += [{"type": "Microsoft.ContainerService/managedClusters/agentPools", "apiVersion": "2024-02-01",
                   "name": f"ml-aks/{pool['name']}", "properties": profile(pool, False)} for pool in cluster[1:]]
    text = json.dumps({"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
                       "contentVersion": "1.0.0.0", "resources": resources}, indent=2) + "\n"
    keys = {"vmSize": "vm", "mode": "mode", "count": "node_count", "enableAutoScaling": "autoscaler",
            "minCount": "min_count", "maxCount": "max_count", "nodeLabels": "labels", "nodeTaints": "taints",
            "scaleSetPriority": "spot"}
    where: list[dict[str, int]] = []
    for number, line in enumerate(text.splitlines(), 1):
        found = re.match(r'\s*"(\w+)":', line)
        if found and found.group(1) == "vmSize":
            where.append({})
        if found and found.group(1) in keys and where:
            where[-1].setdefault(keys[found.group(1)], number)
    return text, where


def _config(cluster) -> tuple[str, list[dict[str, int]]]:
    lines, where = ["node-pools:"], []
    for pool in cluster:
        at: dict[str, int] = {}
        entries = [(None, f"name: {pool['name']}"), ("vm", f"vm-size: {pool['vm']}"), ("mode", f"mode: {pool['mode']}")]
        if pool.get("spot"):
            entries.append(("spot", "priority: Spot"))
        if pool["scaling"][0] == "bounds":  # without it, a config's bounds say the pool autoscales
            entries.append(("autoscaler", "enable-cluster-autoscaler: false"))
        entries += _scaling_words(pool, {"node_count": "node-count: {}",
                                         "autoscaler": "enable-cluster-autoscaler: true",
                                         "min_count": "min-count: {}", "max_count": "max-count: {}"})
        if pool["labels"]:
            entries.append(("labels", "labels: {" + ", ".join(f"{k}: {v}" for k, v in pool["labels"].items()) + "}"))
        if pool["taints"]:
            entries.append(("taints", "taints: [" + ", ".join(f"'{t}'" for t in pool["taints"]) + "]"))
        for position, (concept, text) in enumerate(entries):
            lines.append(("- " if position == 0 else "  ") + text)
            if concept:
                at[concept] = len(lines)
        where.append(at)
    return "\n".join(lines) + "\n", where


def _job(workload) -> str:
    lines = ["apiVersion: batch/v1", "kind: Job", f"metadata: {{name: {workload['name']}, namespace: ml}}", "spec:",
             "  template:", "    spec:", "      restartPolicy: Never"]
    if workload["selector"]:
        lines.append("      nodeSelector:")
        lines += [f"        {k}: {v}" for k, v in workload["selector"].items()]
    if workload["tolerations"]:
        lines.append("      tolerations:")
        for toleration in workload["tolerations"]:
            key, _, effect = toleration.partition(":")
            if effect == "Exists":
                lines.append(f"      - {{key: {key}, operator: Exists}}")
            else:
                key, _, value = key.partition("=")
                lines.append(f"      - {{key: {key}, operator: Equal, value: {value}, effect: {effect}}}")
    lines += ["      containers:", "      - name: trainer", "        image: nvcr.io/nvidia/pytorch:24.05-py3",
              "        command: [python, train.py]", "        resources:",
              f"          limits: {{nvidia.com/gpu: {workload['gpus']}}}"]
    return "\n".join(lines) + "\n"


WRITERS = {"az": ("setup.sh", _az), "terraform": ("main.tf", _terraform), "bicep": ("main.bicep", _bicep),
           "arm": ("azuredeploy.json", _arm), "config": (".mlops-lint.yaml", _config)}

# the words each source spells a setting with, to normalise messages and to check a finding's line
SPELLING = {
    "az": {"vm": "--node-vm-size", "mode": "--mode", "node_count": "--node-count", "min_count": "--min-count",
           "max_count": "--max-count", "autoscaler": "--enable-cluster-autoscaler", "labels": "labels",
           "taints": "taints", "spot": "--priority"},
    "terraform": {"vm": "vm_size", "mode": "mode", "node_count": "node_count", "min_count": "min_count",
                  "max_count": "max_count", "autoscaler": "auto_scaling_enabled", "labels": "node_labels",
                  "taints": "node_taints", "spot": "priority"},
    "bicep": {"vm": "vmSize", "mode": "mode", "node_count": "count", "min_count": "minCount", "max_count": "maxCount",
              "autoscaler": "enableAutoScaling", "labels": "nodeLabels", "taints": "nodeTaints",
              "spot": "scaleSetPriority"},
}
SPELLING["arm"] = {k: f'"{v}"' for k, v in SPELLING["bicep"].items()}
SPELLING["config"] = {"vm": "vm-size", "mode": "mode", "node_count": "node-count", "min_count": "min-count",
                      "max_count": "max-count", "autoscaler": "enable-cluster-autoscaler", "labels": "labels",
                      "taints": "taints", "spot": "priority"}


def _lint_source(source: str, cluster, jobs) -> tuple[list, list[dict[str, int]], list[str]]:
    name, writer = WRITERS[source]
    text, where = writer(cluster)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / name).write_text(text)
        for workload in jobs:
            (root / f"{workload['name']}.yaml").write_text(_job(workload))
        config = load_config(root / ".mlops-lint.yaml" if source == "config" else None, REGISTRY, start=root)
        result = lint(LintRequest(paths=[root], config=config, registry=REGISTRY, select=SELECT, cwd=root, jobs=1))
    found = sorted((f.rule, f.path, f.line, f.column, f.message) for f in result.active)
    return found, where, text.splitlines()


# -- normalising a finding to what every source must agree on ------------------------------------

_TOOL = re.compile(r"; (the CLI|azurerm|the AKS API) .*$")
_HINT = re.compile(r"(: add|; add|; keep|; set|; write|; use|; give|; raise|; turn) .*$")


def _words(source: str, message: str) -> str:
    """The message in the az words: the source's setting names, its name for the first pool and
    its fix hint left out."""
    message = _HINT.sub("", message)
    message = _TOOL.sub("", message)  # who refuses it: the CLI, azurerm, the AKS API
    message = message.replace("on with --enable-cluster-autoscaler but without", "on without")
    message = message.replace(" or --update-cluster-autoscaler", "")
    message = message.replace("default_node_pool", "first pool").replace("first agentPoolProfiles entry", "first pool")
    # a config writes its System pool `mode: System`, where a script's first pool is one by position
    message = message.replace("is the cluster's first pool, a System pool", "is set to System mode")
    if source == "az":
        message = re.sub(r"^`az aks (nodepool add|create)` ", "", message)
    else:
        message = re.sub(r"^node pool `[^`]*` ", "", message)
        spelling = SPELLING["bicep" if source == "arm" else source]  # ARM's messages name keys unquoted
        message = re.sub(r'`"(\w+)": true`', r"`\1: true`", message)  # but for a setting to write
        for concept, word in sorted(spelling.items(), key=lambda kv: -len(kv[1])):
            message = message.replace(f"`{word} = true`", SPELLING["az"][concept])
            message = message.replace(f"`{word}: true`", SPELLING["az"][concept])
            message = message.replace(f"`{word}`", SPELLING["az"][concept])
            if concept != "mode":  # "System mode" is a word of the message; "count 3" (Bicep) is the setting
                after = r"(?= \d)" if word == "count" else r"(?![\w-])"
                message = re.sub(rf"(?<![\w-]){re.escape(word)}{after}", SPELLING["az"][concept], message)
    return message


def _identity(source: str, finding, where, lines, cluster):
    """(rule, what it is about, message) of a finding; an AKS finding's line must be one of the
    pool's own attribute lines in this source's file, and that line must spell the setting."""
    code, path, line, column, message = finding
    if not code.startswith("AKS"):
        return code, path, line, _words(source, message)
    assert path == WRITERS[source][0], (source, finding)
    owners = [(index, concept) for index, at in enumerate(where) for concept, at_line in at.items() if at_line == line]
    assert owners, f"{source}: {finding} is not at a pool attribute's line:\n" + "\n".join(lines)
    (index, concept), = owners
    text, word = lines[line - 1], SPELLING[source][concept]
    assert word in text, (source, finding, text)
    indent = len(text) - len(text.lstrip())
    indent += 2 if text.lstrip().startswith("- ") else 0  # a config entry's first key follows its `- `
    assert indent < column <= len(text), (source, finding, text)  # at the setting's name or value
    if code == "AKS003":  # at `--mode`/`mode`, or at the VM size of a pool that is System by position
        concept = "mode or vm"
    return code, cluster[index]["name"], concept, _words(source, message)


@settings(max_examples=50, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],  # no slow explain phase
          suppress_health_check=[HealthCheck.too_slow])
@given(cluster=pools(), jobs=workloads())
# the System pool an `az aks nodepool add --mode System` makes with --min-count 0: AKS004 missed it
# in a script while Terraform, Bicep and ARM reported it (fixed in rules/aks/aks004)
@example(cluster=[_pool("system", "Standard_D4s_v5", "System", ("fixed", 1)),
                  _pool("gpunp", "Standard_NC4as_T4_v3", "System", ("auto", 0, 2, None))],
         jobs=[_workload()])
# a tainted, labelled GPU pool a job selects without tolerating its taint (XPL002), and a job whose
# selector no pool matches (XPL001) and that asks for more GPUs than the VM has
@example(cluster=[_pool("system", "Standard_D4s_v5", "System", ("fixed", 3)),
                  _pool("gpunp", "Standard_NC24ads_A100_v4", "User", ("auto", 0, 4, 1), {"accelerator": "nvidia"},
                        [GPU_TAINT])],
         jobs=[_workload({"accelerator": "nvidia"}), _workload({"accelerator": "a100"}, [GPU_TAINT], 8, "train1")])
# a User GPU pool of a fixed size (AKS010 at its count), and one whose bounds lack the switch, which
# the CLI and the providers refuse (AKS004 only; the az default count of 3 once gave AKS010 there)
@example(cluster=[_pool("system", "Standard_D4s_v5", "System", ("fixed", 1)),
                  _pool("gpunp", "Standard_NC24ads_A100_v4", "User", ("fixed", 2), {"accelerator": "nvidia"}, [GPU_TAINT]),
                  _pool("gpu2", "Standard_NC4as_T4_v3", "User", ("bounds", 0, 0, None))],
         jobs=[_workload()])
def test_the_same_pools_from_every_source_give_the_same_findings(cluster, jobs) -> None:
    results = {source: _lint_source(source, cluster, jobs) for source in ("az", "terraform", "bicep", "arm")}
    shapes = {source: sorted(_identity(source, f, where, lines, cluster) for f in found)
              for source, (found, where, lines) in results.items()}
    for source in ("terraform", "bicep", "arm"):
        assert shapes[source] == shapes["az"], source
    for code in sorted({shape[0] for shape in shapes["az"]}):
        event(code)  # `pytest --hypothesis-show-statistics` shows which rules the examples reach
    # config node-pools: the same findings, each AKS one at its entry's setting in .mlops-lint.yaml
    reversed_bounds = [p for p in cluster if p["scaling"][0] != "fixed" and None not in p["scaling"][1:3]
                       and p["scaling"][1] > p["scaling"][2]]
    try:
        found, where, lines = _lint_source("config", cluster, jobs)
    except ConfigError as error:
        assert reversed_bounds, error
        _, where = _config(cluster)
        line = where[cluster.index(reversed_bounds[0])]["min_count"]
        assert f".mlops-lint.yaml:{line}:" in str(error) and "min-count" in str(error), str(error)
        event("config refused: reversed bounds")
        return
    assert not reversed_bounds
    assert sorted(_identity("config", f, where, lines, cluster) for f in found) == shapes["az"]
    event(f"config: {sum(1 for f in found if f[0].startswith('AKS'))} pool finding(s)")


def test_min_count_zero_on_a_pool_added_in_system_mode_is_aks004(tmp_path: Path) -> None:
    """``az aks nodepool add --mode System --min-count 0`` is refused as ``min_count = 0`` on a
    System Terraform pool is (the CLI's range for System pools is 1-1000); ``--mode User`` or no
    ``--mode`` (User) keeps 0 valid."""
    script = ("az aks nodepool add -g rg --cluster-name ml-aks -n sysnp --node-vm-size Standard_D4s_v5 "
              "--mode {mode} --enable-cluster-autoscaler --min-count 0 --max-count 3\n")
    found = {}
    for mode in ("System", "system", "User"):
        (tmp_path / "setup.sh").write_text(script.format(mode=mode))
        result = lint(LintRequest(paths=[tmp_path], config=load_config(None, REGISTRY, start=tmp_path),
                                  registry=REGISTRY, select=["AKS004"], cwd=tmp_path, jobs=1))
        found[mode] = [(f.rule, f.line, f.column, f.message) for f in result.active]
    column = script.index("--min-count 0") + len("--min-count ") + 1
    assert found["System"] == [("AKS004", 1, column, "`az aks nodepool add` --min-count 0 on a System pool: System "
                                                      "pools keep at least one node")]
    assert found["system"] == found["System"]
    assert found["User"] == []
