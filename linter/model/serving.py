"""Serving: which long-running workloads serve a model (an inference server), not train one.

The article sets latency-sensitive inference against interruptible training (priorities) and
links the AKS reliability practices for what stays up (probes, spread replicas, disruption
budgets). A generic Deployment (a web front end, a controller, a metrics demo) is none of the
linter's business there, so a workload counts as serving only on evidence:

- its kind serves by definition: a KServe ``InferenceService``, a KubeRay ``RayService``, a KAITO
  ``Workspace`` with an ``inference`` section;
- or it is a long-running kind (``Deployment``, ``StatefulSet``, ``LeaderWorkerSet``) and an app
  container runs a model server: its image is one (:data:`SERVER_IMAGES`: vLLM, Triton,
  TensorFlow Serving, TorchServe, Hugging Face TGI/TEI, KServe's and Seldon's servers, Ollama,
  SGLang, OpenVINO Model Server, llama.cpp's server, NVIDIA NIM; any registry, and a repository
  named after a server or its variant: `…/torchserve-tpu`, `…/vllm-rocm`), or its command starts one
  (:data:`SERVER_PROGRAMS`: ``vllm serve``, ``tritonserver``, ``text-generation-launcher``,
  ``python -m vllm.entrypoints…``).

:func:`serving_sign` says why (for messages), memoised on the view; :func:`long_running_server`
is the narrower question REL001 asks of a pod's containers (a Deployment, StatefulSet or
LeaderWorkerSet whose pods the workload's own fields describe), and :func:`replicated_server` the
one REL002 and REL003 ask (how many copies of the model run, where that count is written, which
pods a disruption budget must select). Per kind, from what its controller does:

- Deployment, StatefulSet: ``spec.replicas`` copies of the pod template.
- LeaderWorkerSet: ``spec.replicas`` groups, each one copy of the model spread over ``size`` pods
  (leader and workers). Only the leader serves requests (the workers run the engine's shards), so
  REL001 judges the leader's server container. The LWS controller labels every pod
  ``leaderworkerset.sigs.k8s.io/name: <name>``, which a budget may select.
- KServe InferenceService: the predictor's ``minReplicas`` copies (KServe's default is 1; the
  autoscaler adds more under load); KServe labels the pods ``serving.kserve.io/inferenceservice:
  <name>`` and ``component: predictor`` beside the InferenceService's and the predictor's own
  labels. A predictor with a ``workerSpec`` spans nodes as a LeaderWorkerSet group does.
- KubeRay RayService: none of the REL rules' counts apply. KubeRay injects the Ray containers'
  readiness and liveness probes itself (the workers' readiness checks Ray Serve's proxy), and a
  worker group's ``replicas`` counts Ray nodes, not copies of the model: Ray Serve places the
  model's replicas over them (``num_replicas``, ``max_replicas_per_node``), one replica may span
  several worker pods (tensor or pipeline parallel), and Ray's autoscaler changes the count.
"""

from __future__ import annotations

import posixpath
import re

from typing import NamedTuple

from mlops_lint.model.k8s import KSERVE, Container, PodSpec, Workload, image_reference
from mlops_lint.model.images import repository_path
from mlops_lint.model.memo import once
from mlops_lint.model.shellc import POSIX_SHELLS, statements

# repository paths (without the registry host) of model-server images, matched at the end of the
# path (a mirror `myacr.azurecr.io/vllm/vllm-openai` is the same image)
SERVER_IMAGES = (
    "vllm/vllm-openai", "vllm/vllm-tpu", "vllm/vllm-cpu", "nvidia/tritonserver", "tensorflow/serving",
    "huggingface/text-generation-inference", "huggingface/text-embeddings-inference", "pytorch/torchserve",
    "seldonio/mlserver", "ollama/ollama", "lmsysorg/sglang", "openvino/model_server", "ggerganov/llama.cpp",
    "ggml-org/llama.cpp", "kserve/huggingfaceserver", "kserve/sklearnserver", "kserve/xgbserver",
    "kserve/lgbserver", "kserve/pmmlserver", "kserve/paddleserver", "kserve/torchserve-kfs",
    "localai/localai", "kaito/kaito-base",
)
_SERVER_REPOSITORIES = ("nim/",)  # NVIDIA NIM: nvcr.io/nim/<vendor>/<model>
# a repository (the path's last part) named as a server, or its variant: `…/inference/torchserve-tpu`,
# `myacr.azurecr.io/vllm-rocm`
SERVER_NAMES = ("tritonserver", "torchserve", "vllm", "text-generation-inference", "text-embeddings-inference",
                "sglang", "mlserver", "llama.cpp", "tensorflow-serving", "model_server")
# programs that start a model server (the first word of a command, by base name)
SERVER_PROGRAMS = frozenset({
    "tritonserver", "text-generation-launcher", "text-embeddings-router", "torchserve", "tensorflow_model_server",
    "llama-server", "ollama-serve",
})
# programs whose `serve`/`start` sub-command starts a server
_SERVE_SUBCOMMANDS = {"vllm": ("serve",), "ollama": ("serve",), "mlserver": ("start",), "lmdeploy": ("serve",),
                      "bentoml": ("serve",), "sglang": ("serve",)}
# `python -m <module>` modules that start a server
_SERVER_MODULES = re.compile(r"(?:vllm\.entrypoints|sglang\.launch_server|lmdeploy\.serve|mlserver|"
                             r"text_generation_server|fastchat\.serve\.(?:model_worker|openai_api_server))(?:\.|$)")
_PYTHON = re.compile(r"python(?:\d+(?:\.\d+)?)?$")

LONG_RUNNING = frozenset({("apps", "Deployment"), ("apps", "StatefulSet"),
                          ("leaderworkerset.x-k8s.io", "LeaderWorkerSet")})


def server_image(image: str | None) -> str | None:
    """The model-server repository an image reference is, else None."""
    reference = image_reference(image)
    if reference is None:
        return None
    path = repository_path(reference[0])
    for known in SERVER_IMAGES:
        if path == known or path.endswith("/" + known):
            return known
    if path.startswith(_SERVER_REPOSITORIES) or "/nim/" in path:
        return path
    repository = path.rsplit("/", 1)[-1]
    if any(repository == name or repository.startswith(name + "-") for name in SERVER_NAMES):
        return path
    return None


def _server_command(words: tuple[str, ...] | list[str]) -> str | None:
    if not words:
        return None
    program = posixpath.basename(words[0])
    if program in SERVER_PROGRAMS:
        return program
    if program in _SERVE_SUBCOMMANDS and len(words) > 1 and words[1] in _SERVE_SUBCOMMANDS[program]:
        return f"{program} {words[1]}"
    if _PYTHON.match(program):
        for i, word in enumerate(words[1:-1], 1):
            if word == "-m" and _SERVER_MODULES.match(words[i + 1]):
                return f"python -m {words[i + 1]}"
    return None


def server_program(container: Container) -> str | None:
    """The model server a container's ``command``/``args`` start (a ``sh -c`` script's statements
    too), else None."""
    strings = container.command_strings
    if not strings:
        return None
    if posixpath.basename(strings[0]) in POSIX_SHELLS:
        script = next((s for s in strings[1:] if not s.startswith("-")), None)
        if script is None:
            return None
        for words, _ in statements(script):
            if words and words[0] == "exec":
                words = words[1:]
            found = _server_command(words)
            if found is not None:
                return found
        return None
    return _server_command(strings)


def serving_sign(workload: Workload) -> str | None:
    """Why the workload serves a model (``it is a KServe InferenceService``, ```vllm serve` in the
    command of container `server```), else None."""
    return once(workload, "serving_sign", lambda: _serving_sign(workload))


def _serving_sign(workload: Workload) -> str | None:
    obj = workload.obj
    if workload.generic or workload.is_training:
        return None
    if obj.kind == "InferenceService" and obj.group == KSERVE:
        return "it is a KServe InferenceService"
    if obj.kind == "RayService" and obj.group == "ray.io":
        return "it is a KubeRay RayService"
    if obj.kind == "Workspace" and obj.group == "kaito.sh":
        return "it is a KAITO inference Workspace" if "inference" in obj.body else None
    if (obj.group, obj.kind) not in LONG_RUNNING:
        return None
    for pod in workload.pods:
        for container in pod.app_containers:
            image = server_image(container.image)
            if image is not None:
                return f"container `{container.name}` runs the model server image `{image}`"
            program = server_program(container)
            if program is not None:
                return f"container `{container.name}` starts `{program}`"
    return None


LWS = ("leaderworkerset.x-k8s.io", "LeaderWorkerSet")
LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"  # set by the LWS controller on every pod of the set
KSERVE_NAME_LABEL = "serving.kserve.io/inferenceservice"  # set by KServe on every pod of the service
_PROBED = frozenset({("apps", "Deployment"), ("apps", "StatefulSet"), LWS})


def long_running_server(workload: Workload | None) -> str | None:
    """:func:`serving_sign` of a Deployment, StatefulSet or LeaderWorkerSet (the kinds whose server
    containers REL001 judges: nothing else gives them probes), else None."""
    if workload is None or (workload.obj.group, workload.obj.kind) not in _PROBED:
        return None
    return serving_sign(workload)


def serves_requests(pod: PodSpec) -> bool:
    """Whether a pod of a server workload answers the model's requests: a LeaderWorkerSet's workers
    do not when the set has a leader template (they run the engine's shards for their leader)."""
    workload = pod.workload
    if workload is None or (workload.obj.group, workload.obj.kind) != LWS:
        return True
    return pod.role != "worker"


class Replicas(NamedTuple):
    """The copies of a model a server workload keeps running, where its count is written, and
    the pods a disruption budget of it must select."""

    sign: str  # why the workload serves a model (serving_sign)
    count: int
    holder: object  # the YMap that writes the count
    key: str  # the count's key in it (``replicas``, ``minReplicas``)
    node: tuple  # the count's node path
    pods: list  # the pods of one copy that must not all go at once
    labels: dict  # labels the controller gives those pods beside their templates' (LWS, KServe)
    groups: bool  # each copy is a group of pods spread over nodes on purpose (LWS, multi-node KServe)


def _literal(holder, key: str) -> int | None:
    value = holder.get(key) if holder is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def replicated_server(workload: Workload) -> Replicas | None:
    """The :class:`Replicas` of a workload that serves a model with a literal count (see the
    module's list), else None (not a server, no literal count, or a kind the count means nothing
    for: RayService)."""
    return once(workload, "replicated_server", lambda: _replicated_server(workload))


def _replicated_server(workload: Workload) -> Replicas | None:
    obj, pods = workload.obj, workload.pods
    kind = (obj.group, obj.kind)
    spec = obj.body.get_map("spec")
    if not pods or spec is None:
        return None
    if kind in (("apps", "Deployment"), ("apps", "StatefulSet"), LWS):
        count = _literal(spec, "replicas")
        if count is None:
            return None
        sign = serving_sign(workload)
        if sign is None:
            return None
        groups = kind == LWS
        labels = {LWS_NAME_LABEL: obj.name} if groups and obj.name else {}
        return Replicas(sign, count, spec, "replicas", ("spec", "replicas"), pods, labels, groups)
    if kind == (KSERVE, "InferenceService"):
        predictor = spec.get_map("predictor")
        count = _literal(predictor, "minReplicas")
        own = [p for p in pods if p.path == ("spec", "predictor")]
        if count is None or not own:
            return None
        sign = serving_sign(workload)
        if sign is None:
            return None
        labels = {}
        for holder in (obj.metadata, predictor):
            written = holder.get("labels") if holder is not None else None
            if isinstance(written, dict):
                labels.update({k: v for k, v in written.items() if isinstance(v, str)})
        if obj.name:
            labels[KSERVE_NAME_LABEL] = obj.name
        labels["component"] = "predictor"
        groups = predictor.get_map("workerSpec") is not None
        return Replicas(sign, count, predictor, "minReplicas", ("spec", "predictor", "minReplicas"), own, labels,
                        groups)
    return None
