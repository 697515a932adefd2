"""Regenerate the CRD schemas shipped inside the package (linter/data/crds/) from upstream CRD files.

    python scripts/bundle_crds.py ../shared/crds scripts/upstream-crds     # same refs as the bundle has
    python scripts/bundle_crds.py ~/src/crds scripts/upstream-crds --ref kueue=v0.15.0   # after copying a new release's CRDs

Each ``SOURCE_DIR`` holds upstream CRD files, named as upstream names them (``kueue.x-k8s.io_*.yaml``,
``json/monitoring.coreos.com_<kind>_v1.json`` in the CRDs-catalog form); a file may be stored gzip'd
(``NAME.yaml.gz``, the upstream bytes unchanged inside: ``scripts/upstream-crds`` keeps so the CRDs
that ../shared/crds does not have, with their sources in its ``SOURCES.md``). Each file matched by
:data:`UPSTREAM` is read; for every version of its CRD the ``openAPIV3Schema`` is kept with only the
keywords that validation reads (:data:`KEEP`: no descriptions, titles, examples or formats; CEL
rules keep their rule, message and field path), subtrees that repeat inside a version (a PodTemplateSpec per replica type) are stored once
(``{"$bundle": n}`` pointing into the file's ``shared`` list), and each version is one gzip'd JSON
file, loaded only when an object of that kind and version is checked. ``index.json`` lists the
kinds, their versions (served, storage, deprecated) and their sources; ``SOURCES.md`` says the
same for people. A ref not given with ``--ref`` is kept from the current ``index.json``.

The output is deterministic (sorted keys, fixed gzip header), so an unchanged upstream gives an
unchanged bundle (tests/test_bundle.py regenerates it and compares).
"""

from __future__ import annotations

import argparse
import fnmatch
import gzip
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "linter" / "data" / "crds"

# Keywords of an OpenAPI schema node that linter/validation/convert.py and, for the CEL rules,
# linter/validation/celrules.py read; everything else is dropped.
KEEP = frozenset({
    "type", "properties", "items", "required", "enum", "pattern", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
    "multipleOf", "uniqueItems", "additionalProperties", "nullable", "default", "allOf", "anyOf", "oneOf", "not",
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string", "x-kubernetes-embedded-resource",
    "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-validations",
})
# The members of a CEL rule that SCH002 reads (descriptions of the rule's reason are not kept).
_RULE_KEEP = ("rule", "message", "messageExpression", "fieldPath", "optionalOldSelf")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")
_SHARED_MIN = 256  # bytes of JSON: smaller repeated subtrees are cheaper inline than as a reference


# name, repository, folder in it, licence, file patterns (in SOURCE_DIR), default ref
UPSTREAM: tuple[dict[str, Any], ...] = (
    dict(name="kueue", repository="kubernetes-sigs/kueue", folder="config/components/crd/bases/",
         files=("kueue.x-k8s.io_*.yaml",)),
    dict(name="training-operator", repository="kubeflow/training-operator", folder="manifests/base/crds/",
         files=("kubeflow.org_*.yaml",)),
    dict(name="trainer", repository="kubeflow/trainer", folder="manifests/base/crds/",
         files=("trainer.kubeflow.org_*.yaml",)),
    dict(name="volcano", repository="volcano-sh/volcano", folder="config/crd/",
         files=("batch.volcano.sh_jobs.yaml", "scheduling.volcano.sh_*.yaml")),
    dict(name="kaito", repository="kaito-project/kaito", folder="config/crd/bases/",
         files=("kaito.sh_workspaces.yaml", "kaito.sh_inferencesets.yaml", "kaito.sh_ragengines.yaml")),
    dict(name="kuberay", repository="ray-project/kuberay", folder="ray-operator/config/crd/bases/",
         files=("ray.io_*.yaml",)),
    dict(name="jobset", repository="kubernetes-sigs/jobset", folder="config/components/crd/bases/",
         files=("jobset.x-k8s.io_*.yaml",)),
    dict(name="lws", repository="kubernetes-sigs/lws", folder="config/crd/bases/",
         files=("leaderworkerset.x-k8s.io_*.yaml",)),
    dict(name="kserve", repository="kserve/kserve", folder="charts/kserve-crd/templates/",
         files=("serving.kserve.io_inferenceservices.yaml", "serving.kserve.io_*servingruntimes.yaml")),
    dict(name="kserve-llmisvc", repository="kserve/kserve", folder="charts/kserve-llmisvc-crd/templates/",
         files=("serving.kserve.io_llminferenceservices.yaml",)),
    dict(name="gateway-api-inference-extension", repository="kubernetes-sigs/gateway-api-inference-extension",
         folder="config/crd/bases/", files=("inference.networking.k8s.io_inferencepools.yaml",)),
    dict(name="karpenter-provider-azure", repository="Azure/karpenter-provider-azure", folder="pkg/apis/crds/",
         files=("karpenter.sh_nodepools.yaml", "karpenter.azure.com_*.yaml")),
    dict(name="gpu-operator", repository="NVIDIA/gpu-operator", folder="config/crd/bases/",
         files=("nvidia.com_clusterpolicies.yaml", "nvidia.com_gpuclusters.yaml")),
    # ai-dynamo/dynamo's snapshot is too large to copy here; its fork zxue2/dynamo carries upstream's
    # squash-merged commits unchanged (scripts/upstream-crds/SOURCES.md)
    dict(name="dynamo", repository="zxue2/dynamo (fork of ai-dynamo/dynamo)",
         folder="deploy/cloud/operator/config/crd/bases/", files=("nvidia.com_dynamographdeployments.yaml",)),
    dict(name="prometheus-operator", repository="datreeio/CRDs-catalog (prometheus-operator's CRDs as JSON Schema)",
         folder="monitoring.coreos.com/", files=("json/monitoring.coreos.com_*_v1.json",)),
)
LICENCE = "Apache-2.0"

# CRDs-catalog files name the kind in lower case.
CATALOG_KINDS = {"podmonitor": "PodMonitor", "servicemonitor": "ServiceMonitor", "prometheusrule": "PrometheusRule",
                 "probe": "Probe"}
# Azure Monitor's managed Prometheus serves the same monitor kinds under its own group.
ALIASES = {("monitoring.coreos.com", "PodMonitor"): ("azmonitoring.coreos.com",),
           ("monitoring.coreos.com", "ServiceMonitor"): ("azmonitoring.coreos.com",)}
# Versions served by another upstream project that defines the same group and kind, whose CRD is not
# bundled: SCH003 accepts them, SCH002 has no schema for them.
ELSEWHERE = {("kubeflow.org", "MPIJob"): {"v2beta1": "kubeflow/mpi-operator"}}


def compact(node: Any) -> Any:
    """``node`` with only the keywords in :data:`KEEP`, recursively."""
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key not in KEEP:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: compact(sub) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [compact(sub) for sub in value]
        elif key in ("items", "not") or (key == "additionalProperties" and isinstance(value, dict)):
            out[key] = compact(value)
        elif key == "x-kubernetes-validations" and isinstance(value, list):
            out[key] = [{k: rule[k] for k in _RULE_KEEP if k in rule} for rule in value if isinstance(rule, dict)]
        else:
            out[key] = value
    return out


def _text(node: Any) -> str:
    return json.dumps(node, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def share(schema: Any) -> tuple[Any, list[Any]]:
    """``schema`` with every schema subtree of at least :data:`_SHARED_MIN` bytes that occurs twice or
    more replaced by ``{"$bundle": n}``, and the list of those subtrees (themselves shared inside)."""
    counts: dict[str, int] = {}

    def count(node: Any) -> str:
        for child in _children(node):
            count(child)
        text = _text(node)
        if len(text) >= _SHARED_MIN:
            counts[text] = counts.get(text, 0) + 1
        return text

    count(schema)
    repeated = {text for text, n in counts.items() if n > 1}
    shared: list[Any] = []
    numbers: dict[str, int] = {}

    def rebuild(node: Any, top: bool = False) -> Any:
        if not isinstance(node, dict):
            return node
        text = _text(node)
        if not top and text in repeated:
            if text not in numbers:
                numbers[text] = -1  # reserve: a subtree never contains itself
                body = rebuild(node, top=True)
                numbers[text] = len(shared)
                shared.append(body)
            return {"$bundle": numbers[text]}
        out = dict(node)
        if isinstance(node.get("properties"), dict):
            out["properties"] = {k: rebuild(v) for k, v in node["properties"].items()}
        for key in _SCHEMA_LISTS:
            if isinstance(node.get(key), list):
                out[key] = [rebuild(v) for v in node[key]]
        for key in ("items", "not", "additionalProperties"):
            if isinstance(node.get(key), dict):
                out[key] = rebuild(node[key])
        return out

    return rebuild(schema, top=True), shared


def _children(node: Any) -> list[Any]:
    if not isinstance(node, dict):
        return []
    found: list[Any] = []
    if isinstance(node.get("properties"), dict):
        found.extend(node["properties"].values())
    for key in _SCHEMA_LISTS:
        if isinstance(node.get(key), list):
            found.extend(node[key])
    for key in ("items", "not", "additionalProperties"):
        if isinstance(node.get(key), dict):
            found.append(node[key])
    return [child for child in found if isinstance(child, dict)]


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


def _upstream_name(path: Path) -> str:
    """The file's upstream name (a gzip'd copy's without ``.gz``)."""
    return path.name[:-3] if path.name.endswith(".gz") else path.name


def _read(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.name.endswith(".gz") else data).decode("utf-8")


def _crds(path: Path) -> list[dict[str, Any]]:
    """The CRDs of one upstream file as (group, kind, scope, versions) records."""
    if path.suffix == ".json":
        _, kind, version = path.stem.split("_")
        schema = json.loads(path.read_text("utf-8"))
        return [dict(group=path.stem.split("_")[0], kind=CATALOG_KINDS.get(kind, kind), scope="Namespaced",
                     versions=[dict(name=version, served=True, storage=True, deprecated=False, schema=schema)])]
    found = []
    for document in yaml.load_all(_read(path), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        if not isinstance(document, dict) or document.get("kind") != "CustomResourceDefinition":
            continue
        spec = document["spec"]
        versions = []
        for entry in spec.get("versions") or []:
            versions.append(dict(name=entry["name"], served=entry.get("served", True) is True,
                                 storage=entry.get("storage", False) is True,
                                 deprecated=entry.get("deprecated", False) is True,
                                 warning=entry.get("deprecationWarning"),
                                 schema=(entry.get("schema") or {}).get("openAPIV3Schema")))
        found.append(dict(group=spec["group"], kind=spec["names"]["kind"], scope=spec.get("scope", "Namespaced"),
                          versions=versions))
    return found


def _matches(sources: list[Path], pattern: str) -> list[tuple[Path, Path]]:
    """(folder, file) of each file of ``sources`` matching ``pattern`` (stored plain or gzip'd); a name
    found in two folders is taken from the first."""
    found: dict[str, tuple[Path, Path]] = {}
    for source in sources:
        for path in [*source.glob(pattern), *source.glob(pattern + ".gz")]:
            found.setdefault(_upstream_name(path), (source, path))
    return list(found.values())


def build(source: Path | list[Path], out: Path, refs: dict[str, str]) -> dict[str, Any]:
    """Write the bundle of the CRDs of ``source`` (one folder or several) into ``out``; the index written."""
    folders = [source] if isinstance(source, Path) else list(source)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.json.gz"):
        old.unlink()
    kinds: list[dict[str, Any]] = []
    sources: dict[str, Any] = {}
    for upstream in UPSTREAM:
        located = sorted({m for pattern in upstream["files"] for m in _matches(folders, pattern)},
                          key=lambda m: _upstream_name(m[1]))
        files = [path for _, path in located]
        if not files:
            raise SystemExit(f"{', '.join(map(str, folders))}: no file matches {', '.join(upstream['files'])} ({upstream['repository']})")
        ref = refs.get(upstream["name"])
        if not ref:
            raise SystemExit(f"no ref for {upstream['name']}: give --ref {upstream['name']}=REF")
        sources[upstream["name"]] = dict(repository=upstream["repository"], folder=upstream["folder"], ref=ref,
                                         licence=LICENCE,
                                         files=[p.relative_to(folder).as_posix().removesuffix(".gz")
                                                for folder, p in located])
        for path in files:
            for crd in _crds(path):
                versions = {}
                for version in crd["versions"]:
                    name = f"{crd['group']}_{crd['kind'].lower()}_{version['name']}.json.gz"
                    if isinstance(version["schema"], dict):
                        root, shared = share(compact(version["schema"]))
                        data = _text({"schema": root, "shared": shared}).encode("utf-8")
                        (out / name).write_bytes(_gzip(data))
                        digests = hashlib.sha256(data).hexdigest()[:16]  # index.json changes with any schema
                    else:
                        name = digests = None
                    entry = {k: version[k] for k in ("served", "storage", "deprecated") if k in version}
                    if version.get("warning"):
                        entry["warning"] = version["warning"]
                    entry["file"] = name
                    if digests:
                        entry["sha256"] = digests
                    versions[version["name"]] = entry
                for group in (crd["group"], *ALIASES.get((crd["group"], crd["kind"]), ())):
                    record = dict(group=group, kind=crd["kind"], scope=crd["scope"], source=upstream["name"],
                                  upstream_file=_upstream_name(path), versions=versions)
                    elsewhere = ELSEWHERE.get((group, crd["kind"]))
                    if elsewhere:
                        record["elsewhere"] = elsewhere
                    if group != crd["group"]:
                        record["same_as"] = crd["group"]
                    kinds.append(record)
    kinds.sort(key=lambda k: (k["group"], k["kind"]))
    index = {"generated_by": "scripts/bundle_crds.py", "kinds": kinds, "sources": sources}
    (out / "index.json").write_text(json.dumps(index, indent=1, sort_keys=True) + "\n", "utf-8")
    (out / "SOURCES.md").write_text(_sources_md(index), "utf-8")
    return index


def _sources_md(index: dict[str, Any]) -> str:
    lines = [
        "# Bundled CustomResourceDefinition schemas",
        "",
        "The `openAPIV3Schema` of every version of these upstream CRDs, reduced to what validation reads",
        "(descriptions, examples and formats dropped; CEL rules kept; repeated subtrees stored once). Generated by",
        "`python scripts/bundle_crds.py SOURCE_DIR [--ref NAME=REF …]`; do not edit by hand. All upstream",
        f"projects are licensed {LICENCE} (https://www.apache.org/licenses/LICENSE-2.0); the schemas are",
        "derived from their CRD files unchanged in substance.",
        "",
        "| upstream | repository, folder | ref | licence | kinds (versions; * deprecated, ~ not served) |",
        "|---|---|---|---|---|",
    ]
    for name, source in index["sources"].items():
        kinds = [k for k in index["kinds"] if k["source"] == name]
        shown = "; ".join(f"{k['group']}/{k['kind']} " + ", ".join(
            v + ("*" if e.get("deprecated") else "") + ("" if e.get("served") else "~") for v, e in k["versions"].items())
            for k in kinds)
        lines.append(f"| {name} | {source['repository']}, `{source['folder']}` | `{source['ref']}` | {source['licence']} "
                     f"| {shown} |")
    lines += ["", "`azmonitoring.coreos.com` (Azure Monitor managed Prometheus) serves the prometheus-operator",
              "PodMonitor and ServiceMonitor shapes under its own group: the same schemas are used.", ""]
    return "\n".join(lines)


def _current_refs(out: Path) -> dict[str, str]:
    try:
        index = json.loads((out / "index.json").read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return {name: source["ref"] for name, source in index.get("sources", {}).items()}


def digest(out: Path) -> str:
    """One hash over the bundle's files (for tests comparing a regenerated bundle)."""
    h = hashlib.sha256()
    for path in sorted(out.iterdir()):
        if path.is_file():
            h.update(path.name.encode() + b"\0" + (gzip.decompress(path.read_bytes()) if path.suffix == ".gz"
                                                   else path.read_bytes()))
    return h.hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, nargs="+", help="folders of upstream CRD files (the first holding a name wins)")
    parser.add_argument("--ref", action="append", default=[], metavar="NAME=REF",
                        help=f"upstream ref (names: {', '.join(u['name'] for u in UPSTREAM)})")
    parser.add_argument("--out", type=Path, default=OUT, help="bundle folder (default: linter/data/crds)")
    args = parser.parse_args(argv)
    refs = _current_refs(args.out)
    for item in args.ref:
        name, sep, ref = item.partition("=")
        if not sep or name not in {u["name"] for u in UPSTREAM}:
            parser.error(f"--ref {item!r}: expected NAME=REF with NAME one of the upstream names")
        refs[name] = ref
    index = build(args.source, args.out, refs)
    size = sum(p.stat().st_size for p in args.out.iterdir())
    print(f"{args.out}: {len(index['kinds'])} kinds, {sum(len(k['versions']) for k in index['kinds'])} versions, "
          f"{size:,} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
