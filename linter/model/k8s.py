"""Typed views over Kubernetes objects that carry pods.

This is the one place that knows where each kind keeps its pod templates
(``spec.template.spec``, ``spec.jobTemplate.spec.template.spec``,
``spec.pytorchReplicaSpecs.<role>.template.spec``, ``spec.tasks[i].template.spec`` …), like
kube-linter's ``extract`` package. Rules receive :class:`Workload`, :class:`PodSpec` and
:class:`Container` views and never walk raw paths themselves.

Every view records its ``path`` inside the object (for baseline fingerprints) and the spans a
finding needs: the bad value, else its key, else (for a missing field) the parent key.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any, Iterator

from msgspec import Struct, field

from mlops_lint.model.document import K8sObject
from mlops_lint.model.memo import once
from mlops_lint.model.position import Span
from mlops_lint.model.placeholder import has_placeholder
from mlops_lint.model.quantity import parse_quantity
from mlops_lint.model.selectors import Placement, placement_of
from mlops_lint.model.tree import YMap, YSeq

Path = tuple[str | int, ...]

# Kinds whose single pod template sits at spec.template (apps/v1, batch/v1, v1).
_TEMPLATE_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job"}
# Kubeflow training operator: kind -> the field holding {role: ReplicaSpec}.
REPLICA_SPEC_FIELDS = {
    "PyTorchJob": "pytorchReplicaSpecs",
    "TFJob": "tfReplicaSpecs",
    "MPIJob": "mpiReplicaSpecs",
    "XGBoostJob": "xgbReplicaSpecs",
    "PaddleJob": "paddleReplicaSpecs",
    "JAXJob": "jaxReplicaSpecs",
}
CONTAINER_FIELDS = ("containers", "initContainers", "ephemeralContainers")


class Resource(Struct, frozen=True):
    """One entry of ``resources.requests`` or ``resources.limits``."""

    name: str
    raw: Any
    value: Fraction | None  # None when ``raw`` is not a valid quantity
    key_span: Span
    value_span: Span


class EnvVar(Struct, frozen=True):
    name: str
    value: Any  # the literal ``value``; None when absent
    from_ref: bool  # set through valueFrom (not a literal)
    span: Span  # the ``name:`` of the entry
    value_span: Span  # the literal value, else the entry
    path: Path


def _resources(section: Any) -> dict[str, Resource]:
    if not isinstance(section, YMap):
        return {}
    return {
        str(name): Resource(str(name), raw, parse_quantity(raw), section.key_span(name), section.value_span(name))
        for name, raw in section.items()
    }


class Container(Struct, eq=False):
    """A container, init container or ephemeral container of a pod template."""

    pod: "PodSpec"
    body: YMap
    field: str  # "containers" | "initContainers" | "ephemeralContainers"
    index: int
    path: Path
    # what is derived from the container alone, on first use (requests and limits, which dozens of
    # rules read; checkpoint evidence): views are read-only
    _sections: dict = field(default_factory=dict)
    # the name the operator gives a container its kind describes without a list entry (KServe's
    # ``model:`` container is ``kserve-container``)
    default_name: str | None = None

    @property
    def obj(self) -> K8sObject:
        return self.pod.obj

    @property
    def name(self) -> str:
        name = self.body.get("name")
        if isinstance(name, str):
            return name
        return self.default_name or f"#{self.index}"

    @property
    def span(self) -> Span:
        """The container's ``name:`` key (where a reader finds it), else its list (or, for a
        container that is a map of its own, such as KServe's ``model:``, its first key)."""
        found = self.body.kspans.get("name")
        if found is not None:
            return found
        if self.field in self.pod.spec.kspans:
            return self.pod.spec.value_span(self.field)
        return next(iter(self.body.kspans.values()), self.body.span)

    @property
    def resources_from_trainjob(self) -> bool:
        """The trainer container of a Kubeflow Trainer v2 runtime (job ``node``, container
        ``node``): the TrainJobs that run it set its resources (``resourcesPerNode``), so its own
        are judged through their views (``linter.model.trainjob``)."""
        obj = self.pod.obj
        return (obj.group == TRAINER and obj.kind in ("TrainingRuntime", "ClusterTrainingRuntime")
                and self.pod.runs_trainer and self.name == "node")

    @property
    def is_init(self) -> bool:
        return self.field == "initContainers"

    @property
    def is_ephemeral(self) -> bool:
        return self.field == "ephemeralContainers"

    @property
    def is_sidecar(self) -> bool:
        """A native sidecar: an init container with ``restartPolicy: Always`` (Kubernetes 1.28+)."""
        return self.is_init and self.body.get("restartPolicy") == "Always"

    @property
    def kind_label(self) -> str:
        if self.is_sidecar:
            return "sidecar container"
        return {"containers": "container", "initContainers": "init container"}.get(self.field, "ephemeral container")

    @property
    def image(self) -> str | None:
        image = self.body.get("image")
        return image if isinstance(image, str) else None

    @property
    def command_strings(self) -> list[str]:
        """The string items of ``command``, then of ``args`` (computed once: several rules and
        helpers read them; callers must not change the list)."""
        found = self._sections.get("command")
        if found is None:
            found = self._sections["command"] = [item for field in ("command", "args")
                                                 for item in self.body.get_seq(field) or () if isinstance(item, str)]
        return found

    @property
    def image_span(self) -> Span:
        return self.body.value_span("image") if "image" in self.body else self.span

    @property
    def resources_node(self) -> YMap | None:
        return self.body.get_map("resources")

    @property
    def resources_span(self) -> Span:
        """The ``resources:`` key, else the container (a missing field's parent)."""
        return self.body.kspans.get("resources") or self.span

    def section(self, which: str) -> YMap | None:
        resources = self.resources_node
        return resources.get_map(which) if resources is not None else None

    def section_span(self, which: str) -> Span:
        """``requests:``/``limits:`` key, else ``resources:``, else the container."""
        resources = self.resources_node
        if resources is not None and which in resources.kspans:
            return resources.kspans[which]
        return self.resources_span

    @property
    def requests(self) -> dict[str, Resource]:
        """``resources.requests`` parsed (shared by every rule: do not modify)."""
        found = self._sections.get("requests")
        if found is None:
            found = self._sections["requests"] = _resources(self.section("requests"))
        return found

    @property
    def limits(self) -> dict[str, Resource]:
        """``resources.limits`` parsed (shared by every rule: do not modify)."""
        found = self._sections.get("limits")
        if found is None:
            found = self._sections["limits"] = _resources(self.section("limits"))
        return found

    @property
    def env(self) -> list[EnvVar]:
        """The entries of ``env`` with a name (parsed once; a fresh list each call)."""
        found = self._sections.get("env")
        if found is None:
            found = self._sections["env"] = tuple(self._env())
        return list(found)

    def env_value(self, name: str) -> EnvVar | None:
        """The effective entry for ``name`` (the last one wins, as in Kubernetes)."""
        found = None
        for var in self._sections.get("env") or self.env:
            if var.name == name:
                found = var
        return found

    def _env(self) -> list[EnvVar]:
        env = self.body.get_seq("env")
        result: list[EnvVar] = []
        if env is None:
            return result
        for index, item in env.maps():
            name = item.get("name")
            if not isinstance(name, str):
                continue
            result.append(
                EnvVar(
                    name=name,
                    value=item.get("value"),
                    from_ref="valueFrom" in item,
                    span=item.kspans.get("name", env.item_span(index)),
                    value_span=item.vspans.get("value") or item.kspans.get("name", env.item_span(index)),
                    path=self.path + ("env", index),
                )
            )
        return result

    @property
    def volume_mounts(self) -> list[tuple[int, YMap]]:
        mounts = self.body.get_seq("volumeMounts")
        return list(mounts.maps()) if mounts is not None else []

    @property
    def security_context(self) -> YMap | None:
        return self.body.get_map("securityContext")


class PodSpec(Struct, eq=False, dict=True):
    """One pod template (or a bare Pod's spec) inside a workload."""

    obj: K8sObject
    spec: YMap
    path: Path  # path of ``spec`` inside the object body
    template: YMap | None  # the PodTemplateSpec holding ``metadata`` and ``spec`` (None for a Pod)
    role: str | None = None  # replica type (Master, Worker, …) or Volcano task name
    replicas: int | None = None  # pods this template runs at once, when the kind says so
    workload: "Workload | None" = None
    # containers that are maps of their own beside the spec's lists (KServe's ``model:``, the
    # model server): (field, body, path, default name)
    extra: tuple = ()
    where: str | None = None  # how a generic view names the template (its node path)
    anchor: Span | None = None  # the key a finding about the whole pod points at, when not ``spec:``
    # a TrainJob's view of its runtime's pod (linter.model.trainjob): containers replaced by their
    # merged form, (field, index, body, path, origin of each key, path in the runtime)
    merged: tuple = ()
    origin: "PodSpec | None" = None  # the runtime's own view of this pod
    patched: dict = field(default_factory=dict)  # pod spec key -> node path of the TrainJob's runtimePatches
    step: str | None = None  # a Trainer v2 runtime job's trainer.kubeflow.org/trainjob-ancestor-step label
    # node path in the view -> node path in the object, for values the view takes from elsewhere in
    # the object (a Dynamo component's ``resources.limits.gpu``, read as its main container's GPUs)
    borrowed: dict = field(default_factory=dict)
    written: bool = True  # False: the object writes no pod spec (a Dynamo component without extraPodSpec)

    @property
    def runs_trainer(self) -> bool:
        """A Trainer v2 runtime's job that runs the trainer: labelled ``trainjob-ancestor-step:
        trainer`` (an MPI runtime's launcher too), or the job ``node``."""
        return self.step == "trainer" or self.role == "node"

    @property
    def metadata(self) -> YMap | None:
        if self.template is None:
            return self.obj.metadata
        return self.template.get_map("metadata")

    @property
    def labels(self) -> dict[str, Any]:
        meta = self.metadata
        labels = meta.get("labels") if meta is not None else None
        return labels if isinstance(labels, dict) else {}

    @property
    def span(self) -> Span:
        """The template's ``spec:`` key (or the key holding an inline pod spec), else the object."""
        if self.anchor is not None:
            return self.anchor
        if self.template is not None and "spec" in self.template.kspans:
            return self.template.kspans["spec"]
        if self.template is None and "spec" in self.obj.body.kspans:
            return self.obj.body.kspans["spec"]
        return self.obj.span

    def describe(self) -> str:
        if self.where is not None:
            return f"pod template at `{self.where}`"
        return f"{self.role} replicas" if self.role else "pod template"

    @cached_property
    def containers(self) -> list[Container]:
        """Every container of the template: app containers, then init, then ephemeral ones."""
        result: list[Container] = []
        for field_name in CONTAINER_FIELDS:
            items = self.spec.get_seq(field_name)
            if items is None:
                continue
            replaced = {index: (body, path) for field, index, body, path, *_ in self.merged if field == field_name}
            for index, body in items.maps():
                if index in replaced:
                    result.append(Container(self, replaced[index][0], field_name, index, replaced[index][1]))
                    continue
                result.append(Container(self, body, field_name, index, self.path + (field_name, index)))
        for field_name, body, path, name in self.extra:
            result.append(Container(self, body, field_name, 0, path, default_name=name))
        return result

    @cached_property
    def app_containers(self) -> list[Container]:
        """The app containers (read-only: some 5,000 reads a run share one list)."""
        return [c for c in self.containers if c.field == "containers"]

    @property
    def init_containers(self) -> list[Container]:
        return [c for c in self.containers if c.field == "initContainers"]

    @property
    def node_selector(self) -> dict[str, Any]:
        selector = self.spec.get("nodeSelector")
        return selector if isinstance(selector, dict) else {}

    @property
    def tolerations(self) -> list[tuple[int, YMap]]:
        items = self.spec.get_seq("tolerations")
        return list(items.maps()) if items is not None else []

    @property
    def volumes(self) -> list[tuple[int, YMap]]:
        items = self.spec.get_seq("volumes")
        return list(items.maps()) if items is not None else []

    @cached_property
    def uses_gpu(self) -> bool:
        """Whether any container requests or limits a GPU (``nvidia.com/gpu``, MIG, ``amd.com/gpu``)
        or takes one through a resource claim (``linter.model.dra``); read once per pod."""
        return any(container_uses_gpu(c) for c in self.containers)

    @cached_property
    def placement(self) -> "Placement":
        """nodeSelector and required node affinity (``linter.model.selectors.Placement``)."""
        return placement_of(self.spec)

    @property
    def priority_class_name(self) -> str | None:
        value = self.spec.get("priorityClassName")
        return value if isinstance(value, str) else None


# Kinds that run to completion: training, fine-tuning, batch evaluation (group, kind).
TRAINING_KINDS = frozenset({
    ("batch", "Job"), ("batch", "CronJob"), ("batch.volcano.sh", "Job"), ("ray.io", "RayJob"),
    ("jobset.x-k8s.io", "JobSet"), *(("kubeflow.org", kind) for kind in REPLICA_SPEC_FIELDS),
    ("ray.io", "RayCronJob"), ("trainer.kubeflow.org", "TrainJob"), ("trainer.kubeflow.org", "TrainingRuntime"),
    ("trainer.kubeflow.org", "ClusterTrainingRuntime"), ("kubeflow.org", "Experiment"),
})


# The groups of the ML operators' kinds: whatever they run trains, tunes or serves a model.
ML_GROUPS = frozenset({"kubeflow.org", "trainer.kubeflow.org", "ray.io"})
_WORDS = re.compile(r"[a-z0-9]+")
# whole words (short ones, which begin too many others: "ray" in "array", "tf" in "tfvars")
_ML_WORDS = frozenset({"ml", "ai", "tf", "jax", "flax", "ray", "llm", "gpt", "bert", "llama", "nemo", "lora", "tune",
                       "tuning", "sweep", "hpo", "katib", "accelerate"})
# word beginnings ("train" but not "constraint": words are split at every non-alphanumeric)
_ML_STEMS = ("train", "pretrain", "retrain", "finetun", "python", "torch", "pytorch", "tensorflow", "keras",
             "mxnet", "paddle", "mindspore", "horovod", "deepspeed", "megatron", "transformers", "huggingface",
             "xgboost", "lightgbm", "sklearn", "scikit", "mnist", "checkpoint", "epoch", "embed", "learn", "neural")


def _ml_word(word: str) -> bool:
    return word in _ML_WORDS or word.startswith(_ML_STEMS)


def _sign_word(text: str) -> str | None:
    """The word of ``text`` that shows ML, for messages: a framework or training word (``trainer``,
    ``pytorch``) before a short one (``ml`` of a registry path ``myacr.azurecr.io/ml/trainer``)."""
    words = _WORDS.findall(text.lower())
    return next((w for w in words if w.startswith(_ML_STEMS)), None) or next((w for w in words if w in _ML_WORDS), None)


# what a name (the object's, a container's, a priority class's) may say: training itself or a
# framework, not the words a benchmark, a parameter sweep or a script shares with ML (``sweep``,
# ``tune``, ``ai``, ``python``)
_NAME_STEMS = ("train", "pretrain", "retrain", "finetun", "torch", "pytorch", "tensorflow", "keras", "horovod",
               "deepspeed", "megatron", "mnist")


def _name_word(word: str) -> bool:
    return word.startswith(_NAME_STEMS)


# words of a training run (a sign of training stronger than a framework's name or `python`)
TRAINING_WORDS = ("train", "pretrain", "retrain", "finetun", "torchrun", "deepspeed", "horovod", "epoch", "accelerate")
_TRAINING_WORD = re.compile(r"[a-z][a-z0-9]*")
# and on the CPU pods of Ray and MPI: Ray Tune searches and RLlib train too, and MNIST is every
# framework's first model
_GENERAL_TRAINING = TRAINING_WORDS + ("tune", "rllib", "mnist", "xgboost", "lightgbm", "fit")


def runs_any_program(workload: "Workload") -> bool:
    """A Ray workload (``ray.io``) or a Kubeflow ``MPIJob``: their operators run whatever program
    they are given, batches and demos (a Ray Data resize, a counter, MPI's `pi`) as often as
    training, so their kind alone does not show that they train."""
    return workload.obj.group == "ray.io" or (workload.obj.group, workload.kind) == ("kubeflow.org", "MPIJob")


def training_word(workload: "Workload") -> str | None:
    """A training word in a RayJob's entrypoint, or in the commands, images or names of the
    workload's containers (a Trainer v2 TrainJob's runtime containers are its pods)."""
    spec = workload.obj.body.get_map("spec")
    entrypoint = spec.get("entrypoint") if spec is not None else None
    texts = [entrypoint] if isinstance(entrypoint, str) else []
    texts += (text for container in workload.containers()
              for text in (*container.command_strings, container.image or "", container.name))
    for text in texts:
        found = next((w for w in _TRAINING_WORD.findall(text.lower()) if w.startswith(_GENERAL_TRAINING)), None)
        if found is not None:
            return found
    return None


def trains_shown(workload: "Workload") -> str | None:
    """Why the workload trains (:attr:`Workload.trains`), for messages, else None; a Ray or MPI
    workload on CPUs (:func:`runs_any_program`), or one whose sign of training is Ray itself (a Ray
    image: a Volcano Job holding a Ray cluster), trains only when its entrypoint or pods show a
    training word (:func:`training_word`), and the reason then names it. With a GPU it held, the
    kind is enough (:attr:`Workload.trains` already leaves out `nvidia-smi` smoke tests)."""
    sign = workload.trains
    if sign is None or workload.uses_gpu or not (runs_any_program(workload) or sign.startswith("`ray` ")):
        return sign
    found = training_word(workload)
    return f"{sign}, `{found}` in its entrypoint or pods" if found is not None else None


# Programs that only look at the node, print or wait: a pod whose every app container runs only
# these is a smoke test or a placeholder (``nvidia-smi``, ``sleep infinity``), not a trainer, even on
# a GPU and in a framework's image
IDLE_PROGRAMS = frozenset({
    "nvidia-smi", "rocm-smi", "amd-smi", "dcgmi", "nvcc", "clinfo", "lspci", "nproc", "uname", "hostname", "df",
    "free", "sleep", "pause", "echo", "printf", "true", "cat", "ls", "env", "printenv", "date", "id", "whoami",
    "tail", "wait", "exit", ":", "set", "export", "trap",
})
_SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh"})
_SHELL_KEYWORDS = frozenset({"while", "until", "do", "done", "then", "else", "fi", "if", "!", "{", "}", "(", ")", "exec"})
_SEGMENTS = re.compile(r"&&|\|\||[;&|\n]")
_COMMENT = re.compile(r"(?:^|(?<=\s))#[^\n]*")  # a shell comment: `#` beginning a word, to the line's end


def _programs(strings: list[str]) -> list[str] | None:
    """The programs ``command`` + ``args`` run (a ``sh -c`` script's commands, split at ``;``,
    ``&&``, ``||``, ``|`` and newlines), by base name; None when they cannot be told."""
    if not strings:
        return None
    first = strings[0].strip().rpartition("/")[2]  # the base name (posixpath.basename, without its call)
    if first not in _SHELLS:
        return [first]
    flag = next((i for i, arg in enumerate(strings[1:], 1) if arg.startswith("-") and not arg.startswith("--")
                 and "c" in arg), None)  # -c, -lc, -ec
    script = strings[flag + 1:] if flag is not None else None
    if not script:
        return None
    programs = []
    for segment in _SEGMENTS.split(_COMMENT.sub("", script[0])):
        words = [w for w in segment.split() if "=" not in w or w.startswith(("=", "-"))]
        while words and words[0] in _SHELL_KEYWORDS:
            words.pop(0)
        if words:
            programs.append(words[0].rpartition("/")[2])
    return programs or None


# NVIDIA's CUDA sample images (``vectoradd-cuda12.5.0``, ``nbody``, ``devicequery`` tags): the GPU
# checks of the GPU Operator's and NVIDIA's docs. They hold the compiled samples and no framework,
# so whatever they run (their entrypoint, ``nbody -benchmark``) checks the GPU and trains nothing.
GPU_CHECK_IMAGES = frozenset({"nvcr.io/nvidia/k8s/cuda-sample"})


def idle_programs(container: "Container") -> list[str] | None:
    """The programs of a container that only looks at the node or waits (``nvidia-smi``,
    ``sleep``, a CUDA sample image), else None (it runs something else, or its image's own
    entrypoint; computed once per container)."""
    found = container._sections.get("idle", _UNSET)
    if found is _UNSET:
        found = container._sections["idle"] = _idle_programs(container)
    return found


_UNSET = object()


def _idle_programs(container: "Container") -> list[str] | None:
    reference = image_reference(container.image)
    if reference is not None and reference[0] in GPU_CHECK_IMAGES:
        return [f"cuda-sample:{reference[1]}" if reference[1] else "cuda-sample"]
    programs = _programs(container.command_strings)
    if programs is None or not all(p in IDLE_PROGRAMS for p in programs):
        return None
    return programs


class Workload(Struct, eq=False):
    """An object that carries pods, with every pod template it holds."""

    obj: K8sObject
    pods: list[PodSpec] = field(default_factory=list)
    # read through generic pod views (a kind whose meaning is not modelled): container and pod
    # rules run on its pods, workload rules (replicas, training, queues) do not
    generic: bool = False
    # the ProjectIndex that built the view (what its pods refer to: resource claims, runtimes)
    project: Any = None
    runtime: Any = None  # a TrainJob's runtime (its pods are the runtime's, merged)
    origin: "Workload | None" = None  # the runtime's own view

    @property
    def route(self) -> Any:
        """For a TrainJob's views: where each finding belongs (``linter.model.trainjob.route``);
        for an InferenceService's, whether its model container merged with its ServingRuntime's
        gets it (``linter.model.kserve.route``)."""
        if self.runtime is None:
            if self.obj.kind == "InferenceService" and self.obj.group == KSERVE:
                from mlops_lint.model.kserve import route as kserve_route

                return kserve_route
            if (self.obj.kind, self.obj.group) in FILLED_KINDS:
                from mlops_lint.model.filled import route as filled_route

                return filled_route
            return None
        from mlops_lint.model.trainjob import route

        return route
    # what model helpers derive from the workload alone (and their other inputs), on first use:
    # views are read-only
    _memo: dict = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return self.obj.kind

    @property
    def is_training(self) -> bool:
        """A run-to-completion workload (Job, CronJob, Kubeflow and Volcano jobs, RayJob, JobSet),
        or a bare Pod that is not restarted forever (``restartPolicy`` Never or OnFailure); read once."""
        return once(self, "is_training", self._is_training)

    def _is_training(self) -> bool:
        if self.generic:
            return False
        if (self.obj.group, self.kind) in TRAINING_KINDS:
            return True
        if self.kind == "Pod" and self.obj.group == "" and self.pods:
            return self.pods[0].spec.get("restartPolicy") in ("Never", "OnFailure")
        return False

    @property
    def uses_gpu(self) -> bool:
        return once(self, "uses_gpu", lambda: any(pod.uses_gpu for pod in self.pods))

    @property
    def trains(self) -> str | None:
        """Why the workload is taken to train a model, for messages, else None: it runs to
        completion (:attr:`is_training`) and shows it (:attr:`ml_sign`), or holds a GPU and is not
        a smoke test that only runs ``nvidia-smi`` or ``sleep`` (:attr:`idle`). The rules about
        what a trainer needs (shared memory, Guaranteed QoS, checkpoints) ask for this."""
        return once(self, "trains", self._trains)

    def _trains(self) -> str | None:
        if not self.is_training:
            return None
        sign = self.ml_sign
        if sign is not None:
            return sign
        if self.uses_gpu and self.idle is None:
            return "it uses a GPU"
        return None

    @property
    def runs_ml(self) -> bool:
        """Whether the workload shows it trains (or tunes) a model, beyond running to completion
        (:attr:`ml_sign` says how). Queueing demos, ``sleep`` and web-server Jobs and ``nvidia-smi``
        smoke tests show none: rules about what a trainer needs (checkpoints, shared memory) that
        are not already about a GPU ask for this."""
        return self.ml_sign is not None

    @property
    def ml_sign(self) -> str | None:
        """What shows the workload trains, for messages (``it is a kubeflow.org PyTorchJob``,
        ```torchrun` in the command of container `trainer```), else None: a kind of the ML operators
        (Kubeflow, Kubeflow Trainer, KubeRay, a Katib Experiment's trials), else a word of an ML
        framework or of training in an image, command, argument or environment variable of its
        pods (``pytorch``, ``train.py``, ``--epochs``, ``CHECKPOINT_DIR``, ``python`` …), else
        training or a framework in a name (the object's, a container's, its priority class: a
        ``…-sweep`` benchmark Job is not taken for training by its name). A workload whose every
        app container only runs ``nvidia-smi``, ``sleep`` and the like (:attr:`idle`) shows none,
        whatever its kind, image and names say: an operator's job whose pods only ``sleep
        infinity`` is a placeholder or an interactive session (Kubeflow Trainer's Flux example,
        where a user shells in), whose eviction loses no training run."""
        return once(self, "ml_sign", self._ml_sign)

    @property
    def idle(self) -> str | None:
        """Why the workload trains nothing though it may hold a GPU (``runs only `nvidia-smi```):
        every app container of every pod runs only programs that look at the node or wait
        (:data:`IDLE_PROGRAMS`); else None."""
        return once(self, "idle", self._idle)

    def _idle(self) -> str | None:
        seen: list[str] = []
        for pod in self.pods:
            apps = pod.app_containers
            if not apps:
                return None
            for container in apps:
                programs = idle_programs(container)
                if programs is None:
                    return None
                seen += (p for p in programs if p not in seen)
        return f"runs only {', '.join(f'`{p}`' for p in seen)}" if seen else None

    def _ml_sign(self) -> str | None:
        if self.idle is not None:
            return None
        if self.obj.group in ML_GROUPS:
            return f"it is a {self.obj.group} {self.kind}"
        names: list[tuple[str, str]] = [(self.obj.name, "its name")]
        for pod in self.pods:
            if pod.priority_class_name:
                names.append((pod.priority_class_name, f"its priority class `{pod.priority_class_name}`"))
            for container in pod.containers:
                who = f"container `{container.name}`"
                for text, where in ((container.image or "", f"the image of {who}"),
                                    (" ".join(container.command_strings), f"the command of {who}"),
                                    (" ".join(t for var in container.env for t in (var.name, var.value)
                                              if isinstance(t, str)), f"the environment of {who}")):
                    word = _sign_word(text)
                    if word is not None:
                        return f"`{word}` in {where}"
                names.append((container.name, f"the name of {who}"))
        for text, where in names:
            word = next((w for w in _WORDS.findall(text.lower()) if _name_word(w)), None)
            if word is not None:
                return f"`{word}` in {where}"
        return None

    def containers(self) -> Iterator[Container]:
        for pod in self.pods:
            yield from pod.containers

    def dispose(self) -> None:
        """Break the view's reference cycles (pod and workload, container and pod, and the memos
        that hold views) once its file is linted, so that its trees are freed by reference
        counting as soon as it is dropped, with no pass of the cyclic collector. The view must not
        be used again: its pods lose every attribute."""
        self._memo.clear()
        self.project = None
        for pod in self.pods:
            for container in pod.__dict__.get("containers", ()):
                container._sections.clear()
            pod.__dict__.clear()
        self.pods = []


def _int_or(value: Any, default: int | None) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _template(obj: K8sObject, holder: YMap | None, path: Path, role: str | None, replicas: int | None) -> PodSpec | None:
    """The PodSpec of ``holder.template`` (a PodTemplateSpec) at ``path`` (the holder's path)."""
    if holder is None:
        return None
    template = holder.get_map("template")
    if template is None:
        return None
    spec = template.get_map("spec")
    if spec is None:
        return None
    return PodSpec(obj, spec, path + ("template", "spec"), template, role, replicas)


def _pod_templates(obj: K8sObject) -> Iterator[PodSpec]:
    body, kind, group = obj.body, obj.kind, obj.group
    spec = body.get_map("spec")
    if kind == "Pod" and group == "":
        if spec is not None:
            yield PodSpec(obj, spec, ("spec",), None, None, 1)
        return
    if kind == "Workspace" and group == "kaito.sh":  # the preset path is KAI001-KAI003's
        inference = body.get_map("inference")
        resource = body.get_map("resource")
        count = _int_or(resource.get("count"), 1) if resource is not None else 1
        pod = _pod_template(obj, inference.get_map("template") if inference is not None else None,
                            ("inference", "template"), "inference", count)
        if pod:
            yield pod
        return
    if spec is None:
        return
    if kind == "InferenceSet" and group == "kaito.sh":  # replicas Workspaces of spec.template (a Workspace's body)
        template = spec.get_map("template")
        inference = template.get_map("inference") if template is not None else None
        pod = _pod_template(obj, inference.get_map("template") if inference is not None else None,
                            ("spec", "template", "inference", "template"), "inference",
                            _int_or(spec.get("replicas"), 1))
        if pod:
            yield pod
        return
    if kind == "LLMInferenceService" and group == KSERVE:
        yield from _llm_inference_pods(obj, spec)
        return
    if kind == "DynamoGraphDeployment" and group == "nvidia.com":
        yield from _dynamo_pods(obj, spec)
        return
    if kind == "PodTemplate" and group == "":
        pod = _template(obj, body, (), None, None)
        if pod:
            yield pod
        return
    if kind in _TEMPLATE_KINDS and group in ("", "apps", "batch", "extensions"):
        if kind == "Job":
            replicas = _int_or(spec.get("parallelism"), 1)
        elif kind == "DaemonSet":
            replicas = None
        else:
            replicas = _int_or(spec.get("replicas"), 1)
        pod = _template(obj, spec, ("spec",), None, replicas)
        if pod:
            yield pod
        return
    if kind == "CronJob" and group == "batch":
        job = spec.get_map("jobTemplate")
        job_spec = job.get_map("spec") if job is not None else None
        pod = _template(obj, job_spec, ("spec", "jobTemplate", "spec"), None,
                        _int_or(job_spec.get("parallelism"), 1) if job_spec is not None else 1)
        if pod:
            yield pod
        return
    if kind in REPLICA_SPEC_FIELDS and group == "kubeflow.org":
        field_name = REPLICA_SPEC_FIELDS[kind]
        replica_specs = spec.get_map(field_name)
        if replica_specs is None:
            return
        for role, replica in replica_specs.items():
            if isinstance(replica, YMap):
                pod = _template(obj, replica, ("spec", field_name, role), str(role), _int_or(replica.get("replicas"), 1))
                if pod:
                    yield pod
        return
    if kind == "Job" and group == "batch.volcano.sh":
        tasks = spec.get_seq("tasks")
        if tasks is None:
            return
        for index, task in tasks.maps():
            name = task.get("name")
            pod = _template(obj, task, ("spec", "tasks", index), str(name) if name else f"task {index}",
                            _int_or(task.get("replicas"), 1))
            if pod:
                yield pod
        return
    if kind in ("RayCluster", "RayJob", "RayService", "RayCronJob") and group == "ray.io":
        cluster = spec
        path: Path = ("spec",)
        if kind == "RayCronJob":  # spec.jobTemplate is a RayJob's spec
            spec, base = spec.get_map("jobTemplate"), ("spec", "jobTemplate")
            if spec is None:
                return
        else:
            base = ("spec",)
        if kind in ("RayJob", "RayCronJob"):
            submitter = _pod_template(obj, spec.get_map("submitterPodTemplate"), base + ("submitterPodTemplate",),
                                      "submitter", 1)
            if submitter:
                yield submitter
            cluster, path = spec.get_map("rayClusterSpec"), base + ("rayClusterSpec",)
        elif kind == "RayService":
            cluster, path = spec.get_map("rayClusterConfig"), ("spec", "rayClusterConfig")
        if cluster is None:
            return
        pod = _template(obj, cluster.get_map("headGroupSpec"), path + ("headGroupSpec",), "head", 1)
        if pod:
            yield pod
        groups = cluster.get_seq("workerGroupSpecs")
        for index, group_spec in groups.maps() if groups is not None else ():
            name = group_spec.get("groupName")
            pod = _template(obj, group_spec, path + ("workerGroupSpecs", index), str(name) if name else f"worker group {index}",
                            _int_or(group_spec.get("replicas"), 1))
            if pod:
                yield pod
        return
    if kind == "Experiment" and group == "kubeflow.org":  # Katib: each trial runs trialSpec
        template = spec.get_map("trialTemplate")
        trial = template.get_map("trialSpec") if template is not None else None
        if trial is not None:
            yield from _trial_pods(obj, trial, ("spec", "trialTemplate", "trialSpec"))
        return
    if kind == "JobSet" and group == "jobset.x-k8s.io":
        yield from _replicated_jobs(obj, spec, ("spec",))
        return
    if kind in ("TrainingRuntime", "ClusterTrainingRuntime") and group == TRAINER:
        template = spec.get_map("template")
        job_set = template.get_map("spec") if template is not None else None
        if job_set is not None:
            yield from _replicated_jobs(obj, job_set, ("spec", "template", "spec"), _runtime_nodes(spec))
        return
    if kind == "LeaderWorkerSet" and group == "leaderworkerset.x-k8s.io":
        groups = _int_or(spec.get("replicas"), 1)
        lws = spec.get_map("leaderWorkerTemplate")
        if lws is None:
            return
        size = _int_or(lws.get("size"), 1)
        base = ("spec", "leaderWorkerTemplate")
        worker = _pod_template(obj, lws.get_map("workerTemplate"), base + ("workerTemplate",), "worker", None)
        leader = _pod_template(obj, lws.get_map("leaderTemplate"), base + ("leaderTemplate",), "leader", None)
        count = None if groups is None or size is None else groups * size
        if leader is not None:
            leader.replicas = groups
            yield leader
            if worker is not None:
                worker.replicas = None if count is None else count - (groups or 0)
                yield worker
        elif worker is not None:  # without a leaderTemplate the leader runs the worker template
            worker.role, worker.replicas = "leader and worker", count
            yield worker
        return
    if kind == "InferenceService" and group == KSERVE:
        for component in ("predictor", "transformer", "explainer"):
            yield from _kserve_component(obj, spec, ("spec", component), component)
        return
    if kind in ("ServingRuntime", "ClusterServingRuntime") and group == KSERVE:
        yield PodSpec(obj, spec, ("spec",), None, "serving runtime", _int_or(spec.get("replicas"), None))
        worker = spec.get_map("workerSpec")
        if worker is not None and worker.get_seq("containers") is not None:
            yield PodSpec(obj, worker, ("spec", "workerSpec"), None, "serving runtime worker", None,
                          anchor=spec.key_span("workerSpec"))
        return


TRAINER = "trainer.kubeflow.org"
KSERVE = "serving.kserve.io"
# Kinds whose pods their controller completes from its own defaults (linter.model.filled)
FILLED_KINDS = frozenset({("LLMInferenceService", KSERVE), ("DynamoGraphDeployment", "nvidia.com")})
# KServe predictor fields that hold the model server's container (``model:`` and the older
# per-framework forms): PredictorExtensionSpec embeds a core/v1 Container
KSERVE_MODEL_FIELDS = ("model", "sklearn", "xgboost", "tensorflow", "pytorch", "triton", "onnx", "huggingface",
                       "pmml", "lightgbm", "paddle", "art")


def _pod_template(obj: K8sObject, template: YMap | None, path: Path, role: str | None,
                  replicas: int | None) -> PodSpec | None:
    """The PodSpec of a PodTemplateSpec that sits at ``path`` itself (LeaderWorkerSet's
    ``leaderTemplate``, RayJob's ``submitterPodTemplate``, KAITO's ``inference.template``)."""
    if template is None:
        return None
    spec = template.get_map("spec")
    if spec is None:
        return None
    return PodSpec(obj, spec, path + ("spec",), template, role, replicas)


def _runtime_nodes(spec: YMap) -> int | None:
    policy = spec.get_map("mlPolicy")
    return _int_or(policy.get("numNodes"), None) if policy is not None else None


def _trial_pods(obj: K8sObject, trial: YMap, base: Path) -> Iterator[PodSpec]:
    """The pods of a Katib trial: its ``trialSpec`` is a whole manifest, a batch Job or a Kubeflow
    training job, read as that kind reads it (other kinds: the generic view)."""
    kind, spec = trial.get("kind"), trial.get_map("spec")
    if spec is None:
        return
    if kind == "Job":
        pod = _template(obj, spec, base + ("spec",), "trial", _int_or(spec.get("parallelism"), 1))
        if pod:
            yield pod
    elif kind in REPLICA_SPEC_FIELDS:
        field_name = REPLICA_SPEC_FIELDS[kind]
        replica_specs = spec.get_map(field_name)
        for role, replica in replica_specs.items() if replica_specs is not None else ():
            if isinstance(replica, YMap):
                pod = _template(obj, replica, base + ("spec", field_name, role), str(role),
                                _int_or(replica.get("replicas"), 1))
                if pod:
                    yield pod


def _replicated_jobs(obj: K8sObject, job_set: YMap, base: Path, nodes: int | None = None) -> Iterator[PodSpec]:
    """JobSet's ``replicatedJobs`` (also inside a Trainer v2 runtime, whose ``node`` job runs
    ``mlPolicy.numNodes`` pods)."""
    jobs = job_set.get_seq("replicatedJobs")
    for index, replicated in jobs.maps() if jobs is not None else ():
        job_template = replicated.get_map("template")
        job_spec = job_template.get_map("spec") if job_template is not None else None
        name = replicated.get("name")
        copies = _int_or(replicated.get("replicas"), 1) or 1
        parallelism = _int_or(job_spec.get("parallelism"), 1) if job_spec is not None else 1
        if nodes is not None and name == "node":
            parallelism = nodes
        pod = _template(obj, job_spec, base + ("replicatedJobs", index, "template", "spec"),
                        str(name) if name else f"job {index}", copies * (parallelism or 1))
        if pod:
            metadata = job_template.get_map("metadata") if job_template is not None else None
            labels = metadata.get_map("labels") if metadata is not None else None
            step = labels.get("trainer.kubeflow.org/trainjob-ancestor-step") if labels is not None else None
            pod.step = step if isinstance(step, str) else None
            yield pod


def _kserve_component(obj: K8sObject, holder: YMap, path: Path, role: str) -> Iterator[PodSpec]:
    """A KServe component: a PodSpec inline (``containers:`` form) plus, for the predictor, the
    model server's container (``model:`` form); ``workerSpec`` is the multi-node workers' pod."""
    component = holder.get_map(path[-1])
    if component is None:
        return
    extra = tuple(("containers", component[key], path + (key,), "kserve-container")
                  for key in KSERVE_MODEL_FIELDS if isinstance(component.get(key), YMap))
    replicas = _int_or(component.get("minReplicas"), 1)
    if extra or component.get_seq("containers") is not None or component.get_seq("initContainers") is not None:
        yield PodSpec(obj, component, path, None, role, replicas, extra=extra, anchor=holder.key_span(path[-1]))
    worker = component.get_map("workerSpec")
    if worker is not None and worker.get_seq("containers") is not None:
        yield PodSpec(obj, worker, path + ("workerSpec",), None, f"{role} worker", None,
                      anchor=component.key_span("workerSpec"))


def _llm_inference_pods(obj: K8sObject, spec: YMap) -> Iterator[PodSpec]:
    """KServe's LLMInferenceService: ``template`` (the model server's pod, a PodSpec inline),
    ``worker`` (the pod of each further node when the model spans nodes), the same two under
    ``prefill`` (disaggregated prefill), and the router's ``scheduler.template`` (the endpoint
    picker). KServe merges each over its well-known LLMInferenceServiceConfig (image, command,
    probes, security context): :mod:`linter.model.filled` judges only what the object writes."""
    parts: list[tuple[YMap, Path, str]] = [(spec, ("spec",), "")]
    prefill = spec.get_map("prefill")
    if prefill is not None:
        parts.append((prefill, ("spec", "prefill"), "prefill "))
    for holder, base, prefix in parts:
        replicas = _int_or(holder.get("replicas"), 1)
        for key, role, count in (("template", f"{prefix}main", replicas), ("worker", f"{prefix}worker", None)):
            pod_spec = holder.get_map(key)
            if pod_spec is not None:
                yield PodSpec(obj, pod_spec, base + (key,), None, role.strip(), count, anchor=holder.key_span(key))
    router = spec.get_map("router")
    scheduler = router.get_map("scheduler") if router is not None else None
    template = scheduler.get_map("template") if scheduler is not None else None
    if template is not None:
        yield PodSpec(obj, template, ("spec", "router", "scheduler", "template"), None, "scheduler",
                      _int_or(scheduler.get("replicas"), 1), anchor=scheduler.key_span("template"))


def _dynamo_pods(obj: K8sObject, spec: YMap) -> Iterator[PodSpec]:
    """NVIDIA Dynamo's DynamoGraphDeployment: each ``services.<name>`` is a component whose pod is
    ``extraPodSpec`` (a PodSpec) with ``mainContainer`` (a Container) as its main container,
    ``replicas`` pods (x ``multinode.nodeCount`` for a multi-node component). The operator builds
    the main container from the component's ``resources``, ``envs`` and probes too:
    :mod:`linter.model.filled` judges only what the object writes. Of the component's own
    ``resources`` form, its GPUs are read (:func:`_dynamo_main`): ``limits.gpu`` is the main
    container's GPU request and limit; a component with GPUs and no ``extraPodSpec`` is a pod of
    its own (nothing else of it written)."""
    services = spec.get_map("services")
    for name, service in services.items() if services is not None else ():
        if not isinstance(service, YMap):
            continue
        extra_spec = service.get_map("extraPodSpec")
        base: Path = ("spec", "services", name, "extraPodSpec")
        main = extra_spec.get_map("mainContainer") if extra_spec is not None else None
        main, borrowed = _dynamo_main(service, main, base + ("mainContainer",), ("spec", "services", name))
        if extra_spec is None:
            if main is None:
                continue
            extra_spec = YMap(service.key_span("resources"))  # no pod spec written: the operator's
        extra = (("containers", main, base + ("mainContainer",), "main"),) if main is not None else ()
        replicas = _int_or(service.get("replicas"), 1)
        multinode = service.get_map("multinode")
        nodes = _int_or(multinode.get("nodeCount"), 2) if multinode is not None else 1
        anchor = service.key_span("extraPodSpec") if "extraPodSpec" in service else service.key_span("resources")
        pod = PodSpec(obj, extra_spec, base, None, str(name), None if replicas is None or nodes is None
                      else replicas * nodes, extra=extra, anchor=anchor)
        pod.borrowed, pod.written = borrowed, "extraPodSpec" in service
        yield pod


DYNAMO_GPU = "nvidia.com/gpu"  # what the operator names a component's `gpu` (without a `gpuType`)


def _copied(body: YMap | None, span: Span) -> YMap:
    copy = YMap(body.span if body is not None else span)
    if body is not None:
        copy.update(body)
        copy.kspans.update(body.kspans)
        copy.vspans.update(body.vspans)
    return copy


def _dynamo_main(service: YMap, main: YMap | None, path: Path, where: Path) -> tuple[YMap | None, dict]:
    """A Dynamo component's main container as its GPUs make it: the operator turns the component's
    ``resources.limits.gpu`` into the container's ``nvidia.com/gpu`` limit (``gpuType`` names
    another resource) and Kubernetes defaults the request to it; ``mainContainer``'s own value
    wins (the operator merges it over: its limit replaces the component's, whose request then
    defaults to that). ``requests.gpu`` is not read by the operator. The
    GPU entries keep the component's spans; the second value maps their view paths to the
    component's ``resources.limits.gpu`` (findings and baselines point there). Without GPUs the
    container is ``main`` as written."""
    resources = service.get_map("resources")
    limits = resources.get_map("limits") if resources is not None else None
    gpu = limits.get("gpu") if limits is not None else None
    if gpu is None or isinstance(gpu, (YMap, YSeq, bool)) or gpu == "":
        return main, {}
    kind = limits.get("gpuType")
    name = kind if isinstance(kind, str) and kind else DYNAMO_GPU
    written = main.get_map("resources") if main is not None else None
    written = written.get_map("limits") if written is not None else None
    if written is not None and name in written:
        return main, {}  # mainContainer's limit replaces the component's, and the request defaults to it
    body = _copied(main, service.key_span("resources"))
    if main is None:
        body.kspans["resources"] = service.key_span("resources")
    own = body.get_map("resources")
    merged = _copied(own, limits.span)
    borrowed = {}
    for section in ("requests", "limits"):
        entries = _copied(merged.get_map(section), limits.span)
        if name not in entries:
            entries[name] = gpu
            entries.kspans[name] = limits.key_span("gpu")
            entries.vspans[name] = limits.value_span("gpu")
            borrowed[path + ("resources", section, name)] = where + ("resources", "limits", "gpu")
        merged[section] = entries
        merged.kspans.setdefault(section, limits.key_span("gpu"))
    body["resources"] = merged
    body.kspans.setdefault("resources", service.key_span("resources"))
    return body, borrowed


# Kinds never read for generic pod views: their bodies are schemas or data, not pods (a CRD's
# schema of a pod template has ``containers`` as a map of properties, never a list of images).
_NOT_PODS = frozenset({"CustomResourceDefinition", "ConfigMap", "Secret"})
# Built-in kinds (group, kind) whose API schema holds no pod template nor container anywhere: a
# pod-shaped map in one is an unknown field (SCH002's finding), never pods, so they are not
# searched (the search was a sixth of the workload views' cost on ../shared/perf's corpus, where
# these are two thirds of the objects without a modelled pod template).
_NO_POD_TEMPLATE = frozenset({
    ("", "Namespace"), ("", "Service"), ("", "ServiceAccount"), ("", "PersistentVolumeClaim"),
    ("", "PersistentVolume"), ("", "LimitRange"), ("", "ResourceQuota"), ("", "Endpoints"),
    ("storage.k8s.io", "StorageClass"), ("scheduling.k8s.io", "PriorityClass"),
    ("networking.k8s.io", "NetworkPolicy"), ("networking.k8s.io", "Ingress"), ("policy", "PodDisruptionBudget"),
    ("rbac.authorization.k8s.io", "Role"), ("rbac.authorization.k8s.io", "RoleBinding"),
    ("rbac.authorization.k8s.io", "ClusterRole"), ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("autoscaling", "HorizontalPodAutoscaler"),
})


def _generic_pods(obj: K8sObject) -> list[PodSpec]:
    """Every pod template an unmodelled kind holds: a map whose ``containers`` list has an item
    with an ``image``, at its node path (the search does not go inside a pod template found)."""
    found: list[PodSpec] = []
    stack: list[tuple[Any, Path, YMap | None, Any]] = [(obj.body, (), None, None)]
    while stack:
        node, path, parent, key = stack.pop()
        if isinstance(node, YMap):
            containers = node.get("containers")
            if isinstance(containers, YSeq) and any(isinstance(c, YMap) and isinstance(c.get("image"), str)
                                                    for c in containers):
                template = parent if key == "spec" else None
                anchor = parent.key_span(key) if parent is not None and template is None else None
                found.append(PodSpec(obj, node, path, template, where=".".join(map(str, path)) or "(the object)",
                                     anchor=anchor))
                continue
            for child_key, child in reversed(list(node.items())):
                if isinstance(child, (YMap, YSeq)):
                    stack.append((child, path + (child_key,), node, child_key))
        elif isinstance(node, YSeq):
            for index in range(len(node) - 1, -1, -1):
                child = node[index]
                if isinstance(child, (YMap, YSeq)):
                    stack.append((child, path + (index,), None, index))
    return found


def workload_of(obj: K8sObject, index: Any = None) -> Workload | None:
    """The workload view of ``obj``, or ``None`` if it carries no pods. A kind whose pod
    templates are not modelled here (or a modelled kind in a shape it does not have, such as the
    ``spec.template`` of a v1alpha1 MPIJob) is read generically (:func:`_generic_pods`). A
    TrainJob's pods are its runtime's (``linter.model.trainjob``), found in ``index``."""
    if obj.kind == "TrainJob" and obj.group == TRAINER:
        from mlops_lint.model.trainjob import trainjob_pods

        pods, runtime = trainjob_pods(obj, index, PodSpec,
                                      lambda o: index.workload(o) if index is not None else workload_of(o))
        if not pods:
            return None
        workload = Workload(obj, pods, runtime=runtime, origin=index.workload(runtime))
        for pod in pods:
            pod.workload = workload
        return workload
    pods = list(_pod_templates(obj))
    generic = False
    if not pods and obj.kind not in _NOT_PODS and (obj.group, obj.kind) not in _NO_POD_TEMPLATE:
        pods, generic = _generic_pods(obj), True
    if not pods:
        return None
    workload = Workload(obj, pods, generic)
    for pod in pods:
        pod.workload = workload
    return workload


def is_gpu_resource(name: str) -> bool:
    """``nvidia.com/gpu``, ``nvidia.com/mig-<profile>``, and other vendors' ``*/gpu``."""
    return name == "nvidia.com/gpu" or name.startswith("nvidia.com/mig-") or name in ("amd.com/gpu", "nvidia.com/gpu.shared")


def parse_image(image: str) -> tuple[str, str | None, str | None]:
    """Split an image reference into (name, tag, digest): ``repo/name:tag@sha256:…``.

    A ``:`` belongs to the tag only after the last ``/`` (``host:5000/x`` has a port, no tag).
    """
    name, _, digest = image.partition("@")
    tag = None
    slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > slash:
        name, tag = name[:colon], name[colon + 1:]
    return name, tag, (digest or None)


def image_registry(name: str) -> str:
    """The registry host of an image name (Docker Hub is ``docker.io``)."""
    first, sep, _ = name.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


DEFAULT_GPU_RESOURCE_PREFIXES = ("nvidia.com/gpu", "nvidia.com/mig-", "amd.com/gpu")
# The option every GPU resource rule declares, as ``@rule(**GPU_RESOURCE_OPTION)``.
GPU_RESOURCE_OPTION = {
    "options": {"gpu-resource-prefixes": list[str]},
    "defaults": {"gpu-resource-prefixes": list(DEFAULT_GPU_RESOURCE_PREFIXES)},
}


def gpu_resources(resources: dict[str, Resource], prefixes: Any = DEFAULT_GPU_RESOURCE_PREFIXES) -> dict[str, Resource]:
    """The entries of a requests/limits section that are GPUs (names starting with a prefix)."""
    prefixes = tuple(prefixes)
    return {name: res for name, res in resources.items() if name.startswith(prefixes)}


def container_uses_gpu(container: Container, prefixes: Any = DEFAULT_GPU_RESOURCE_PREFIXES) -> bool:
    """Whether a container requests or limits a GPU, or takes GPUs through a resource claim
    (with the default prefixes: computed once per container)."""
    if prefixes is DEFAULT_GPU_RESOURCE_PREFIXES:
        found = container._sections.get("uses_gpu")
        if found is None:
            found = container._sections["uses_gpu"] = _uses_gpu(container, prefixes)
        return found
    return _uses_gpu(container, prefixes)


def _uses_gpu(container: Container, prefixes: Any) -> bool:
    from mlops_lint.model.dra import claimed_gpus

    return bool(gpu_resources(container.requests, prefixes) or gpu_resources(container.limits, prefixes)
                or claimed_gpus(container))


def is_templated(value: str) -> bool:
    """A value filled in later (``$(VAR)``, ``${VAR}``, ``$VAR``, ``{{ … }}``, ``<your-image>``,
    ``REPLACE_ME``, …): its final text is unknown. The one placeholder test,
    :func:`linter.model.placeholder.has_placeholder`."""
    return has_placeholder(value)


# The image reference grammar of distribution/reference: optional registry host[:port], then
# lowercase path components, then an optional tag and digest.
REFERENCE = re.compile(
    r"^(?:(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])"
    r"(?::[0-9]+)?/)?"
    r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*"
    r"(?::[\w][\w.-]{0,127})?(?:@[^@\s]+)?$"  # a malformed digest is still a reference: IMG002 names it
)


def image_reference(image: str | None) -> tuple[str, str | None, str | None] | None:
    """(name, tag, digest) of a real image reference; ``None`` for placeholders that are filled
    in later (``$IMAGE``, ``{{ .Values.image }}``) or are not image references at all
    (``FILLED_BY_THE_VALIDATOR``, ``<your-image>``): rules about tags cannot judge those."""
    if not image:
        return None
    if len(image) <= 512:  # a project names a few images many times, and several rules ask
        return _image_reference(image)
    return _image_reference.__wrapped__(image)


@lru_cache(maxsize=4096)
def _image_reference(image: str) -> tuple[str, str | None, str | None] | None:
    if has_placeholder(image) or not REFERENCE.match(image):
        return None
    return parse_image(image)
