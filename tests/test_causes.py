"""Issue #16's root causes of wrong findings, one minimal reproduction each: every test here fails
if its cause comes back (placeholders judged as values, one object counted twice, scripts read in
file order, two findings for one cause, messages that say what is not true)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry
from tests.strategies import FUZZ

REPO = Path(__file__).resolve().parents[1]
REGISTRY = load_registry()


def lint_text(text: str, name: str = "job.yaml", select: list[str] | None = None):
    """Active findings of one file read from stdin as ``name``."""
    report = lint(LintRequest(paths=[], config=Config(), registry=REGISTRY, select=select,
                              stdin=(name, text.encode()), cwd=REPO))
    return report.active


def lint_files(tmp_path: Path, files: dict[str, str], select: list[str] | None = None):
    """Active findings of a project of several files (a ``.mlops-lint.yaml`` makes it one root)."""
    (tmp_path / ".mlops-lint.yaml").write_text("{}\n")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=REGISTRY, select=select, cwd=tmp_path))
    return report.active


def rules(findings) -> list[tuple[str, int]]:
    return sorted((f.rule, f.line) for f in findings)


POD = """apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  containers:
  - name: trainer
    image: {image}
"""


# ---------------------------------------------------------------------------------------------
# §4 Placeholders are not values


@pytest.mark.parametrize("image", ["<your-image>", "your-acr.azurecr.io/trainer", "REPLACE_ME", "IMG_PLACEHOLDER",
                                   "myacr.azurecr.io/<image>", "${IMAGE}", "{{ .Values.image }}", "[trainer|server]",
                                   "nvcr.io/nvidia/pytorch@sha256:…", "..."])
def test_placeholder_images_are_not_judged(image):
    assert rules(lint_text(POD.format(image=f'"{image}"'), select=["IMG001", "IMG002", "IMG003", "IMG004"])) == []


def test_a_real_image_is_still_judged():
    assert rules(lint_text(POD.format(image="pytorch/pytorch"), select=["IMG001", "IMG002"])) == [("IMG001", 8)]
    assert rules(lint_text(POD.format(image="pytorch/pytorch:2.4.1"), select=["IMG001", "IMG002"])) == [("IMG002", 8)]


# ---------------------------------------------------------------------------------------------
# §3 One finding per cause

PRIVILEGED = """apiVersion: apps/v1
kind: {kind}
metadata:
  name: agent
spec:
  selector: {{matchLabels: {{app: agent}}}}
  template:
    metadata: {{labels: {{app: agent}}}}
    spec:
      containers:
      - name: agent
        image: myacr.azurecr.io/agent:1.0
        securityContext:
          privileged: true
"""


@pytest.mark.parametrize("kind", ["Deployment", "DaemonSet"])
def test_privileged_is_sec004_alone(kind):
    found = lint_text(PRIVILEGED.format(kind=kind), select=["SEC001", "SEC002", "SEC004"])
    assert rules(found) == [("SEC004", 14)]


def test_sec004_advice_fits_the_container():
    workload = lint_text(PRIVILEGED.format(kind="Deployment"), select=["SEC004"])[0].message
    agent = lint_text(PRIVILEGED.format(kind="DaemonSet"), select=["SEC004"])[0].message
    assert "gets its GPUs from the device plugin" in workload and "node agent" not in workload
    assert "a node agent (device plugin, MIG manager, profiler, exporter)" in agent
    assert "request GPUs through the device plugin" not in agent


PLUGIN = """apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-device-plugin-daemonset
  namespace: kube-system
spec:
  selector: {matchLabels: {name: nvidia-device-plugin-ds}}
  template:
    metadata: {labels: {name: nvidia-device-plugin-ds}}
    spec:
      priorityClassName: system-node-critical
      tolerations:
      - operator: Exists
      containers:
      - name: nvidia-device-plugin-ctr
        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.1
        securityContext:
          privileged: true
        volumeMounts:
        - {name: device-plugin, mountPath: /var/lib/kubelet/device-plugins}
      volumes:
      - name: device-plugin
        hostPath: {path: /var/lib/kubelet/device-plugins}
"""


def test_privileged_device_plugin_is_sec004_alone():
    found = lint_text(PLUGIN, select=["SEC001", "SEC002", "SEC004", "GPU010"])
    assert rules(found) == [("SEC004", 18)]


WINDOWS = """apiVersion: v1
kind: Pod
metadata:
  name: win
spec:
{placement}
  containers:
  - name: app
    image: mcr.microsoft.com/windows/servercore:ltsc2022
"""


@pytest.mark.parametrize("placement", [
    "  os: {name: windows}",
    "  nodeSelector: {kubernetes.io/os: windows}",
    "  nodeSelector: {beta.kubernetes.io/os: windows}",
    "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
    "[{matchExpressions: [{key: kubernetes.io/os, operator: In, values: [windows]}]}]}}}",
])
def test_windows_pods_are_not_asked_linux_only_fields(placement):
    assert rules(lint_text(WINDOWS.format(placement=placement), select=["SEC001", "SEC002"])) == []


@pytest.mark.parametrize("placement", [
    "  nodeSelector: {kubernetes.io/os: linux}",
    "  os: {name: linux}\n  nodeSelector: {kubernetes.io/os: windows}",  # spec.os.name decides
    "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
    "[{matchExpressions: [{key: kubernetes.io/os, operator: In, values: [windows, linux]}]}]}}}",
])
def test_linux_pods_still_are(placement):
    assert [rule for rule, _ in rules(lint_text(WINDOWS.format(placement=placement), select=["SEC001", "SEC002"]))] == [
        "SEC001", "SEC002"]


# ---------------------------------------------------------------------------------------------
# §5 Messages that say what is true

GPU_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: myacr.azurecr.io/train:1.0
        command: ["torchrun", "train.py"]
        resources:
          limits:
            nvidia.com/gpu: 1
{more}"""


def test_res007_a_pod_with_only_gpu_limits_is_besteffort():
    [finding] = lint_text(GPU_JOB.format(more=""), select=["RES007"])
    assert "the pod is BestEffort" in finding.message and "Burstable" not in finding.message


def test_res007_a_cpu_request_makes_it_burstable():
    [finding] = lint_text(GPU_JOB.format(more="          requests:\n            cpu: 2\n"), select=["RES007"])
    assert "the pod is Burstable, not Guaranteed" in finding.message


def test_res007_a_zero_request_does_not_count():
    [finding] = lint_text(GPU_JOB.format(more="          requests:\n            cpu: 0\n"), select=["RES007"])
    assert "the pod is BestEffort" in finding.message


# ---------------------------------------------------------------------------------------------
# §3 NCCL rules only where NCCL is the backend

PYTORCHJOB = """apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: dist
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: pytorch
            image: myacr.azurecr.io/train:1.0
{command}
            env:
            - name: NCCL_DEBUG
              value: INFO
{env}
            resources:
              limits:
                nvidia.com/gpu: 1
"""
NCCL_RULES = ["DST003", "DST004", "DST005", "DST006"]


@pytest.mark.parametrize("command,env", [
    ('            args: ["--backend", "gloo"]', ""),
    ('            args: ["--backend=mpi"]', ""),
    ('            command: ["python", "train.py", "--dist-backend=gloo"]', ""),
    ('            command: ["torchrun", "train.py", "--dist_backend", "gloo"]', ""),
    ("            command: [\"python\", \"-c\", \"import torch.distributed as d; d.init_process_group(backend='gloo')\"]", ""),
    ('            command: ["sh", "-c", "python -c \\"import torch.distributed as d; d.init_process_group(\'gloo\')\\""]', ""),
    ("", "            - name: DIST_BACKEND\n              value: gloo"),
    ("", "            - name: BACKEND\n              value: mpi"),
])
def test_nccl_rules_skip_containers_that_choose_another_backend(command, env):
    assert rules(lint_text(PYTORCHJOB.format(command=command, env=env), select=NCCL_RULES)) == []


@pytest.mark.parametrize("command,env", [
    ("", ""),
    ('            args: ["--backend", "nccl"]', ""),
    ('            args: ["--backend", "cpu:gloo,cuda:nccl"]', ""),
    ("", "            - name: DIST_BACKEND\n              value: $(BACKEND)"),  # unknown: NCCL assumed
])
def test_nccl_rules_still_fire_where_nccl_may_be_the_backend(command, env):
    found = {rule for rule, _ in rules(lint_text(PYTORCHJOB.format(command=command, env=env), select=NCCL_RULES))}
    assert found == {"DST003", "DST004", "DST006"}


# ---------------------------------------------------------------------------------------------
# §3 GPU005 and XPL002 on the same toleration gap: the stronger one alone

GPU_POOL = """az aks nodepool add --resource-group rg --cluster-name aks --name gpunp \\
  --node-vm-size Standard_NC4as_T4_v3 --node-count 1 --labels accelerator=nvidia \\
  --node-taints sku=gpu:NoSchedule
"""
GPU_POD = """apiVersion: v1
kind: Pod
metadata:
  name: gpu
spec:
  nodeSelector: {accelerator: nvidia}
  containers:
  - name: c
    image: myacr.azurecr.io/c:1.0
    resources:
      limits:
        nvidia.com/gpu: 1
"""


def test_a_toleration_gap_on_known_pools_is_xpl002_alone(tmp_path):
    found = lint_files(tmp_path, {"pool.sh": GPU_POOL, "pod.yaml": GPU_POD}, select=["GPU005", "XPL002"])
    assert [f.rule for f in found] == ["XPL002"]


def test_without_pools_gpu005_reports_the_gap(tmp_path):
    found = lint_files(tmp_path, {"pod.yaml": GPU_POD}, select=["GPU005", "XPL002"])
    assert [f.rule for f in found] == ["GPU005"]


# ---------------------------------------------------------------------------------------------
# §2 One object, one count; scripts in any order

CLAIM = """apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: managed-csi
  resources: {requests: {storage: 10Gi}}
"""
MOUNTING_POD = """apiVersion: v1
kind: Pod
metadata:
  name: reader
spec:
  containers:
  - name: c
    image: myacr.azurecr.io/c:1.0
    volumeMounts: [{name: data, mountPath: /data}]
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: data}
"""


def test_sto003_one_pod_in_two_files_is_one_pod(tmp_path):
    files = {"pvc.yaml": CLAIM, "base/pod.yaml": MOUNTING_POD, "overlay/pod.yaml": MOUNTING_POD}
    assert lint_files(tmp_path, files, select=["STO003"]) == []


def test_sto003_two_pods_still_share_the_claim(tmp_path):
    files = {"pvc.yaml": CLAIM, "a.yaml": MOUNTING_POD, "b.yaml": MOUNTING_POD.replace("name: reader", "name: writer")}
    found = lint_files(tmp_path, files, select=["STO003"])
    assert [f.rule for f in found] == ["STO003", "STO003"]
    assert all("mounted by 2 pods" in f.message for f in found)


PLUGIN_DS = """apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: {name}
  namespace: kube-system
spec:
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
      - name: plugin
        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.1
"""


def test_gpu009_one_plugin_in_two_files_counts_once(tmp_path):
    files = {"a/plugin.yaml": PLUGIN_DS.format(name="first"), "b/plugin.yaml": PLUGIN_DS.format(name="first"),
             "c/plugin.yaml": PLUGIN_DS.format(name="second")}
    found = lint_files(tmp_path, files, select=["GPU009"])
    assert [f.path for f in found] == ["c/plugin.yaml"]
    assert "as DaemonSet kube-system/first (a/plugin.yaml:2): two plugins" in found[0].message


def test_a_cluster_queue_in_two_files_lends_its_quota_once():
    from mlops_lint.index import ProjectIndex
    from mlops_lint.model.kueue import quota_tree
    from mlops_lint.sources.files import load_bytes

    queue = ("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n"
             "  cohort: pool\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
             "    - name: gpu\n      resources: [{{name: nvidia.com/gpu, nominalQuota: {quota}}}]\n")
    docs = [load_bytes(queue.format(name="lender", quota=8).encode(), "a.yaml", "k8s"),
            load_bytes(queue.format(name="lender", quota=8).encode(), "b.yaml", "k8s"),
            load_bytes(queue.format(name="borrower", quota=0).encode(), "c.yaml", "k8s")]
    index = ProjectIndex(docs)
    borrower = index.of_kind("ClusterQueue")[2]
    assert quota_tree(index).potential_available(borrower, ("gpu", "nvidia.com/gpu")) == 8


SCRIPT_POOL = ("az aks nodepool add -g rg --cluster-name aks -n gpu --node-vm-size Standard_NC24ads_A100_v4 "
               "--node-count 2 --labels accelerator=nvidia --node-taints sku=gpu:NoSchedule\n")
UNKNOWN_UPDATE = "az aks nodepool update -g rg --cluster-name aks -n \"$POOL\" --labels team=x --node-taints a=b:NoSchedule\n"


def test_an_update_of_an_unknown_pool_changes_nothing_known_in_either_order():
    from mlops_lint.model.cluster import build_cluster
    from mlops_lint.sources.files import load_bytes

    for order in (("1.sh", "2.sh"), ("2.sh", "1.sh")):
        scripts = [load_bytes(SCRIPT_POOL.encode(), order[0], "shell").shell,
                   load_bytes(UNKNOWN_UPDATE.encode(), order[1], "shell").shell]
        cluster = build_cluster(sorted(scripts, key=lambda s: s.path))
        [pool] = [p for p in cluster.pools if p.name == "gpu"]
        assert pool.labels == {"accelerator": "nvidia"} and not pool.labels_open
        assert [str(t.taint) for t in pool.taints] == ["sku=gpu:NoSchedule"] and not pool.taints_open


def test_a_pool_added_by_two_scripts_is_one_pool():
    from mlops_lint.model.cluster import build_cluster
    from mlops_lint.sources.files import load_bytes

    scripts = [load_bytes(SCRIPT_POOL.encode(), name, "shell").shell for name in ("setup.sh", "rerun.sh")]
    assert [p.name for p in build_cluster(scripts).pools] == ["gpu"]


_POOLS = {("aks", "gpu"): "--node-vm-size Standard_NC24ads_A100_v4 --node-count 2 --labels accelerator=nvidia "
                          "--node-taints sku=gpu:NoSchedule",
          ("aks", "cpu"): "--node-vm-size Standard_D8s_v5 --node-count 3 --labels workload=cpu",
          ("$CLUSTER", "gpu"): "--node-vm-size Standard_NC4as_T4_v3 --enable-cluster-autoscaler --min-count 0 "
                               "--max-count 4 --labels accelerator=nvidia"}
_UNKNOWN_COMMANDS = [
    'az aks nodepool update -g rg --cluster-name aks -n "$POOL" --labels team=x\n',
    'az aks nodepool update -g rg --cluster-name "$OTHER" -n gpu --node-taints a=b:NoSchedule\n',
    'az aks nodepool scale -g rg --cluster-name aks -n "$POOL" --node-count 9\n',
    'az aks nodepool update -g rg --cluster-name "$CLUSTER" -n "$POOL" --enable-cluster-autoscaler --max-count 8\n',
]
_KNOWN_UPDATES = {("aks", "gpu"): "--update-cluster-autoscaler --min-count 0 --max-count 6",
                  ("aks", "cpu"): "--labels workload=cpu tier=batch",
                  ("$CLUSTER", "gpu"): "--node-taints sku=gpu:NoSchedule"}


def _add(key):
    cluster, name = key
    return f"az aks nodepool add -g rg --cluster-name {cluster} -n {name} {_POOLS[key]}\n"


def _update(key):
    cluster, name = key
    return f"az aks nodepool update -g rg --cluster-name {cluster} -n {name} {_KNOWN_UPDATES[key]}\n"


def _pool_state(cluster) -> list:
    """Everything the rules read of the pools, without where it was read."""
    def shown(value):
        return repr(value)
    return sorted((shown(p.name), shown(getattr(p, "cluster_key", p.cluster)), shown(p.vm_size), sorted((k, shown(v)) for k, v in p.labels.items()),
                   p.labels_open, sorted(str(t.taint) for t in p.taints), p.taints_open, shown(p.node_count),
                   shown(p.min_count), shown(p.max_count), shown(p.autoscaler), p.created, shown(p.mode))
                  for p in cluster.pools)


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(sorted(_POOLS)), st.integers(0, 3)), min_size=1, max_size=5),
       st.lists(st.tuples(st.sampled_from(_UNKNOWN_COMMANDS), st.integers(0, 3)), max_size=4),
       st.lists(st.tuples(st.sampled_from(sorted(_KNOWN_UPDATES)), st.integers(0, 3)), max_size=3, unique_by=lambda t: t[0]),
       st.permutations(range(4)))
def test_the_cluster_model_does_not_depend_on_file_order(adds, unknowns, updates, permutation):
    from mlops_lint.model.cluster import build_cluster
    from mlops_lint.sources.files import load_bytes

    texts = [""] * 4
    for key, file in adds:
        texts[file] += _add(key)
    for command, file in unknowns:
        texts[file] += command
    for key, file in updates:
        texts[file] += _update(key)

    def build(order):
        scripts = [load_bytes(texts[i].encode(), f"{position}.sh", "shell").shell for position, i in enumerate(order)]
        return _pool_state(build_cluster(scripts))

    assert build(range(4)) == build(permutation)


def test_sto004_prefers_the_projects_storage_class(tmp_path):
    classes = "".join(
        f"---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {{name: {name}}}\nprovisioner: disk.csi.azure.com\n"
        for name in ("azurefile-csi-nfs", "fast"))
    # as close to the built-in `azuresan-csi` (0.828) as to the project's `azurefile-csi-nfs` (0.824)
    claim = CLAIM.replace("managed-csi", "azuresane-csi-nfs")
    [finding] = lint_files(tmp_path, {"classes.yaml": classes, "pvc.yaml": claim}, select=["STO004"])
    assert "did you mean `azurefile-csi-nfs`?" in finding.message


@pytest.mark.parametrize("text,line,what", [
    ("apiVersion: v1\na:\n  b: 1\n \u00a0c: 2\n", 4, "a non-breaking space (U+00A0) at column 2"),
    ("apiVersion: v1\na:\n  - x\n\u00a0 - y\n", 4, "a non-breaking space (U+00A0) at column 1"),
])
def test_sch001_names_the_blank_that_broke_the_indentation(text, line, what):
    [finding] = lint_text(text, select=["SCH001"])
    assert finding.line == line and f"line {line} is indented with {what}" in finding.message


def test_sch001_keeps_its_message_for_plain_spaces():
    [finding] = lint_text("apiVersion: v1\na:\n  b: 1\n  c\n", select=["SCH001"])  # a manifest: SCH001
    assert "indented with" not in finding.message


@pytest.mark.parametrize("size", ["Standard_DC4as_v5", "Standard_EC8as_cc_v5", "Standard_L8s_v3", "Standard_F8s_v2",
                                  "Standard_E16as_v5", "Standard_M32ms"])
def test_aks005_knows_the_families_aks_offers(size):
    script = f"az aks nodepool add -g rg --cluster-name aks -n pool --node-vm-size {size}\n"
    assert lint_text(script, name="pool.sh", select=["AKS005"]) == []


def test_aks005_says_which_families_stay_unknown():
    script = "az aks nodepool add -g rg --cluster-name aks -n hpc --node-vm-size Standard_HB120rs_v3\n"
    [finding] = lint_text(script, name="pool.sh", select=["AKS005"])
    assert "of the HB (HPC, memory bandwidth) family, which AKS offers but" in finding.message
    assert "did you mean" not in finding.message


SECRET_ENV = """apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: c
    image: myacr.azurecr.io/c:1.0
    env:
    - name: API_KEY
      value: "{value}"
"""


@pytest.mark.parametrize("value", ["FILLED BY THE OPERATOR", "SET ME LATER TODO", "[api-key|none]"])
def test_sec006_a_placeholder_is_not_a_credential(value):
    assert lint_text(SECRET_ENV.format(value=value), select=["SEC006"]) == []


def test_sec006_a_dollar_inside_a_password_is_still_a_password():
    assert [f.rule for f in lint_text(SECRET_ENV.format(value="Sup3r$ecretPassw0rd!"), select=["SEC006"])] == ["SEC006"]


POOLS = ("az aks create -g rg -n aks --nodepool-name system\n"
         "az aks nodepool add -g rg --cluster-name aks -n gpu --node-vm-size Standard_NC24ads_A100_v4 "
         "--labels accelerator=nvidia --node-taints sku=gpu:NoSchedule\n")
SELECTING = """apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
{placement}
  tolerations:
  - {{key: sku, operator: Equal, value: gpu, effect: NoSchedule}}
  containers:
  - name: c
    image: myacr.azurecr.io/c:1.0
    resources:
      limits: {{nvidia.com/gpu: 1}}
"""


@pytest.mark.parametrize("placement", [
    '  nodeSelector: {agentpool: "<your-gpu-pool>"}',
    '  nodeSelector: {accelerator: "${ACCEL}"}',
    "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
    "[{matchExpressions: [{key: agentpool, operator: In, values: [REPLACE_ME]}]}]}}}",
])
def test_a_placeholder_selector_selects_unknown_nodes(tmp_path, placement):
    files = {"pools.sh": POOLS, "pod.yaml": SELECTING.format(placement=placement)}
    assert lint_files(tmp_path, files, select=["XPL001", "XPL002", "GPU004", "GPU005"]) == []


def test_a_real_selector_is_still_judged(tmp_path):
    files = {"pools.sh": POOLS, "pod.yaml": SELECTING.format(placement="  nodeSelector: {agentpool: gpu2}")}
    assert [f.rule for f in lint_files(tmp_path, files, select=["XPL001"])] == ["XPL001"]


# ---------------------------------------------------------------------------------------------
# §3 other pairs on the same node for the same reason, settled


@pytest.mark.parametrize("image,expected", [("pytorch/pytorch", ["IMG001"]), ("pytorch/pytorch:latest", ["IMG001"]),
                                            ("pytorch/pytorch:2.4.1", ["IMG002"])])
def test_a_mutable_image_is_img001s_alone(image, expected):
    found = lint_text(POD.format(image=image), select=["IMG001", "IMG002"])
    assert [f.rule for f in found] == expected
    if expected == ["IMG001"]:
        assert "pin a version tag and its digest" in found[0].message


def test_an_unpinned_base_image_is_dkr001s_alone():
    found = lint_text("FROM pytorch/pytorch:latest\nUSER 1000\n", name="Dockerfile", select=["DKR001", "DKR002"])
    assert [f.rule for f in found] == ["DKR001"] and "@sha256:<digest>" in (found[0].fix or "")


MIG_POD = """apiVersion: v1
kind: Pod
metadata:
  name: mig
spec:
  tolerations: [{operator: Exists}]
  containers:
  - name: c
    image: myacr.azurecr.io/c:1.0
    resources:
      limits: {nvidia.com/mig-1g.5gb: 1}
"""


def test_a_mig_pod_without_node_selection_is_gpu007s_alone():
    assert [f.rule for f in lint_text(MIG_POD, select=["GPU006", "GPU007"])] == ["GPU007"]


def test_a_whole_gpu_pod_without_node_selection_is_still_gpu006s():
    found = lint_text(MIG_POD.replace("nvidia.com/mig-1g.5gb", "nvidia.com/gpu"), select=["GPU006", "GPU007"])
    assert [f.rule for f in found] == ["GPU006"]


def _notes(tmp_path, files, cache_dir=None):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / ".mlops-lint.yaml").write_text("{}\n")
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    report = lint(LintRequest(paths=[tmp_path], config=None, registry=REGISTRY, select=["STO003"], cwd=tmp_path,
                              cache_dir=cache_dir))
    return [(n.path, n.message) for n in report.notes]


def test_the_note_on_two_definitions_survives_a_fully_warm_cache(tmp_path):
    # a warm run decodes no file's facts, so the project's cache entry keeps the notes
    other = MOUNTING_POD.replace("myacr.azurecr.io/c:1.0", "myacr.azurecr.io/c:2.0")
    files = {"pvc.yaml": CLAIM, "a/pod.yaml": MOUNTING_POD, "b/pod.yaml": other}
    cold = _notes(tmp_path / "p", files, cache_dir=tmp_path / "cache")
    warm = _notes(tmp_path / "p", files, cache_dir=tmp_path / "cache")
    assert len(cold) == 1 and warm == cold == _notes(tmp_path / "p", files)


def test_two_different_definitions_of_one_object_get_a_note(tmp_path):
    other = MOUNTING_POD.replace("myacr.azurecr.io/c:1.0", "myacr.azurecr.io/c:2.0")
    notes = _notes(tmp_path, {"pvc.yaml": CLAIM, "a/pod.yaml": MOUNTING_POD, "b/pod.yaml": other})
    assert notes == [("a/pod.yaml", "Pod default/reader is defined differently in 2 places (a/pod.yaml:2, b/pod.yaml:2): "
                                    "rules that count objects count it once, from a/pod.yaml:2")]


def test_identical_copies_get_no_note(tmp_path):
    assert _notes(tmp_path, {"pvc.yaml": CLAIM, "a/pod.yaml": MOUNTING_POD, "b/pod.yaml": MOUNTING_POD}) == []


def test_a_nan_and_a_null_are_different_definitions(tmp_path):
    # msgspec writes NaN as null: a body whose text holds null is written by json, NaN apart
    notes = _notes(tmp_path, {"pvc.yaml": CLAIM, "a/pod.yaml": MOUNTING_POD.replace("metadata:", "metadata:\n  annotations: {x: .nan}", 1),
                              "b/pod.yaml": MOUNTING_POD.replace("metadata:", "metadata:\n  annotations: {x: null}", 1)})
    assert [path for path, _ in notes] == ["a/pod.yaml"]


@given(st.dictionaries(st.text(max_size=4), st.one_of(st.none(), st.booleans(), st.integers(), st.floats(),
                                                       st.text(max_size=4), st.lists(st.integers(), max_size=3)),
                       max_size=5),
       st.dictionaries(st.text(max_size=4), st.one_of(st.none(), st.booleans(), st.integers(), st.floats(),
                                                       st.text(max_size=4), st.lists(st.integers(), max_size=3)),
                       max_size=5))
def test_definition_fingerprints_are_equal_exactly_for_equal_bodies(one, two):
    from mlops_lint.model.document import _canonical

    def same(a, b):  # equal as data, NaN equal to itself (json writes both as NaN), never to None
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)

    assert (_canonical(one) == _canonical(two)) == same(one, two)
    assert _canonical(dict(reversed(one.items()))) == _canonical(one)


def test_gpu003_says_what_a_zero_gpu_count_is():
    [finding] = lint_text(GPU_JOB.format(more="").replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 0"), select=["GPU003"])
    assert "which asks for no GPU" in finding.message and "positive whole number" not in finding.message


HOST_PATH = """apiVersion: apps/v1
kind: {kind}
metadata:
  name: agent
spec:
  selector: {{matchLabels: {{app: agent}}}}
  template:
    metadata: {{labels: {{app: agent}}}}
    spec:
      containers:
      - name: agent
        image: myacr.azurecr.io/agent:1.0
      volumes:
      - name: root
        hostPath: {{path: /}}
"""


def test_sec005_advice_fits_node_agents_and_workloads():
    [agent] = lint_text(HOST_PATH.format(kind="DaemonSet"), select=["SEC005"])
    [workload] = lint_text(HOST_PATH.format(kind="Deployment"), select=["SEC005"])
    assert "a node agent should mount only the host paths it works on" in agent.message
    assert "use a PersistentVolumeClaim, an emptyDir or a ConfigMap instead" in workload.message
