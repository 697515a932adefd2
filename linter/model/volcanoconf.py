"""Whether the project's Volcano scheduler evicts running jobs: the ``actions`` of its configuration (QUE012).

Volcano's scheduler runs the actions its configuration lists, in order, each scheduling cycle
(``actions: "enqueue, allocate, backfill"``, the configuration Volcano's chart and installer
ship, and the scheduler's built-in default). Only two of them take resources from running pods:
``preempt`` (a higher-priority job of one queue evicts lower-priority ones) and ``reclaim`` (a
queue takes back the share another queue borrowed). A configuration is a string value of a
ConfigMap under a key ending in ``scheduler.conf`` (the chart's ``volcano-scheduler.conf``, read
through ``--scheduler-conf``), parsed as YAML; one whose ``actions`` is templated or not a string
is not known (never guessed).

For a workload, the configurations that govern it are those of its own file, else of its folder,
else all of them, among those that go with it (:mod:`linter.model.locality`), as for Kueue's
Configurations (:func:`linter.model.kueueconfig.nearest`). :func:`volcano_evicts` says False only
when every one of them lists neither action; without a configuration in the project, what the
installed scheduler runs is not known here, and Volcano is taken to evict.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct

from mlops_lint.model.k8s import is_templated
from mlops_lint.model.kueueconfig import nearest
from mlops_lint.model.locality import together, unit_of
from mlops_lint.model.mig import parse_embedded_yaml
from mlops_lint.model.tree import YMap

EVICTING = ("preempt", "reclaim")


class SchedulerConf(Struct, frozen=True):
    """The actions one Volcano scheduler configuration runs, and the file that holds it."""

    actions: tuple[str, ...]
    path: str


def configurations(index: Any) -> tuple[SchedulerConf, ...]:
    """The project's Volcano scheduler configurations whose actions are known (memoised per index)."""
    def build() -> tuple[SchedulerConf, ...]:
        found: list[SchedulerConf] = []
        for obj in index.of_kind("ConfigMap"):
            data = obj.body.get_map("data") if obj.group == "" else None
            for key, text in (data.items() if data is not None else ()):
                if not (isinstance(key, str) and key.endswith("scheduler.conf") and isinstance(text, str)
                        and "actions" in text):
                    continue
                tree = parse_embedded_yaml(text)
                actions = tree.get("actions") if isinstance(tree, YMap) else None
                if not isinstance(actions, str) or is_templated(actions):
                    continue
                found.append(SchedulerConf(tuple(a.strip() for a in actions.split(",") if a.strip()), obj.path))
        return tuple(found)

    return index.memo("volcano-scheduler-confs", build)


def volcano_evicts(obj: Any, index: Any, config: Any) -> bool:
    """Whether Volcano's scheduler may evict the running workload ``obj`` (preempt or reclaim):
    False only when every project configuration that governs it lists neither action."""
    if index is None:
        return True
    confs = configurations(index)
    if not confs:
        return True
    unit = unit_of(index, config, [obj.path, *(c.path for c in confs)])
    governing = nearest([c for c in confs if together(unit, c.path, obj.path)], obj.path)
    return not governing or any(action in EVICTING for c in governing for action in c.actions)
