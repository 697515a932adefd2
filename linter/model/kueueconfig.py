"""Which job types the project's Kueue manager ``Configuration`` lets Kueue manage (QUE019 and the QUE rules that assume Kueue admits a queued workload).

Kueue's manager reads a ``Configuration`` (``config.kueue.x-k8s.io`` v1beta1 or v1beta2): a
document of its own (Kueue's ``controller_manager_config.yaml``) or a string value of a ConfigMap
(the installed manifests' ``kueue-manager-config``). Its ``integrations.frameworks`` lists the job
types Kueue manages, under Kueue's integration names (:data:`FRAMEWORKS`); an empty or missing
list gets Kueue's default, ``batch/job`` only (``SetDefaults_Configuration``);
``integrations.externalFrameworks`` (``Kind.version.group``) counts too. A Configuration whose
frameworks are templated or not a list is not known (None: never guessed).

For a workload, the Configurations that govern it are those of its own file, else of its folder,
else all of them (samples and overlays keep several), among those that go with it
(:mod:`linter.model.locality`); :func:`ignored_by_kueue` says whether every one of them leaves its
framework out: then Kueue's webhook does nothing with its queue-name label, and nothing Kueue
would do with it (un-suspend it, admit it under a quota, preempt it, place it by flavor or
topology) happens. Without a Configuration in the project, which integrations the installed Kueue
enables is not known here, and Kueue is taken to manage every kind it can.
"""

from __future__ import annotations

import posixpath
from typing import Any, Iterable

from msgspec import Struct

from mlops_lint.model.document import ObjectStub
from mlops_lint.model.k8s import is_templated
from mlops_lint.model.locality import together, unit_of
from mlops_lint.model.mig import parse_embedded_yaml
from mlops_lint.model.position import Span
from mlops_lint.model.tree import YMap

CONFIG_GROUP = "config.kueue.x-k8s.io"
DEFAULT_FRAMEWORKS = ("batch/job",)  # Kueue's SetDefaults_Configuration: an empty list gets this one
# (group, kind) -> the integration that manages it (Kueue's jobframework names); a CronJob's Jobs are batch Jobs
FRAMEWORKS = {
    ("batch", "Job"): "batch/job",
    ("batch", "CronJob"): "batch/job",
    ("jobset.x-k8s.io", "JobSet"): "jobset.x-k8s.io/jobset",
    ("ray.io", "RayJob"): "ray.io/rayjob",
    ("ray.io", "RayCluster"): "ray.io/raycluster",
    ("trainer.kubeflow.org", "TrainJob"): "trainer.kubeflow.org/trainjob",
    ("workload.codeflare.dev", "AppWrapper"): "workload.codeflare.dev/appwrapper",
    **{("kubeflow.org", kind): f"kubeflow.org/{kind.lower()}"
       for kind in ("PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob")},
    ("", "Pod"): "pod",
    ("apps", "Deployment"): "deployment",
    ("apps", "StatefulSet"): "statefulset",
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): "leaderworkerset.x-k8s.io/leaderworkerset",
}


GATED = ("pod", "deployment", "statefulset", "leaderworkerset.x-k8s.io/leaderworkerset")  # no suspend: Kueue gates the pods


class KueueConfiguration(Struct, frozen=True):
    """What a Kueue ``Configuration`` enables: its frameworks (Kueue's default when it lists none),
    its external frameworks' ``(kind, group)``, and where it is said (for the message)."""

    frameworks: tuple[str, ...]
    external: tuple[tuple[str, str], ...]
    defaulted: bool
    where: str
    path: str


class QueuedWorkload(Struct, frozen=True):
    obj: ObjectStub
    span: Span
    node: tuple
    framework: str
    group: str
    queue: str


class _Place:
    """Lines inside a ConfigMap value, in the file (a literal block under its key), else the key's."""

    def __init__(self, data: YMap, key: str, text: str):
        self.key_line = data.key_span(key).line
        value = data.vspans.get(key)
        height = value.end_line - value.line if value is not None else 0
        self.offset = value.line if value is not None and height >= 1 \
            and text.count("\n") in (height - 1, height - 2, height) else None

    def line(self, span: Span) -> int:
        return self.key_line if self.offset is None else span.line + self.offset


def configuration(body: YMap, describe: str, path: str, place) -> KueueConfiguration | None:
    """The frameworks ``body`` (a Configuration) enables; None when they are not known (templated,
    not a list)."""
    integrations = body.get("integrations")
    if integrations is not None and not isinstance(integrations, YMap):
        return None
    listed = integrations.get("frameworks") if integrations is not None else None
    if listed is not None and not isinstance(listed, list):
        return None
    names = []
    for name in listed or ():
        if not isinstance(name, str) or is_templated(name):
            return None
        names.append(name.strip())
    external = []
    for name in (integrations.get("externalFrameworks") if integrations is not None else None) or ():
        if not isinstance(name, str) or is_templated(name):
            return None
        kind, _, rest = name.strip().partition(".")
        external.append((kind, rest.partition(".")[2]))  # Kind.version.group
    if integrations is not None and "frameworks" in integrations.kspans:
        line = place(integrations.key_span("frameworks"))
    elif integrations is not None:
        line = place(body.key_span("integrations"))
    else:
        line = place(body.span)
    if names:
        listed_text = ", ".join(f"`{n}`" for n in names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        said = f"enables {listed_text}"
    else:
        said = "lists no `integrations.frameworks`, so Kueue enables only `batch/job`"
    return KueueConfiguration(tuple(names) or DEFAULT_FRAMEWORKS, tuple(external), not names,
                              f"{describe} ({path}:{line}) {said}", path)


def configmap_configurations(obj):
    data = obj.body.get_map("data")
    if data is None:
        return
    for key, text in data.items():
        if not isinstance(text, str) or CONFIG_GROUP not in text:
            continue
        tree = parse_embedded_yaml(text)
        if not isinstance(tree, YMap) or tree.get("kind") != "Configuration" \
                or not str(tree.get("apiVersion", "")).startswith(CONFIG_GROUP + "/"):
            continue
        place = _Place(data, key, text)
        found = configuration(tree, f"the Kueue Configuration in ConfigMap `{obj.name}` key `{key}`", obj.path,
                               place.line)
        if found is not None:
            yield found


def nearest(configs: list[KueueConfiguration], path: str) -> list[KueueConfiguration]:
    """The Configurations of the workload's file, else of its folder, else all (samples and
    overlays keep several: a verdict must hold for each of the nearest)."""
    same = [c for c in configs if c.path == path]
    if same:
        return same
    folder = posixpath.dirname(path)
    near = [c for c in configs if posixpath.dirname(c.path) == folder]
    return near or configs


def enables(config: KueueConfiguration, kind: str, group: str, framework: str) -> bool:
    """Whether ``config`` enables the integration ``framework`` (of objects of ``kind`` in API ``group``)."""
    return framework in config.frameworks or (kind, group) in config.external


def configurations(index: Any) -> tuple[KueueConfiguration, ...]:
    """The project's Kueue Configurations whose frameworks are known (memoised per index)."""
    def build() -> tuple[KueueConfiguration, ...]:
        found: list[KueueConfiguration] = []
        for obj in index.of_kind("Configuration"):
            if obj.group == CONFIG_GROUP:
                config = configuration(obj.body, "Kueue Configuration", obj.path, lambda span: span.line)
                if config is not None:
                    found.append(config)
        for obj in index.of_kind("ConfigMap"):
            if obj.group == "":
                found.extend(configmap_configurations(obj))
        return tuple(found)

    return index.memo("kueue-configurations", build)


def ignored_by_kueue(obj: Any, index: Any, config: Any) -> tuple[KueueConfiguration, ...]:
    """The Configurations that govern ``obj`` when every one leaves its framework out (Kueue does
    not manage it: QUE019's finding), else an empty tuple (Kueue may manage it, or nothing here
    says which integrations the installed Kueue enables)."""
    framework = FRAMEWORKS.get((obj.group, obj.kind))
    if framework is None or index is None:
        return ()
    configs = configurations(index)
    if not configs:
        return ()
    unit = unit_of(index, config, [obj.path, *(c.path for c in configs)])
    return left_out(configs, unit, obj.path, obj.kind, obj.group, framework)


def left_out(configs: Iterable[KueueConfiguration], unit: Any, path: str, kind: str, group: str,
             framework: str) -> tuple[KueueConfiguration, ...]:
    """The Configurations that govern a workload of ``kind`` at ``path`` (its locality ``unit``'s,
    the nearest) when every one leaves its ``framework`` out, else an empty tuple."""
    governing = nearest([c for c in configs if together(unit, c.path, path)], path)
    if not governing or any(enables(c, kind, group, framework) for c in governing):
        return ()
    return tuple(governing)
