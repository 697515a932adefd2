"""Hypothesis strategies for what a pull request can put in front of mlops-lint.

Kubernetes-shaped objects of every pod-carrying kind the views know (``linter/model/k8s.py``) and
of the custom resources the catalogue reads (Kueue, Volcano, KAITO, Prometheus Operator and
Azure Monitor, Kubeflow, KubeRay, JobSet, the GPU Operator), plus the reference kinds rules look up
across files. Every field is usually well-formed and sometimes not: a wrong type, a null, a huge
number, a unicode or empty name, an odd quantity, a random extra key. Names, labels and claims
come from small pools, so cross-file references (a queue name and its LocalQueue, a claim and its
PVC, a monitor's selector and a pod's labels) often meet. Also ``az aks`` scripts, Dockerfiles
and project configs.

Examples per property (``FUZZ``): ``CI_EXAMPLES`` when the ``CI`` variable is set (``.ci/run``),
``LOCAL_EXAMPLES`` otherwise; ``FUZZ_EXAMPLES=N`` overrides both. Under ``CI`` the draws are
derandomized (the same examples on every run, so the gate lands what passed with ``CI=1`` here);
local runs draw anew each time and keep finding what the fixed draws miss.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

LOCAL_EXAMPLES = 40
CI_EXAMPLES = 200
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES") or (CI_EXAMPLES if os.environ.get("CI") else LOCAL_EXAMPLES))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    print_blob=True,  # a failure prints the @reproduce_failure line to replay it
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

# -- odd values ------------------------------------------------------------------------------

HUGE_NUMBERS = st.sampled_from([10**19, -(10**19), 2**63, 2**64 + 1, 10**400, 1e308, -1e308, 1e-320, 5e-324])
ODD_STRINGS = st.sampled_from([
    "", " ", "~", "null", "yes", "no", "on", "0777", "0x1F", "1e3", "1_000", ".inf", "-.inf", ".nan", "12:30",
    "2024-01-01", "{{ .Values.x }}", "$(VAR)", "${VAR}", "<image>", "…", "\u202eevil",
    "a" * 300, "9" * 5000, "名前", "🚀", "ümlaut", "-", "--", "#", "*", "&", "!!", "'", '"', "\\", "\t", "a\nb",
    "kube-system", "default", "ALL", "GPU001", "gpu-limit-missing",
])
ODD_SCALARS = st.one_of(
    st.none(), st.booleans(), HUGE_NUMBERS, st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True),
    ODD_STRINGS, st.text(max_size=12),
)
ODD = st.one_of(
    ODD_SCALARS,
    st.lists(ODD_SCALARS, max_size=3),
    st.dictionaries(st.one_of(ODD_STRINGS, st.text(max_size=6)), ODD_SCALARS, max_size=3),
)


# How odd one example is, drawn once per example and shared by every field: some examples are
# (nearly) well-formed, so rules get past their first checks; others are odd all over.
ODDNESS = st.shared(st.sampled_from([1, 1, 3, 1000]), key="oddness")


@st.composite
def _odd_or(draw, strategy, weight: int):
    """``strategy`` most of the time; one time in ``weight`` (times the example's oddness) an odd
    value instead. Shrinks to the well-formed value, so a minimal failing example keeps only the
    odd values that matter."""
    chance = weight * draw(ODDNESS)
    if draw(st.integers(0, chance - 1)) == chance - 1:
        return draw(ODD)
    return draw(strategy)


def odd(strategy, weight: int = 10):
    return _odd_or(strategy, weight)


EXTRA_KEYS = st.one_of(
    st.sampled_from(["name", "spec", "metadata", "kind", "apiVersion", "containers", "resources", "template",
                     "replicas", "x-extra", "名前", "🚀", "", "<<", "~", "true", "1"]),
    st.text(max_size=8),
)


@st.composite
def _with_extra(draw, strategy):
    value = draw(strategy)
    if isinstance(value, dict) and draw(st.integers(0, 5 * draw(ODDNESS))) == 5:
        value = dict(value)
        value.update(draw(st.dictionaries(EXTRA_KEYS, ODD, max_size=2)))
    return value


def extra(strategy):
    """Dictionaries that sometimes carry random extra keys (which may replace real ones)."""
    return _with_extra(strategy)


def fields(required: dict, optional: dict | None = None, weight: int = 10):
    """A mapping with these fields, each value sometimes odd, sometimes with extra keys."""
    return extra(st.fixed_dictionaries(
        {k: odd(v, weight) for k, v in required.items()},
        optional={k: odd(v, weight) for k, v in (optional or {}).items()},
    ))


# -- vocabulary ------------------------------------------------------------------------------

# A small pool, so that references across objects (claims, queues, classes, pools) often meet.
COMMON_NAMES = st.sampled_from(["train", "ckpt-pvc", "gpu", "default", "team-a"])
NAMES = st.one_of(COMMON_NAMES, COMMON_NAMES, COMMON_NAMES,
                  st.sampled_from(["worker", "checkpoints", "data", "a", "模型", "ümlaut-job", "x" * 253, "UPPER",
                                   "kube-system", "system-cluster-critical", "system-node-critical", "high-priority",
                                   "low-priority"]),
                  st.text(min_size=1, max_size=10))
NAMESPACES = st.sampled_from(["ml", "ml-training", "default", "kube-system", "gpu-operator", "", "名前空間"])
COMMON_LABEL_KEYS = st.sampled_from(["accelerator", "app", "kubernetes.azure.com/accelerator", "sku"])
COMMON_LABEL_VALUES = st.sampled_from(["nvidia", "train", "gpu", "true"])
LABEL_KEYS = st.one_of(COMMON_LABEL_KEYS, COMMON_LABEL_KEYS, st.sampled_from([
    "app", "app.kubernetes.io/name", "kueue.x-k8s.io/queue-name", "kueue.x-k8s.io/priority-class", "accelerator",
    "kubernetes.azure.com/accelerator", "nvidia.com/gpu.present", "nvidia.com/gpu.product", "nvidia.com/mig.config",
    "nvidia.com/mig.config.state", "training.kubeflow.org/job-role", "volcano.sh/queue-name", "sku", "agentpool",
    "kubernetes.azure.com/agentpool", "karpenter.azure.com/sku-gpu-name", "team",
]), st.text(max_size=8))
LABEL_VALUES = st.one_of(COMMON_LABEL_VALUES, COMMON_LABEL_VALUES, st.sampled_from(["nvidia", "true", "gpu", "all-1g.10gb", "all-balanced", "success", "train",
                                          "team-a", "default", "gpunp", "A100", "", "模型"]), st.text(max_size=6))
LABELS = st.dictionaries(LABEL_KEYS, odd(LABEL_VALUES, 12), max_size=4)
ANNOTATIONS = st.dictionaries(
    st.sampled_from(["mlops-lint.io/ignore", "ignore-check.mlops-lint.io/GPU001", "ignore-check.mlops-lint.io/shm-missing",
                     "ignore-check.mlops-lint.io/NOPE999", "kueue.x-k8s.io/queue-name", "note"]),
    odd(st.sampled_from(["GPU001", "GPU001,RES004", "shm-missing", "ALL", "", "NOPE999", "because", " , ,"]), 8),
    max_size=2,
)

QUANTITIES = st.one_of(
    st.sampled_from(["1", "2", "8", "0", "0.5", ".5", "1.", "+1", "-1", "-2", "500m", "1500m", "1Gi", "16Gi", "80Gi",
                     "16G", "1e3", "1E3", "1e-3", "1e400", "1Ei", "8Ei", "0.001n", "1 Gi", "1gi", "Gi", "abc", "",
                     "1.5", "1.5Gi", "0x10", "٣", "9" * 1200, "1" + "0" * 30]),
    st.integers(-3, 10**6), st.floats(-2, 1e6, allow_nan=False), st.just(True),
    st.builds(lambda n, s: f"{n}{s}", st.integers(0, 10**12),
              st.sampled_from(["", "m", "k", "M", "G", "Ki", "Mi", "Gi", "Ti", "e2", "E-1", "n", "u", "P", "E", "Ei"])),
)
RESOURCE_NAMES = st.one_of(st.sampled_from([
    "cpu", "memory", "nvidia.com/gpu", "nvidia.com/gpu.shared", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-2g.20gb",
    "nvidia.com/mig-3g.40gb", "nvidia.com/mig-7g.80gb", "nvidia.com/mig-1g.5gb", "nvidia.com/mig-9g.99gb",
    "amd.com/gpu", "ephemeral-storage", "hugepages-2Mi", "rdma/ib", "rdma/hca_shared_devices_a",
    "mellanox.com/shared_hca_rdma", "storage",
]), st.text(max_size=8))
RESOURCE_MAPS = st.dictionaries(RESOURCE_NAMES, odd(QUANTITIES, 12), max_size=4)
IMAGES = st.one_of(st.sampled_from([
    "busybox", "ubuntu", "ubuntu:22.04", "python:3.11-slim", "pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime",
    "tensorflow/tensorflow:2.15.0", "tensorflow/tensorflow:2.15.0-gpu", "nvcr.io/nvidia/pytorch:24.05-py3",
    "nvcr.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04", "nvcr.io/nvidia/k8s-device-plugin:v0.15.0",
    "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.0-ubuntu22.04", "myacr.azurecr.io/train:1.0", "x:latest",
    "host:5000/r", "localhost/r:1", "r@sha256:" + "a" * 64, "r:1@sha256:" + "b" * 64, "r@sha256:short", "$(IMG)",
    "${IMAGE}", "{{ .Values.image }}", "<image>", "FILLED_BY_THE_VALIDATOR", "", "UPPER/Case:tag", "a" * 300,
    "mcr.microsoft.com/aks/kaito/kaito-base:0.0.1", "[::1]:5000/x:1",
]), st.text(max_size=20))
ENV_NAMES = st.one_of(st.sampled_from([
    "TORCH_NCCL_ASYNC_ERROR_HANDLING", "NCCL_ASYNC_ERROR_HANDLING", "NCCL_IB_DISABLE", "NCCL_SOCKET_IFNAME", "NCCL_DEBUG",
    "NCCL_NET", "AWS_SECRET_ACCESS_KEY", "HF_TOKEN", "DB_PASSWORD", "API_KEY", "AZURE_STORAGE_CONNECTION_STRING",
    "WANDB_API_KEY", "PATH", "MASTER_ADDR", "CUDA_VISIBLE_DEVICES",
]), st.text(max_size=8))
ENV_VALUES = st.one_of(st.sampled_from([
    "1", "0", "true", "INFO", "TRACE", "WARN", "eth0", "^lo,docker", "hunter2", "hf_abcdefghijklmnopqrstuvwxyz0123",
    "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=abc==;EndpointSuffix=core.windows.net",
    "postgres://u:p@h/db", "$(SECRET)", "", "🚀",
]), st.text(max_size=10), st.integers(), st.booleans())
MOUNT_PATHS = st.one_of(st.sampled_from([
    "/dev/shm", "/dev/shm/", "/checkpoints", "/ckpt", "/data", "/mnt/checkpoint", "/var/lib/kubelet/device-plugins",
    "/output", "/models", "/", "relative/path", "",
]), st.text(max_size=10))
VM_SIZES = st.sampled_from([
    "Standard_NC4as_T4_v3", "Standard_NC6s_v3", "Standard_NC24ads_A100_v4", "Standard_NC96ads_A100_v4",
    "Standard_ND96asr_v4", "Standard_ND96amsr_A100_v4", "Standard_ND96isr_H100_v5", "Standard_NV36ads_A10_v5",
    "Standard_NC40ads_H100_v5", "Standard_D4s_v5", "Standard_D16ds_v5", "Standard_E64s_v5", "Standard_B2s",
    "Standard_Foo_v9", "standard_nc24ads_a100_v4", "Standard_NC24ads_A100_v4 ", "", "<vm-size>",
])
TAINT_EFFECTS = st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute", "", "Bogus"])

# -- pod specs -------------------------------------------------------------------------------

ENV_VARS = st.lists(fields(
    {"name": ENV_NAMES},
    {"value": ENV_VALUES, "valueFrom": st.fixed_dictionaries({"secretKeyRef": st.fixed_dictionaries(
        {"name": NAMES, "key": st.text(max_size=5)})})},
), max_size=4)
SECURITY_CONTEXTS = fields({}, {
    "allowPrivilegeEscalation": st.booleans(), "privileged": st.booleans(), "runAsNonRoot": st.booleans(),
    "runAsUser": st.sampled_from([0, 1000, 65534, -1]), "readOnlyRootFilesystem": st.booleans(),
    "capabilities": fields({}, {"drop": st.lists(st.sampled_from(["ALL", "all", "NET_RAW", ""]), max_size=2),
                                "add": st.lists(st.sampled_from(["SYS_ADMIN", "IPC_LOCK", "NET_ADMIN"]), max_size=2)}),
    "seccompProfile": st.fixed_dictionaries({"type": st.sampled_from(["RuntimeDefault", "Unconfined"])}),
})
PORTS = st.lists(fields({"containerPort": st.integers(-1, 70000)},
                        {"name": st.sampled_from(["metrics", "http", "nccl", "gloo", "x" * 20]),
                         "protocol": st.sampled_from(["TCP", "UDP", "SCTP", "tcp"])}), max_size=2)
CONTAINERS = fields(
    {"name": NAMES, "image": IMAGES},
    {
        "resources": fields({}, {"requests": RESOURCE_MAPS, "limits": RESOURCE_MAPS,
                                 "claims": st.lists(st.fixed_dictionaries({"name": NAMES}), max_size=1)}),
        "env": ENV_VARS,
        "envFrom": st.lists(st.fixed_dictionaries({"secretRef": st.fixed_dictionaries({"name": NAMES})}), max_size=1),
        "volumeMounts": st.lists(fields({"name": NAMES, "mountPath": MOUNT_PATHS},
                                        {"readOnly": st.booleans(), "subPath": st.text(max_size=5)}), max_size=3),
        "securityContext": SECURITY_CONTEXTS,
        "ports": PORTS,
        "command": st.lists(st.sampled_from(["python", "torchrun", "train.py", "--nproc_per_node=8", "sh", "-c"]),
                            max_size=3),
        "args": st.lists(st.text(max_size=8), max_size=2),
        "restartPolicy": st.sampled_from(["Always", "Never", "OnFailure"]),
        "imagePullPolicy": st.sampled_from(["Always", "IfNotPresent", "Never"]),
        "workingDir": st.sampled_from(["/workspace", "/checkpoints", ""]),
    },
)
VOLUME_SOURCES = st.one_of(
    st.fixed_dictionaries({"emptyDir": fields({}, {"medium": st.sampled_from(["Memory", "", "HugePages", "memory"]),
                                                   "sizeLimit": QUANTITIES})}),
    st.fixed_dictionaries({"hostPath": fields({"path": st.sampled_from(["/var/lib/kubelet/device-plugins", "/data",
                                                                        "/dev/shm", "/", "/mnt/ckpt"])},
                                              {"type": st.sampled_from(["Directory", "DirectoryOrCreate", ""])})}),
    st.fixed_dictionaries({"persistentVolumeClaim": fields({"claimName": NAMES}, {"readOnly": st.booleans()})}),
    st.fixed_dictionaries({"ephemeral": st.fixed_dictionaries({"volumeClaimTemplate": st.fixed_dictionaries({
        "spec": fields({}, {"accessModes": st.lists(st.sampled_from(["ReadWriteOnce", "ReadWriteMany"]), max_size=2),
                            "storageClassName": NAMES,
                            "resources": st.fixed_dictionaries({"requests": RESOURCE_MAPS})})})})}),
    st.fixed_dictionaries({"configMap": st.fixed_dictionaries({"name": NAMES})}),
    st.fixed_dictionaries({"csi": fields({"driver": st.sampled_from(["blob.csi.azure.com", "file.csi.azure.com"])})}),
)
VOLUMES = st.lists(st.builds(lambda name, source: {"name": name, **source}, NAMES, VOLUME_SOURCES), max_size=3)
MATCH_EXPRESSIONS = st.lists(fields(
    {"key": LABEL_KEYS, "operator": st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Bogus"])},
    {"values": st.lists(LABEL_VALUES, max_size=3)},
), max_size=2)
AFFINITIES = fields({}, {"nodeAffinity": fields({}, {
    "requiredDuringSchedulingIgnoredDuringExecution": fields({"nodeSelectorTerms": st.lists(fields(
        {}, {"matchExpressions": MATCH_EXPRESSIONS, "matchFields": MATCH_EXPRESSIONS}), max_size=2)}),
    "preferredDuringSchedulingIgnoredDuringExecution": st.lists(st.fixed_dictionaries(
        {"weight": st.integers(-1, 101), "preference": st.fixed_dictionaries({"matchExpressions": MATCH_EXPRESSIONS})}),
        max_size=1),
})})
TOLERATIONS = st.lists(fields({}, {
    "key": st.sampled_from(["sku", "nvidia.com/gpu", "kubernetes.azure.com/accelerator", "gpu", "", "CriticalAddonsOnly"]),
    "operator": st.sampled_from(["Equal", "Exists", "exists", "Bogus"]),
    "value": st.sampled_from(["gpu", "true", "present", ""]),
    "effect": TAINT_EFFECTS,
    "tolerationSeconds": st.integers(-5, 10**6),
}), max_size=3)
POD_SPECS = fields(
    {"containers": st.lists(CONTAINERS, min_size=1, max_size=3)},
    {
        "initContainers": st.lists(CONTAINERS, max_size=2),
        "ephemeralContainers": st.lists(CONTAINERS, max_size=1),
        "volumes": VOLUMES,
        "nodeSelector": LABELS,
        "affinity": AFFINITIES,
        "tolerations": TOLERATIONS,
        "priorityClassName": NAMES,
        "schedulerName": st.sampled_from(["volcano", "default-scheduler", "kai-scheduler", ""]),
        "terminationGracePeriodSeconds": st.one_of(st.integers(-1, 10**6), st.just(10**19)),
        "securityContext": fields({}, {"runAsNonRoot": st.booleans(), "runAsUser": st.sampled_from([0, 1000]),
                                       "fsGroup": st.integers(0, 2000)}),
        "restartPolicy": st.sampled_from(["Always", "Never", "OnFailure", "Sometimes"]),
        "hostNetwork": st.booleans(), "hostIPC": st.booleans(), "hostPID": st.booleans(), "hostUsers": st.booleans(),
        "nodeName": NAMES, "runtimeClassName": st.sampled_from(["nvidia", "kata"]),
        "os": st.fixed_dictionaries({"name": st.sampled_from(["linux", "windows"])}),
        "serviceAccountName": NAMES,
    },
)
TEMPLATES = fields({"spec": POD_SPECS}, {"metadata": fields({}, {"labels": LABELS, "annotations": ANNOTATIONS})})


def metadata():
    return fields({"name": NAMES}, {"namespace": NAMESPACES, "labels": LABELS, "annotations": ANNOTATIONS,
                                   "generateName": NAMES})


def obj(api_versions, kinds, spec=None, weight: int = 10, **top):
    """An object of one of ``kinds`` (apiVersion from ``api_versions``), ``spec`` often set."""
    required = {"apiVersion": st.sampled_from(api_versions), "kind": st.sampled_from(kinds), "metadata": metadata()}
    optional = dict(top)
    if spec is not None:
        required["spec"] = spec
    return fields(required, optional, weight=weight * 3)


# -- pod-carrying kinds ----------------------------------------------------------------------

JOB_SPECS = fields({"template": TEMPLATES}, {
    "parallelism": st.integers(-1, 10**4), "completions": st.integers(0, 100), "suspend": st.booleans(),
    "backoffLimit": st.integers(0, 10), "completionMode": st.sampled_from(["Indexed", "NonIndexed"]),
})
REPLICA_SPECS = fields({"template": TEMPLATES}, {"replicas": st.integers(-1, 64),
                                                 "restartPolicy": st.sampled_from(["OnFailure", "Never", "ExitCode"])})
KUBEFLOW_FIELDS = {"PyTorchJob": "pytorchReplicaSpecs", "TFJob": "tfReplicaSpecs", "MPIJob": "mpiReplicaSpecs",
                   "XGBoostJob": "xgbReplicaSpecs", "PaddleJob": "paddleReplicaSpecs", "JAXJob": "jaxReplicaSpecs"}
ROLES = st.sampled_from(["Master", "Worker", "Chief", "PS", "Evaluator", "Launcher", "master", "worker", "Extra"])


@st.composite
def kubeflow_jobs(draw):
    kind = draw(st.sampled_from(sorted(KUBEFLOW_FIELDS)))
    roles = draw(st.lists(ROLES, min_size=1, max_size=3, unique=True))
    shared = draw(REPLICA_SPECS)  # the same object twice: YAML gets an anchor and an alias
    specs = {role: (shared if draw(st.booleans()) else draw(REPLICA_SPECS)) for role in roles}
    field_name = draw(st.sampled_from([KUBEFLOW_FIELDS[kind]] * 6 + ["pytorchReplicaSpecs", "replicaSpecs"]))
    spec = {field_name: draw(odd(st.just(specs), 12))}
    if draw(st.booleans()):
        spec["runPolicy"] = draw(fields({}, {"cleanPodPolicy": st.sampled_from(["None", "All"]),
                                             "suspend": st.booleans(),
                                             "schedulingPolicy": st.fixed_dictionaries({"queue": NAMES})}))
    if kind == "MPIJob" and draw(st.booleans()):
        spec["slotsPerWorker"] = draw(odd(st.integers(0, 8)))
    return {
        "apiVersion": draw(st.sampled_from(["kubeflow.org/v1", "kubeflow.org/v2beta1", "kubeflow.org/v1alpha2"])),
        "kind": kind, "metadata": draw(metadata()), "spec": spec,
    }


VOLCANO_TASKS = st.lists(fields({"template": TEMPLATES}, {
    "name": NAMES, "replicas": st.integers(-1, 32), "minAvailable": st.integers(0, 32),
    "policies": st.lists(st.fixed_dictionaries({"event": st.sampled_from(["PodEvicted", "TaskCompleted"]),
                                                "action": st.sampled_from(["RestartJob", "CompleteJob"])}), max_size=1),
}), max_size=3)
RAY_CLUSTER = fields({}, {
    "headGroupSpec": fields({"template": TEMPLATES}, {"rayStartParams": st.dictionaries(st.text(max_size=5),
                                                                                        st.text(max_size=5), max_size=2)}),
    "workerGroupSpecs": st.lists(fields({"template": TEMPLATES}, {
        "groupName": NAMES, "replicas": st.integers(-1, 16), "minReplicas": st.integers(0, 4),
        "maxReplicas": st.integers(0, 64)}), max_size=2),
    "enableInTreeAutoscaling": st.booleans(),
})

WORKLOADS = st.one_of(
    obj(["v1"], ["Pod"], POD_SPECS),
    obj(["apps/v1", "extensions/v1beta1", "apps/v1beta2"], ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"],
        fields({"template": TEMPLATES}, {
            "replicas": st.integers(-1, 10**4),
            "selector": st.fixed_dictionaries({"matchLabels": LABELS}),
            "volumeClaimTemplates": st.lists(fields({"metadata": st.fixed_dictionaries({"name": NAMES})}, {
                "spec": fields({}, {"accessModes": st.lists(st.sampled_from(["ReadWriteOnce", "ReadWriteMany",
                                                                             "ReadOnlyMany"]), max_size=2),
                                    "storageClassName": NAMES,
                                    "resources": st.fixed_dictionaries({"requests": RESOURCE_MAPS})})}), max_size=1),
            "serviceName": NAMES,
        })),
    obj(["v1"], ["ReplicationController"], fields({"template": TEMPLATES}, {"replicas": st.integers(0, 5)})),
    obj(["v1"], ["PodTemplate"], None, template=TEMPLATES),
    obj(["batch/v1"], ["Job"], JOB_SPECS),
    obj(["batch/v1", "batch/v1beta1", "batch/v2alpha1"], ["CronJob"], fields(
        {"jobTemplate": fields({"spec": JOB_SPECS}, {"metadata": fields({}, {"labels": LABELS})})},
        {"schedule": st.sampled_from(["*/5 * * * *", "@daily", "", "not a schedule"]), "suspend": st.booleans()})),
    kubeflow_jobs(),
    obj(["batch.volcano.sh/v1alpha1"], ["Job"], fields({"tasks": VOLCANO_TASKS}, {
        "schedulerName": st.sampled_from(["volcano", "default-scheduler", ""]), "minAvailable": st.integers(-1, 100),
        "queue": NAMES, "maxRetry": st.integers(0, 5),
        "plugins": st.dictionaries(st.sampled_from(["pytorch", "env", "svc", "ssh"]), st.lists(st.text(max_size=6),
                                                                                            max_size=2), max_size=2),
    })),
    obj(["ray.io/v1", "ray.io/v1alpha1"], ["RayCluster"], RAY_CLUSTER),
    obj(["ray.io/v1"], ["RayJob"], fields({}, {"rayClusterSpec": RAY_CLUSTER, "entrypoint": st.text(max_size=10),
                                               "suspend": st.booleans(), "shutdownAfterJobFinishes": st.booleans()})),
    obj(["ray.io/v1"], ["RayService"], fields({}, {"rayClusterConfig": RAY_CLUSTER, "serveConfigV2": st.text(max_size=10)})),
    obj(["jobset.x-k8s.io/v1alpha2"], ["JobSet"], fields({"replicatedJobs": st.lists(fields(
        {"name": NAMES, "template": fields({"spec": JOB_SPECS})}, {"replicas": st.integers(-1, 16)}), max_size=2)},
        {"suspend": st.booleans()})),
)

# -- custom resources and reference kinds ----------------------------------------------------

FLAVOR_QUOTAS = st.lists(fields({"name": st.sampled_from(["a100", "t4", "default-flavor", "spot", "missing"])}, {
    "resources": st.lists(fields({"name": RESOURCE_NAMES, "nominalQuota": QUANTITIES},
                                 {"borrowingLimit": QUANTITIES, "lendingLimit": QUANTITIES}), max_size=3),
}), max_size=2)
CRDS_AND_REFERENCES = st.one_of(
    obj(["kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1alpha1"], ["LocalQueue"], fields({}, {"clusterQueue": NAMES})),
    obj(["kueue.x-k8s.io/v1beta1"], ["ClusterQueue"], fields({}, {
        "cohort": NAMES, "namespaceSelector": st.one_of(st.just({}), st.fixed_dictionaries({"matchLabels": LABELS})),
        "resourceGroups": st.lists(fields({}, {"coveredResources": st.lists(RESOURCE_NAMES, max_size=3),
                                               "flavors": FLAVOR_QUOTAS}), max_size=2),
        "preemption": st.fixed_dictionaries({"withinClusterQueue": st.sampled_from(["Never", "LowerPriority"])}),
        "queueingStrategy": st.sampled_from(["BestEffortFIFO", "StrictFIFO"]),
    })),
    obj(["kueue.x-k8s.io/v1beta1"], ["ResourceFlavor"], fields({}, {
        "nodeLabels": LABELS, "nodeTaints": st.lists(fields({"key": LABEL_KEYS, "effect": TAINT_EFFECTS},
                                                            {"value": LABEL_VALUES}), max_size=2),
        "tolerations": TOLERATIONS})),
    obj(["kueue.x-k8s.io/v1alpha1", "kueue.x-k8s.io/v1beta1"], ["Cohort"], fields({}, {"parent": NAMES})),
    obj(["kueue.x-k8s.io/v1beta1"], ["WorkloadPriorityClass"], None, value=st.integers(-10, 10**9)),
    obj(["scheduling.volcano.sh/v1beta1"], ["Queue"], fields({}, {"weight": st.integers(0, 10),
                                                                  "capability": RESOURCE_MAPS, "reclaimable": st.booleans()})),
    obj(["scheduling.volcano.sh/v1beta1"], ["PodGroup"], fields({}, {"minMember": st.integers(0, 10), "queue": NAMES,
                                                                     "minResources": RESOURCE_MAPS})),
    obj(["kaito.sh/v1alpha1", "kaito.sh/v1beta1"], ["Workspace"], None,
        resource=fields({}, {"instanceType": VM_SIZES, "count": st.integers(-1, 8),
                             "labelSelector": st.fixed_dictionaries({"matchLabels": LABELS})}),
        inference=fields({}, {"preset": fields({"name": st.sampled_from(["falcon-7b", "phi-3-mini-4k-instruct", ""])})}),
        tuning=fields({}, {
            "preset": fields({"name": st.sampled_from(["falcon-7b", "phi-3-mini-4k-instruct"])}),
            "method": st.sampled_from(["lora", "qlora", "full"]),
            "input": fields({}, {"urls": st.lists(st.sampled_from([
                "https://huggingface.co/datasets/x/resolve/main/train.parquet", "http://example.com/data.csv",
                "https://myaccount.blob.core.windows.net/data/train.jsonl", "s3://bucket/x", ""]), max_size=2),
                "image": IMAGES, "volume": st.fixed_dictionaries({"persistentVolumeClaim": st.fixed_dictionaries(
                    {"claimName": NAMES})})}),
            "output": fields({}, {"image": IMAGES, "imagePushSecret": NAMES,
                                  "volume": st.fixed_dictionaries({"persistentVolumeClaim": st.fixed_dictionaries(
                                      {"claimName": NAMES})})}),
        })),
    obj(["monitoring.coreos.com/v1", "azmonitoring.coreos.com/v1"], ["PodMonitor"], fields({}, {
        "selector": fields({}, {"matchLabels": LABELS, "matchExpressions": MATCH_EXPRESSIONS}),
        "namespaceSelector": fields({}, {"any": st.booleans(), "matchNames": st.lists(NAMESPACES, max_size=2)}),
        "podMetricsEndpoints": st.lists(fields({}, {"port": st.sampled_from(["metrics", "http", "nope", ""]),
                                                    "targetPort": st.integers(0, 70000), "path": st.just("/metrics")}),
                                        max_size=2),
    })),
    obj(["monitoring.coreos.com/v1", "azmonitoring.coreos.com/v1"], ["ServiceMonitor"], fields({}, {
        "selector": fields({}, {"matchLabels": LABELS}),
        "endpoints": st.lists(fields({}, {"port": st.sampled_from(["metrics", "http", "nope"]),
                                          "interval": st.sampled_from(["30s", "1m", "x"])}), max_size=2),
    })),
    obj(["v1"], ["Service"], fields({}, {"selector": LABELS, "ports": st.lists(fields(
        {"port": st.integers(0, 70000)}, {"name": st.sampled_from(["metrics", "http"]),
                                          "targetPort": st.one_of(st.integers(0, 70000), st.sampled_from(["metrics"]))}),
        max_size=2), "clusterIP": st.sampled_from(["None", ""])})),
    obj(["v1"], ["LimitRange"], fields({"limits": st.lists(fields({"type": st.sampled_from(["Container", "Pod", "PVC", ""])}, {
        "default": RESOURCE_MAPS, "defaultRequest": RESOURCE_MAPS, "min": RESOURCE_MAPS, "max": RESOURCE_MAPS,
        "maxLimitRequestRatio": RESOURCE_MAPS}), max_size=2)})),
    obj(["storage.k8s.io/v1"], ["StorageClass"], None,
        provisioner=st.sampled_from(["disk.csi.azure.com", "file.csi.azure.com", "blob.csi.azure.com", "kubernetes.io/no"]),
        reclaimPolicy=st.sampled_from(["Delete", "Retain", "Recycle", ""]),
        volumeBindingMode=st.sampled_from(["WaitForFirstConsumer", "Immediate"]),
        parameters=st.dictionaries(st.sampled_from(["skuName", "protocol"]), st.text(max_size=6), max_size=2)),
    obj(["v1"], ["PersistentVolumeClaim"], fields({}, {
        "accessModes": st.lists(st.sampled_from(["ReadWriteOnce", "ReadWriteMany", "ReadWriteOncePod", "ReadOnlyMany"]),
                                max_size=2),
        "storageClassName": st.one_of(NAMES, st.sampled_from(["managed-csi", "azurefile-csi", "azureblob-fuse-premium",
                                                              "default", ""])),
        "resources": st.fixed_dictionaries({"requests": RESOURCE_MAPS}), "volumeName": NAMES})),
    obj(["v1"], ["PersistentVolume"], fields({}, {
        "persistentVolumeReclaimPolicy": st.sampled_from(["Delete", "Retain", "Recycle"]),
        "storageClassName": NAMES, "capacity": RESOURCE_MAPS,
        "claimRef": fields({}, {"name": NAMES, "namespace": NAMESPACES}),
        "csi": fields({}, {"driver": st.sampled_from(["blob.csi.azure.com"]), "volumeHandle": st.text(max_size=5)})})),
    obj(["scheduling.k8s.io/v1"], ["PriorityClass"], None, value=st.integers(-(2**31), 2**31),
        preemptionPolicy=st.sampled_from(["Never", "PreemptLowerPriority", ""]), globalDefault=st.booleans()),
    obj(["networking.k8s.io/v1"], ["NetworkPolicy"], fields({"podSelector": fields({}, {"matchLabels": LABELS})}, {
        "policyTypes": st.lists(st.sampled_from(["Ingress", "Egress", "Both"]), max_size=2),
        "ingress": st.lists(fields({}, {
            "from": st.lists(fields({}, {"podSelector": fields({}, {"matchLabels": LABELS}),
                                         "namespaceSelector": fields({}, {"matchLabels": LABELS}),
                                         "ipBlock": fields({"cidr": st.sampled_from(["10.0.0.0/8", "0.0.0.0/0", "x"])},
                                                           {"except": st.lists(st.text(max_size=5), max_size=1)})}),
                             max_size=2),
            "ports": st.lists(fields({}, {"port": st.one_of(st.integers(0, 70000), st.sampled_from(["dns", "nccl"])),
                                          "endPort": st.integers(0, 70000),
                                          "protocol": st.sampled_from(["TCP", "UDP"])}), max_size=2)}), max_size=2),
        "egress": st.lists(fields({}, {
            "to": st.lists(fields({}, {"podSelector": fields({}, {"matchLabels": LABELS}),
                                       "namespaceSelector": fields({}, {"matchLabels": LABELS})}), max_size=2),
            "ports": st.lists(fields({}, {"port": st.sampled_from([53, 443, "dns"]),
                                          "protocol": st.sampled_from(["UDP", "TCP"])}), max_size=2)}), max_size=2),
    })),
    obj(["nvidia.com/v1"], ["ClusterPolicy"], fields({}, {
        "devicePlugin": fields({}, {"enabled": st.booleans()}), "dcgmExporter": fields({}, {"enabled": st.booleans()}),
        "mig": fields({}, {"strategy": st.sampled_from(["single", "mixed", "none"])}),
        "migManager": fields({}, {"enabled": st.booleans(), "config": fields({}, {"name": NAMES})}),
        "daemonsets": fields({}, {"tolerations": TOLERATIONS, "priorityClassName": NAMES}),
    })),
    obj(["apiextensions.k8s.io/v1"], ["CustomResourceDefinition"], fields({}, {
        "group": st.sampled_from(["kubeflow.org", "kueue.x-k8s.io", "example.com", ""]),
        "names": fields({}, {"kind": st.sampled_from(["PyTorchJob", "Widget", ""]), "plural": st.text(max_size=6)}),
        "scope": st.sampled_from(["Namespaced", "Cluster"]),
        "versions": st.lists(fields({"name": st.sampled_from(["v1", "v1alpha1", "v2beta1"])}, {
            "served": st.booleans(), "storage": st.booleans(),
            "schema": st.fixed_dictionaries({"openAPIV3Schema": st.recursive(
                st.fixed_dictionaries({"type": st.sampled_from(["string", "integer", "object", "array", "boolean",
                                                                "number", "bogus"])},
                                      optional={"pattern": st.sampled_from(["^[a-z]+$", "(", "(a+)+$", "[", "\\"]),
                                                "format": st.sampled_from(["int-or-string", "date-time", "nope"]),
                                                "x-kubernetes-int-or-string": st.booleans(),
                                                "enum": st.lists(st.text(max_size=3), max_size=2)}),
                lambda inner: st.fixed_dictionaries({"type": st.just("object")}, optional={
                    "properties": st.dictionaries(st.sampled_from(["spec", "replicas", "template", "x"]), inner,
                                                  max_size=3),
                    "items": inner, "required": st.lists(st.sampled_from(["spec", "x"]), max_size=2),
                    "additionalProperties": st.one_of(st.booleans(), inner),
                    "x-kubernetes-preserve-unknown-fields": st.booleans()}),
                max_leaves=6)}),
        }), max_size=2),
    })),
    obj(["v1"], ["ConfigMap"], None, data=st.dictionaries(st.text(max_size=6), st.text(max_size=12), max_size=2)),
    obj(["v1"], ["Namespace"], None),
)
ANY_OBJECT = st.builds(
    lambda api, kind, body: {"apiVersion": api, "kind": kind, **(body if isinstance(body, dict) else {"spec": body})},
    st.one_of(st.text(max_size=10), st.sampled_from(["v1", "apps/v1", "x.io/v1", "/", "a/b/c"])),
    st.one_of(st.text(max_size=10), st.sampled_from(["Pod", "Job", "List", "PodList", "Widget"])),
    ODD,
)
OBJECTS = st.one_of(WORKLOADS, WORKLOADS, CRDS_AND_REFERENCES, ANY_OBJECT)


@st.composite
def manifests(draw, max_objects: int = 4) -> str:
    """YAML text: several documents, or one ``kind: List`` (as ``kubectl get -o yaml`` writes)."""
    import yaml

    objects = draw(st.lists(OBJECTS, min_size=1, max_size=max_objects))
    layout = draw(st.sampled_from(["documents", "documents", "list", "json"]))
    if layout == "list":
        return yaml.safe_dump({"apiVersion": "v1", "kind": draw(st.sampled_from(["List", "PodList"])), "items": objects},
                              allow_unicode=True)
    if layout == "json":
        import json

        return json.dumps(objects[0], ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 2])))
    return yaml.safe_dump_all(objects, allow_unicode=True, explicit_start=draw(st.booleans()))


# -- az aks scripts --------------------------------------------------------------------------

AZ_COMMANDS = st.sampled_from(["az aks create", "az aks nodepool add", "az aks nodepool update", "az aks update",
                               "az aks nodepool delete", "az group create", "az aks get-credentials"])
AZ_FLAGS = {
    "--resource-group": st.sampled_from(["$RG", "rg", "'my rg'", ""]),
    "--cluster-name": st.sampled_from(["$CLUSTER", "aks1"]),
    "--name": st.one_of(st.sampled_from(["gpunp", "$POOL", "sys", "a" * 13, "nodepool1", "<pool-name>"]), NAMES),
    "--node-vm-size": st.one_of(VM_SIZES, st.just("$VM_SIZE")),
    "-s": VM_SIZES,
    "--node-count": st.sampled_from(["0", "1", "3", "-1", "x", "1000", "$N"]),
    "--min-count": st.sampled_from(["0", "1", "3", "-1", "x", "99999999999999999999"]),
    "--max-count": st.sampled_from(["0", "2", "10", "x", "1e3"]),
    "--enable-cluster-autoscaler": st.just(""),
    "--disable-cluster-autoscaler": st.just(""),
    "--update-cluster-autoscaler": st.just(""),
    "--mode": st.sampled_from(["User", "System", "user", "Bogus", ""]),
    "--node-taints": st.sampled_from(["sku=gpu:NoSchedule", "nvidia.com/gpu=present:NoSchedule", "a=b:Bogus",
                                      "sku=gpu:NoSchedule,x=y:NoExecute", "=", "", "sku=gpu", "'sku=gpu:NoSchedule'"]),
    "--labels": st.sampled_from(["accelerator=nvidia", "app=train", "sku=gpu accelerator=nvidia", "a=b c=d", "=",
                                 "accelerator=", "x"]),
    "--nodepool-labels": st.sampled_from(["accelerator=nvidia", "x=y"]),
    "--gpu-instance-profile": st.sampled_from(["MIG1g", "MIG3g", "MIG7g", "MIG9g", ""]),
    "--cluster-autoscaler-profile": st.sampled_from([
        "scale-down-delay-after-add=10m", "max-graceful-termination-sec=600", "max-graceful-termination-sec=x",
        "scan-interval=10s scale-down-unneeded-time=5m", "bogus-key=1", "=", "scale-down-delay-after-add=1h2m3s",
        "max-graceful-termination-sec=99999999999999999999999", "expander=priority"]),
    "--kubernetes-version": st.sampled_from(["1.30", "1.29.4", "x"]),
    "--max-pods": st.sampled_from(["30", "250", "0", "x"]),
    "--skip-gpu-driver-install": st.just(""),
    "--gpu-driver": st.sampled_from(["None", "Install", "bogus"]),
    "--os-sku": st.sampled_from(["Ubuntu", "AzureLinux", "Windows2022"]),
    "--zones": st.sampled_from(["1 2 3", "1", ""]),
    "--node-osdisk-type": st.sampled_from(["Ephemeral", "Managed"]),
    "--priority": st.sampled_from(["Spot", "Regular"]),
    "--enable-addons": st.sampled_from(["monitoring", "azure-keyvault-secrets-provider"]),
    "--bogus-flag": st.text(max_size=5),
}


@st.composite
def az_scripts(draw) -> str:
    lines = [draw(st.sampled_from(["#!/usr/bin/env bash", "#!/bin/sh", "set -euo pipefail", ""]))]
    for _ in range(draw(st.integers(1, 4))):
        choice = draw(st.integers(0, 5))
        if choice == 0:
            name = draw(st.sampled_from(["RG", "CLUSTER", "VM_SIZE", "POOL", "N"]))
            value = draw(st.one_of(VM_SIZES, st.sampled_from(["x", "$(date)", '"a b"', "3", ""])))
            lines.append(f"{name}={value}")
            continue
        if choice == 1:
            lines.append(draw(st.sampled_from(["for i in 1 2; do", "done", "if [ -n \"$X\" ]; then", "fi",
                                               "echo 'unterminated", "cat <<EOF", "EOF", "x=$(", "`", "# comment",
                                               "# mlops-lint: disable=AKS001", "# mlops-lint: disable-file=AKS"])))
            continue
        flags = draw(st.lists(st.sampled_from(sorted(AZ_FLAGS)), max_size=7))
        words = [draw(AZ_COMMANDS)]
        for flag in flags:
            value = draw(AZ_FLAGS[flag])
            words.append(f"{flag} {value}".rstrip())
        separator = draw(st.sampled_from([" ", " \\\n  ", " \\\n"]))
        lines.append(separator.join(words))
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n", "\\\n"]))


# -- Dockerfiles -----------------------------------------------------------------------------

BASE_IMAGES = st.one_of(IMAGES, st.sampled_from(["scratch", "$BASE", "${BASE:-ubuntu}", "builder",
                                                  "nvidia/cuda:12.4.1-devel-ubuntu22.04",
                                                  "mcr.microsoft.com/azureml/openmpi4.1.0-cuda11.8-cudnn8-ubuntu22.04"]))
DOCKER_LINES = st.one_of(
    st.builds(lambda image, alias: f"FROM {image}{alias}", BASE_IMAGES, st.sampled_from(["", " AS builder", " as x", " AS"])),
    st.builds(lambda flags: f"FROM {flags} nvidia/cuda:12.4.1-runtime-ubuntu22.04",
              st.sampled_from(["--platform=linux/amd64", "--platform=$BUILDPLATFORM"])),
    st.sampled_from([
        "ARG BASE=ubuntu:22.04", "ARG CUDA", "ENV NCCL_DEBUG=INFO", "ENV A=1 B=2", "ENV X",
        "RUN pip install torch", "RUN pip install --no-cache-dir torch==2.4.1", "RUN pip3 install -r requirements.txt",
        "RUN python -m pip install nvidia-cudnn-cu12", "RUN apt-get update && apt-get install -y cuda-toolkit-12-4",
        "RUN --mount=type=cache,target=/root/.cache pip install x", "RUN <<EOF\npip install torch\nEOF",
        "RUN <<-EOT bash\n\tpip install x\n\tEOT", "COPY data/ /data/", "COPY datasets /datasets", "ADD model.pt /m/",
        "COPY --from=builder /out /out", "COPY ckpt/*.safetensors /w/", "ADD https://example.com/x.parquet /d/",
        "COPY train.py .", "USER 1000", "USER root", "USER", "WORKDIR /workspace",
        'ENTRYPOINT ["python", "train.py"]', "ENTRYPOINT python train.py", 'CMD ["--epochs", "3"]', "CMD torchrun t.py",
        'CMD ["unclosed', "LABEL gpu=true", 'LABEL org.opencontainers.image.description="GPU training"',
        "HEALTHCHECK CMD curl -f http://localhost/ || exit 1", "HEALTHCHECK NONE", "ONBUILD RUN pip install x",
        "SHELL [\"/bin/bash\", \"-c\"]", "EXPOSE 8080", "STOPSIGNAL SIGTERM", "RUNN echo typo", "# syntax=docker/dockerfile:1",
        "# escape=`", "# mlops-lint: disable=DKR004", "RUN echo a \\\n    && echo b", "RUN echo \\", "\\", "FROM",
        "MAINTAINER me", "VOLUME /data", "",
    ]),
    st.text(max_size=20),
)
DOCKERFILES = st.lists(DOCKER_LINES, min_size=1, max_size=8).map(lambda lines: "\n".join(lines) + "\n")
DOCKERFILE_NAMES = st.sampled_from(["Dockerfile", "gpu.Dockerfile", "Dockerfile.gpu", "Containerfile", "train.dockerfile",
                                    "cuda/Dockerfile"])

# -- configs ---------------------------------------------------------------------------------

NODE_POOLS = st.lists(st.fixed_dictionaries(
    {"name": st.sampled_from(["gpunp", "sys", "a100", "spot", "名前"]), "vm-size": VM_SIZES.filter(
        lambda s: bool(s) and s.strip() == s and "_" in s and not s.startswith("<"))},
    optional={
        "mode": st.sampled_from(["System", "User", "system", "user"]),
        "labels": st.dictionaries(COMMON_LABEL_KEYS, COMMON_LABEL_VALUES, max_size=2),
        "taints": st.lists(st.sampled_from(["sku=gpu:NoSchedule", "nvidia.com/gpu=present:NoSchedule", "a:NoExecute",
                                            "k=v:PreferNoSchedule"]), max_size=2),
        "min-count": st.integers(0, 5), "max-count": st.integers(0, 10), "node-count": st.integers(0, 10),
        "enable-cluster-autoscaler": st.booleans(),
        "gpu-instance-profile": st.sampled_from(["MIG1g", "MIG2g", "MIG3g", "MIG4g", "MIG7g"]),
    },
).filter(lambda p: not (isinstance(p.get("min-count"), int) and isinstance(p.get("max-count"), int)
                        and p["min-count"] > p["max-count"])), max_size=3)
CONFIGS = st.fixed_dictionaries({}, optional={
    "profile": st.sampled_from(["aks-standard", "aks-automatic"]),
    "trusted-registries": st.lists(st.sampled_from(["myacr.azurecr.io", "nvcr.io", "mcr.microsoft.com", "docker.io"]),
                                   min_size=1, max_size=3),
    "required-labels": st.lists(st.sampled_from(["app.kubernetes.io/name", "team", "cost-center"]), min_size=1, max_size=2),
    "gpu-node-labels": st.dictionaries(st.sampled_from(["accelerator", "kubernetes.azure.com/accelerator", "pool"]),
                                       st.sampled_from(["nvidia", "true", "gpu"]), max_size=2),
    "gpu-taints": st.lists(st.fixed_dictionaries({"key": st.sampled_from(["sku", "nvidia.com/gpu", "gpu"])}, optional={
        "value": st.sampled_from(["gpu", "present", ""]),
        "effect": st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])}), max_size=2),
    "node-pools": NODE_POOLS,
    "kubernetes-version": st.sampled_from(["1.25", "1.30", "1.34"]),
})


# -- structural mutations of real manifests --------------------------------------------------


def _paths(node, prefix=()):
    """Every path inside a loaded YAML document (containers and leaves)."""
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, prefix + (index,))


def _get(node, path):
    for part in path:
        node = node[part]
    return node


MUTATIONS = st.sampled_from(["odd", "odd", "delete", "duplicate", "extra", "swap", "wrap", "unwrap", "copy"])


@st.composite
def mutated_documents(draw, documents: list, max_mutations: int = 3) -> list:
    """``documents`` (loaded YAML) with a few structural changes: a value replaced by an odd one
    or by another value of the same file, a key deleted or added, an item duplicated, a value
    wrapped in a list or a list replaced by its first item."""
    import copy

    documents = copy.deepcopy(documents)
    for _ in range(draw(st.integers(1, max_mutations))):
        paths = [(i, p) for i, d in enumerate(documents) for p in _paths(d)]
        if not paths:
            break
        index, path = draw(st.sampled_from(paths))
        operation = draw(MUTATIONS)
        if not path:
            if operation == "odd":
                documents[index] = draw(ODD)
            continue
        parent = _get(documents[index], path[:-1])
        key = path[-1]
        value = parent[key]
        if operation == "odd":
            parent[key] = draw(ODD)
        elif operation == "delete":
            del parent[key]
        elif operation == "duplicate" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(value))
        elif operation == "extra" and isinstance(value, dict):
            value[draw(EXTRA_KEYS)] = draw(ODD)
        elif operation == "swap":
            other_index, other = draw(st.sampled_from(paths))
            if other and other[:len(path)] != path and path[:len(other)] != other:
                parent[key] = copy.deepcopy(_get(documents[other_index], other))
        elif operation == "wrap":
            parent[key] = [value]
        elif operation == "unwrap" and isinstance(value, list) and value:
            parent[key] = value[0]
        elif operation == "copy" and isinstance(parent, dict) and isinstance(value, (dict, list)):
            parent[draw(EXTRA_KEYS)] = value  # the same object twice: the dump writes an anchor and an alias
    return documents


@st.composite
def mutated_lines(draw, text: str) -> str:
    """A script or Dockerfile with a few lines deleted, duplicated, swapped or cut short."""
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 3))):
        if not lines:
            break
        at = draw(st.integers(0, len(lines) - 1))
        operation = draw(st.sampled_from(["delete", "duplicate", "cut", "odd", "join"]))
        if operation == "delete":
            del lines[at]
        elif operation == "duplicate":
            lines.insert(at, lines[at])
        elif operation == "cut":
            lines[at] = lines[at][: draw(st.integers(0, len(lines[at])))]
        elif operation == "odd":
            words = lines[at].split(" ")
            words[draw(st.integers(0, len(words) - 1))] = draw(st.one_of(ODD_STRINGS, st.text(max_size=6)))
            lines[at] = " ".join(words)
        elif at + 1 < len(lines):
            lines[at:at + 2] = [lines[at] + " \\\n" + lines[at + 1]]
    return "\n".join(lines)
