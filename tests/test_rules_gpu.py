"""GPU, shared-memory and image semantics beyond the fixtures: the MIG catalogue and its API,
positions inside a ConfigMap's mig-parted config, whether two placements share a node (checked
against the scheduler's own matching), GPU taints, graded RES006 findings, registry matching."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.model import mig
from mlops_lint.model.gpunodes import tolerates_gpu_taint
from mlops_lint.model.nvidia import placements_may_overlap
from mlops_lint.model.selectors import Placement, Requirement, placement_of
from mlops_lint.registry import load_registry
from mlops_lint.rules.img.img003_gpu_image_without_cuda import cpu_only
from mlops_lint.rules.img.img004_image_registry_untrusted import split_entry, trusted

REGISTRY = load_registry()
SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def run(tmp_path: Path, files: dict[str, str], select: str, config: Config | None = None) -> list:
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
    report = lint(LintRequest(paths=[tmp_path / n for n in files], config=config or Config(root=tmp_path),
                              registry=REGISTRY, select=[select], cwd=tmp_path))
    return report.active


# ---------------------------------------------------------------------------------------------
# The MIG catalogue (the API XPL005 uses)


@pytest.mark.parametrize("name, profile", [
    ("nvidia.com/mig-1g.10gb", "1g.10gb"),
    ("mig-3g.40gb", "3g.40gb"),
    ("7g.80gb", "7g.80gb"),
    ("nvidia.com/mig-1g.10gb.me", "1g.10gb+me"),
    ("1g.10gb+me", "1g.10gb+me"),
    ("nvidia.com/mig-1g.24gb.me.all", "1g.24gb+me.all"),
    ("1g.24gb-me", "1g.24gb-me"),
    ("nvidia.com/mig-2g.48gb.gfx", "2g.48gb+gfx"),
    ("nvidia.com/gpu", None),
    ("nvidia.com/mig-1g10gb", None),
    ("nvidia.com/mig-1G.10GB", None),  # resource names are case-sensitive
    ("amd.com/mig-1g.10gb", None),
    ("0g.10gb", None),
])
def test_normalise_profile(name: str, profile: str | None) -> None:
    assert mig.normalise_profile(name) == profile


def test_catalogue_lookups() -> None:
    assert mig.gpu_models_offering("nvidia.com/mig-1g.10gb") == {"A100-40GB", "A100-80GB", "H100-80GB"}
    assert mig.gpu_models_offering("1g.5gb") == {"A100-40GB"}
    assert mig.gpu_models_offering("2g.15gb") == frozenset()
    a30 = mig.profiles_for("A30-24GB")
    assert a30["1g.6gb"].max_instances == 4 and a30["4g.24gb"].compute_slices == 4
    a30.clear()  # a copy: the catalogue itself stays
    assert mig.profiles_for("A30-24GB")
    assert mig.profiles_for("T4") == {} and mig.is_mig_capable("T4") is False and mig.is_mig_capable("X") is None
    assert mig.MIG_GPUS["H200-141GB"]["7g.141gb"].memory_gb == 141
    assert mig.compute_slices("RTXPRO6000-BSE") == 4 and mig.compute_slices("H100-NVL-94GB") == 7
    # unattributed names NVIDIA ships are known, but offered by no modelled GPU
    assert mig.is_known_profile("3g.90gb") and not mig.gpu_models_offering("3g.90gb")


def test_every_model_key_is_a_vm_size_gpu_key_or_documented() -> None:
    from mlops_lint.model.vmsizes import gpu_sizes

    azure = {size.gpu_key for size in gpu_sizes() if size.mig_capable}
    assert azure <= set(mig.MIG_GPUS)
    assert set(mig.MIG_GPUS) - azure == {"A30-24GB", "H100-96GB"}  # no Azure size carries them


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted((m, p) for m in mig.MIG_GPUS for p in mig.MIG_GPUS[m])))
def test_each_profile_round_trips_and_fits_alone(item: tuple[str, str]) -> None:
    model, name = item
    profile = mig.MIG_GPUS[model][name]
    assert mig.normalise_profile(profile.resource) == name
    assert model in mig.gpu_models_offering(name)
    assert mig.layout_problems(model, {name: profile.max_instances}) == []
    assert mig.layout_problems(model, {name: profile.max_instances + 1}) != []


def test_balanced_layouts_fit_and_slices_are_counted() -> None:
    for model in mig.MIG_GPUS:
        assert mig.layout_problems(model, mig.balanced_layout(model)) == [], model
    assert mig.layout_problems("A100-80GB", {"3g.40gb": 2, "1g.10gb": 1}) == []
    assert mig.layout_problems("A100-80GB", {"3g.40gb": 2, "2g.20gb": 1}) == ["has 7 compute slices, the layout uses 8"]
    assert mig.layout_problems("A100-40GB", {"3g.40gb": 1}) == ["offers no 3g.40gb"]


def test_aks_instance_profiles() -> None:
    assert mig.aks_instance_profile("A100-40GB", "MIG1g").name == "1g.5gb"  # documented: 7 per GPU
    assert mig.aks_instance_profile("A100-40GB", "MIG7g").name == "7g.40gb"
    assert mig.aks_instance_profile("A100-80GB", "MIG1g").name == "1g.10gb"
    assert mig.aks_instance_profile("T4", "MIG1g") is None
    assert mig.aks_instance_profile("A100-40GB", "MIG5g") is None


def test_device_ids() -> None:
    assert mig.models_for_device_id("0x20b010de") == {"A100-40GB"}
    assert mig.models_for_device_id("0x290110DE") == frozenset()  # B200: known, not modelled
    assert mig.models_for_device_id("0xDEADBEEF") is None


@pytest.mark.skipif(not (SHARED / "facts").is_dir(), reason="../shared/facts is not present")
def test_nvidia_default_catalogue_is_valid(tmp_path: Path) -> None:
    """Every layout NVIDIA's mig-parted ships passes GPU008 (it is the data the catalogue came from)."""
    text = (SHARED / "facts" / "mig-parted-config-default.yaml").read_text(encoding="utf-8")
    body = textwrap.indent(text, "    ")
    configmap = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: default-mig-parted-config}}\ndata:\n  config.yaml: |\n{body}"
    (tmp_path / "cm.yaml").write_text(configmap, encoding="utf-8")
    report = lint(LintRequest(paths=[tmp_path / "cm.yaml"], config=Config(root=tmp_path), registry=REGISTRY,
                              select=["GPU008"], cwd=tmp_path))
    assert report.active == []


# ---------------------------------------------------------------------------------------------
# GPU008 positions inside a ConfigMap value

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: mig-parted-config, namespace: gpu-operator}
data:
  config.yaml: |-
    version: v1
    mig-configs:
      custom:
      - devices: all
        mig-enabled: true
        mig-devices:
          "1g.5gb": 9
  inline.yaml: "version: v1\\nmig-configs:\\n  bad:\\n  - devices: all\\n    mig-enabled: true\\n    mig-devices: {\\"9g.1gb\\": 1}\\n"
"""


def test_gpu008_points_inside_a_literal_block_and_at_the_key_otherwise(tmp_path: Path) -> None:
    found = sorted(run(tmp_path, {"cm.yaml": CONFIGMAP}, "GPU008"), key=lambda r: r.line)
    assert [(r.line, r.column) for r in found] == [(12, 21), (13, 3)]
    assert "holds at most 7 x 1g.5gb, not 9" in found[0].message
    assert "9g.1gb" in found[1].message


# ---------------------------------------------------------------------------------------------
# Do two placements share a node? Checked against Placement.matches (the scheduler's semantics).

KEYS = ("pool", "gpu")
VALUES = ("a", "b", "1", "5")
requirement = st.builds(
    lambda key, op, values: {"key": key, "operator": op, "values": list(values)} if op in ("In", "NotIn", "Gt", "Lt")
    else {"key": key, "operator": op},
    st.sampled_from(KEYS), st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]),
    st.lists(st.sampled_from(VALUES), min_size=1, max_size=2),
)
spec = st.builds(
    lambda selector, terms: {
        "nodeSelector": selector,
        **({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": t} for t in terms]}}}} if terms else {}),
    },
    st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=2),
    st.lists(st.lists(requirement, min_size=1, max_size=2), max_size=2),
)
ALL_NODES = [
    {k: v for k, v in zip(KEYS, combo) if v is not None}
    for combo in [(p, g) for p in (None, *VALUES, "7") for g in (None, *VALUES, "7")]
]


@settings(max_examples=300, deadline=None)
@given(spec, spec)
def test_overlap_is_exact_on_a_small_label_domain(a: dict, b: dict) -> None:
    pa, pb = placement_of(a), placement_of(b)
    shared = any(pa.matches(node) and pb.matches(node) for node in ALL_NODES)
    verdict = placements_may_overlap(pa, pb)
    assert verdict == placements_may_overlap(pb, pa)
    if shared:
        assert verdict, (a, b)
    # the domain holds every value the specs name plus one more ("7"), which is enough for In,
    # NotIn, Exists and DoesNotExist; Gt/Lt over unnamed integers may need values outside it
    if verdict and not any(r.operator in ("Gt", "Lt") for t in (*pa.terms, *pb.terms) for r in t):
        assert shared, (a, b)


def test_overlap_examples() -> None:
    gpu = Placement({"accelerator": "nvidia"})
    assert placements_may_overlap(gpu, Placement())
    assert not placements_may_overlap(gpu, Placement({"accelerator": "amd"}))
    exists = Placement(terms=((Requirement("mig", "Exists", ()),),))
    absent = Placement(terms=((Requirement("mig", "DoesNotExist", ()),),))
    assert not placements_may_overlap(exists, absent)
    assert placements_may_overlap(exists, Placement(terms=((Requirement("mig", "DoesNotExist", ()),),
                                                           (Requirement("mig", "In", ("x",)),))))
    assert not placements_may_overlap(Placement(terms=((Requirement("n", "Gt", ("4",)),),)),
                                      Placement(terms=((Requirement("n", "Lt", ("5",)),),)))


# ---------------------------------------------------------------------------------------------
# GPU taints


@pytest.mark.parametrize("toleration, tolerated", [
    ({"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}, "sku=gpu:NoSchedule"),
    ({"key": "sku", "operator": "Exists"}, "sku=gpu:NoSchedule"),
    ({"key": "sku", "value": "gpu"}, "sku=gpu:NoSchedule"),  # Equal is the default operator
    ({"key": "sku", "operator": "Equal", "value": "cpu"}, None),
    ({"operator": "Exists"}, "sku=gpu:NoSchedule"),
    ({"operator": "Exists", "effect": "NoExecute"}, None),  # the configured taint is NoSchedule
    ({"key": "nvidia.com/gpu", "operator": "Equal", "value": "present"}, "nvidia.com/gpu=present:NoSchedule"),
    ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "PreferNoSchedule"}, None),
    ({"key": "CriticalAddonsOnly", "operator": "Exists"}, None),
])
def test_gpu_tolerations(toleration: dict, tolerated: str | None) -> None:
    found = tolerates_gpu_taint(toleration, Config())
    assert (str(found) if found else None) == tolerated


def test_gpu005_follows_the_configured_taints(tmp_path: Path) -> None:
    job = """\
    apiVersion: batch/v1
    kind: Job
    metadata: {name: t, namespace: ml}
    spec:
      template:
        spec:
          restartPolicy: Never
          nodeSelector: {accelerator: nvidia}
          tolerations: [{key: dedicated, operator: Equal, value: a100, effect: NoSchedule}]
          containers:
          - name: trainer
            image: nvcr.io/nvidia/pytorch:24.05-py3
            resources: {limits: {nvidia.com/gpu: 1}}
    """
    assert [r.line for r in run(tmp_path, {"job.yaml": job}, "GPU005")] == [9]
    custom = Config(root=tmp_path, gpu_taints=({"key": "dedicated", "value": "a100", "effect": "NoSchedule"},))
    assert run(tmp_path, {"job.yaml": job}, "GPU005", custom) == []
    assert run(tmp_path, {"job.yaml": job}, "GPU005", Config(root=tmp_path, gpu_taints=())) == []


QUEUED_GPU_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: t, namespace: default, labels: {kueue.x-k8s.io/queue-name: tas-user-queue}}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources: {limits: {cpu: 1, nvidia.com/gpu: 1}}
"""


def _queues(gpu: bool) -> str:
    """Kueue's TAS sample queues: the CPU variant, or the GPU one whose flavor tolerates the GPU taint."""
    covered = '["cpu", "nvidia.com/gpu"]' if gpu else '["cpu"]'
    quota = '{name: "nvidia.com/gpu", nominalQuota: 8}' if gpu else ""
    tolerations = "tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]" if gpu else ""
    return f"""\
kind: ResourceFlavor
apiVersion: kueue.x-k8s.io/v1beta1
metadata: {{name: tas-flavor}}
spec:
  nodeLabels: {{cloud.provider.com/node-group: tas-group}}
  {tolerations}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {{name: tas-cluster-queue}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: {covered}
    flavors:
    - name: tas-flavor
      resources: [{{name: cpu, nominalQuota: 100}}, {quota}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {{namespace: default, name: tas-user-queue}}
spec: {{clusterQueue: tas-cluster-queue}}
"""


def test_gpu005_queue_variants_that_cannot_admit_the_gpus_do_not_place_the_pod(tmp_path: Path) -> None:
    """Kueue's samples define the TAS queues twice (a CPU and a GPU variant file, one applied): a GPU
    pod can be admitted only by the variant whose ClusterQueue covers `nvidia.com/gpu` (Kueue refuses
    a resource no resource group covers), and that flavor injects the GPU toleration. Before, the
    CPU variant counted as a way to place it and GPU005 said it tolerates no GPU taint."""
    files = {"job.yaml": QUEUED_GPU_JOB, "gpu-queues.yaml": _queues(True), "queues.yaml": _queues(False)}
    assert run(tmp_path, files, "GPU005") == []
    # the CPU variant alone cannot admit it either: the pod is judged as before (what its flavor injects)
    alone = tmp_path / "cpu"
    alone.mkdir()
    found = run(alone, {"job.yaml": QUEUED_GPU_JOB, "queues.yaml": _queues(False)}, "GPU005")
    assert [(r.rule, Path(r.path).name, r.line, r.column) for r in found] == [("GPU005", "job.yaml", 12, 38)]  # at the GPU request


def _hami(gpu_flavor_labels: str, cpu_group: bool = False) -> str:
    """Kueue's HAMi sample: one ClusterQueue whose GPU resource group has flavor `hami-flavor`
    (with ``gpu_flavor_labels``); with ``cpu_group``, a second group gives cpu to `cpu-flavor`
    (nodeLabels `pool: cpu`)."""
    cpu = """
  - coveredResources: [cpu]
    flavors: [{name: cpu-flavor, resources: [{name: cpu, nominalQuota: 100}]}]""" if cpu_group else ""
    return f"""\
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {{name: hami-flavor}}
spec: {{nodeLabels: {gpu_flavor_labels}}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {{name: cpu-flavor}}
spec: {{nodeLabels: {{pool: cpu}}}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {{name: hami-queue}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{{name: hami-flavor, resources: [{{name: nvidia.com/gpu, nominalQuota: 20}}]}}]{cpu}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {{name: user-queue, namespace: kueue-test}}
spec: {{clusterQueue: hami-queue}}
---
apiVersion: batch/v1
kind: Job
metadata: {{name: gpu-burn, namespace: kueue-test, labels: {{kueue.x-k8s.io/queue-name: user-queue}}}}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      tolerations: [{{key: sku, operator: Equal, value: gpu, effect: NoSchedule}}]
      containers:
      - name: main
        image: oguzpastirmaci/gpu-burn:latest
        resources: {{limits: {{nvidia.com/gpu: "2", cpu: "1"}}}}
"""


def test_gpu006_the_labels_of_a_gpu_only_flavor_keep_the_pod_to_gpu_nodes(tmp_path: Path) -> None:
    """Kueue gives the pod's GPUs quota of the flavor its ClusterQueue lists for `nvidia.com/gpu`
    in a resource group of their own, and injects that flavor's nodeLabels (`gpu: "on"`): the pod is kept to the nodes whose GPUs the
    quota counts, and the autoscaler sees which ones, whether or not the label is a known GPU one.
    Before, GPU006 said nothing keeps it to GPU nodes. A flavor without labels, labels that only
    a CPU resource group's flavor injects, or a flavor for cpu and GPUs alike keep it nowhere in
    particular."""
    assert run(tmp_path, {"hami.yaml": _hami('{gpu: "on"}')}, "GPU006") == []
    assert run(tmp_path, {"hami.yaml": _hami('{gpu: "on"}', cpu_group=True)}, "GPU006") == []
    for labels, cpu_group in (("{}", False), ("{}", True)):
        found = run(tmp_path, {"hami.yaml": _hami(labels, cpu_group)}, "GPU006")
        assert [(r.rule, r.line, r.column) for r in found] == [("GPU006", 33 if cpu_group else 31, 5)]  # the pod spec
    # a flavor for cpu and GPUs alike may stand for a zone or a capacity type: its labels pin no GPU nodes
    mixed = _hami('{gpu: "on"}').replace("coveredResources: [nvidia.com/gpu]", "coveredResources: [cpu, nvidia.com/gpu]")
    mixed = mixed.replace("resources: [{name: nvidia.com/gpu, nominalQuota: 20}]",
                          "resources: [{name: cpu, nominalQuota: 100}, {name: nvidia.com/gpu, nominalQuota: 20}]")
    assert [r.rule for r in run(tmp_path, {"hami.yaml": mixed}, "GPU006")] == ["GPU006"]


def test_gpu006_names_the_node_labels_a_kueue_flavor_injects(tmp_path: Path) -> None:
    """A pod without a node selection of its own whose Kueue flavors inject nodeLabels that keep it
    to no GPU nodes in particular: the verdict stands, and the message names the injected labels
    and their flavor instead of saying that nothing selects its nodes."""
    [found] = run(tmp_path, {"hami.yaml": _hami("{}", cpu_group=True)}, "GPU006")
    assert "the nodeLabels Kueue injects at admission (`{pool: cpu}` from ResourceFlavors `hami-flavor`, " \
           "`cpu-flavor`) are not known to either" in found.message
    assert "add that label to `gpu-node-labels`" in found.message
    # its own nodeSelector and the injected labels are named together
    own = _hami("{}", cpu_group=True).replace("      restartPolicy: Never", "      restartPolicy: Never\n"
                                               "      nodeSelector: {team: a}")
    [found] = run(tmp_path, {"hami.yaml": own}, "GPU006")
    assert "its nodeSelector `{team: a}` (with the nodeLabels Kueue injects at admission: `{pool: cpu}` from " \
           "ResourceFlavors `hami-flavor`, `cpu-flavor`) is not known to keep it to GPU nodes" in found.message
    # nothing injected: the message is unchanged
    [found] = run(tmp_path, {"hami.yaml": _hami("{}")}, "GPU006")
    assert "but neither its nodeSelector nor a required node affinity keeps it to GPU nodes: it may" in found.message


# ---------------------------------------------------------------------------------------------
# RES006 grades its findings; RES007 follows pod-level resources


def shm_job(size: str, limit: str) -> str:
    return f"""\
    apiVersion: batch/v1
    kind: Job
    metadata: {{name: t, namespace: ml}}
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: trainer
            image: nvcr.io/nvidia/pytorch:24.05-py3
            volumeMounts: [{{name: dshm, mountPath: /dev/shm}}]
            resources: {{limits: {{memory: {limit}, nvidia.com/gpu: 1}}}}
          volumes:
          - {{name: dshm, emptyDir: {{medium: Memory, sizeLimit: {size}}}}}
    """


@pytest.mark.parametrize("size, limit, severity", [
    ("8Gi", "16Gi", None),
    ("12Gi", "16Gi", None),  # exactly 25 % left
    ("12289Mi", "16Gi", "warning"),
    ("16Gi", "16Gi", "error"),
    ("17179869184", "16Gi", "error"),  # plain bytes, exactly 16Gi
    ("18G", "16Gi", "error"),  # 18e9 bytes > 16 x 2^30
    ("16G", "16Gi", "warning"),
    ("0.5Gi", "512Mi", "error"),
])
def test_res006_severity(tmp_path: Path, size: str, limit: str, severity: str | None) -> None:
    found = run(tmp_path, {"job.yaml": shm_job(size, limit)}, "RES006")
    assert [r.severity for r in found] == ([severity] if severity else [])


def test_res006_config_severity_override_wins(tmp_path: Path) -> None:
    config = Config(root=tmp_path, severity={"RES006": "info"})
    found = run(tmp_path, {"job.yaml": shm_job("16G", "16Gi")}, "RES006", config)
    assert [r.severity for r in found] == ["info"]


def test_res007_pod_level_resources(tmp_path: Path) -> None:
    pod = """\
    apiVersion: v1
    kind: Pod
    metadata: {name: t, namespace: ml}
    spec:
      restartPolicy: Never
      resources:
        requests: {cpu: "4", memory: 16Gi}
        limits: {cpu: "4", memory: %s}
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources: {limits: {nvidia.com/gpu: 1}}
    """
    assert run(tmp_path, {"pod.yaml": pod % "16Gi"}, "RES007") == []
    found = run(tmp_path, {"pod.yaml": pod % "32Gi"}, "RES007")
    assert [(r.line, "memory request 16Gi but limit 32Gi" in r.message) for r in found] == [(7, True)]


# ---------------------------------------------------------------------------------------------
# Images


@pytest.mark.parametrize("image, cpu", [
    ("tensorflow/tensorflow:2.16.1", True),
    ("tensorflow/tensorflow:2.16.1-gpu-jupyter", False),
    ("tensorflow/serving:2.16.1", True),
    ("tensorflow/serving:2.16.1-gpu", False),
    ("rayproject/ray:2.41.0", True),
    ("rayproject/ray:2.41.0-gpu", False),
    ("rayproject/ray:2.41.0-py311-cu124", False),
    ("rayproject/ray-ml:2.9.0", False),  # ray-ml's unsuffixed tags are its GPU images
    ("library/python:3.12", True),
    ("ubuntu", True),
    ("myacr.azurecr.io/ubuntu:22.04", False),  # a private image of that name
    ("intel/intel-extension-for-pytorch:2.3.0-cpu", True),
    ("huggingface/transformers-pytorch-cpu:4.44.0", True),
    ("nvcr.io/nvidia/tritonserver:24.05-py3", False),
    ("mcr.microsoft.com/azureml/openmpi4.1.0-cuda11.8-cudnn8-ubuntu22.04", False),
    ("$(IMAGE)", False),
])
def test_cpu_only_images(image: str, cpu: bool) -> None:
    assert (cpu_only(image) is not None) == cpu


@pytest.mark.parametrize("name, entries, ok", [
    ("python", ["docker.io"], True),
    ("python", ["docker.io/library"], True),
    ("docker.io/library/python", ["index.docker.io"], True),
    ("nvidia/cuda", ["docker.io/library"], False),
    ("myacr.azurecr.io/team-a/trainer", ["myacr.azurecr.io/team-a"], True),
    ("myacr.azurecr.io/team-a", ["myacr.azurecr.io/team-a"], True),
    ("myacr.azurecr.io/team-ab/trainer", ["myacr.azurecr.io/team-a"], False),
    ("MYACR.azurecr.io/x", ["myacr.azurecr.io"], True),
    ("a.b.azurecr.io/x", ["*.azurecr.io"], True),
    ("azurecr.io/x", ["*.azurecr.io"], False),
    ("registry.example.com:5000/x", ["registry.example.com"], False),
    ("registry.example.com:5000/x", ["https://registry.example.com:5000/"], True),
])
def test_registry_matching(name: str, entries: list[str], ok: bool) -> None:
    """Image names (the part before tag and digest) against trusted-registries entries."""
    assert trusted(name, tuple(split_entry(e) for e in entries)) == ok


def test_img004_is_silent_without_or_with_an_empty_list(tmp_path: Path) -> None:
    pod = """\
    apiVersion: v1
    kind: Pod
    metadata: {name: t}
    spec:
      containers:
      - {name: c, image: "ghcr.io/acme/tool:1.0"}
    """
    assert run(tmp_path, {"pod.yaml": pod}, "IMG004") == []
    assert run(tmp_path, {"pod.yaml": pod}, "IMG004", Config(root=tmp_path, trusted_registries=())) == []
    found = run(tmp_path, {"pod.yaml": pod}, "IMG004", Config(root=tmp_path, trusted_registries=("myacr.azurecr.io",)))
    assert [(r.line, r.column) for r in found] == [(6, 22)]  # the quoted value


# ---------------------------------------------------------------------------------------------
# GPU009 across files


def test_gpu009_sees_plugins_in_other_files_and_reports_only_targets(tmp_path: Path) -> None:
    plugin = """\
    apiVersion: apps/v1
    kind: DaemonSet
    metadata: {name: %s, namespace: kube-system}
    spec:
      selector: {matchLabels: {app: p}}
      template:
        metadata: {labels: {app: p}}
        spec:
          containers:
          - {name: plugin, image: "nvcr.io/nvidia/k8s-device-plugin:v0.17.1"}
    """
    (tmp_path / "a.yaml").write_text(textwrap.dedent(plugin % "plugin-a"), encoding="utf-8")
    (tmp_path / "b.yaml").write_text(textwrap.dedent(plugin % "plugin-b"), encoding="utf-8")
    report = lint(LintRequest(paths=[tmp_path / "b.yaml"], config=Config(root=tmp_path), registry=REGISTRY,
                              select=["GPU009"], cwd=tmp_path))
    assert [(r.path, r.line, "plugin-a" in r.message) for r in report.active] == [("b.yaml", 3, True)]
    only_a = lint(LintRequest(paths=[tmp_path / "a.yaml"], config=Config(root=tmp_path), registry=REGISTRY,
                              select=["GPU009"], cwd=tmp_path))
    assert only_a.active == []  # the first of the two is not the duplicate


def test_gpu009_collects_plugins_from_workers_and_the_cache(tmp_path: Path) -> None:
    """DaemonSets are not in the index: each file's plugins are facts, collected by whichever
    process lints the file, and kept in the cache; every way gives the same findings."""
    from mlops_lint.cachedata import decode, dumps, encode, loads
    from mlops_lint.rules.gpu.gpu009_duplicate_device_plugin import Plugin

    plugin = textwrap.dedent("""\
    apiVersion: apps/v1
    kind: DaemonSet
    metadata: {name: plugin-%d, namespace: kube-system}
    spec:
      selector: {matchLabels: {app: p}}
      template:
        metadata: {labels: {app: p}}
        spec:
          nodeSelector: {pool: gpu}
          containers:
          - {name: plugin, image: "nvcr.io/nvidia/k8s-device-plugin:v0.17.1"}
    """)
    for number in range(60):  # enough files for --jobs 2 to fork
        (tmp_path / f"p{number:02}.yaml").write_text(plugin % number, encoding="utf-8")
    runs = {}
    for jobs, cache in ((1, None), (2, None), (2, tmp_path / ".cache"), (1, tmp_path / ".cache")):
        report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=REGISTRY, select=["GPU009"], jobs=jobs,
                                  cwd=tmp_path, cache_dir=cache))
        runs[(jobs, cache)] = [(r.path, r.line, r.column, r.message) for r in report.active]
    first = runs[(1, None)]
    assert all(found == first for found in runs.values())
    assert [(path, line, column) for path, line, column, _ in first] == [(f"p{n:02}.yaml", 3, 18) for n in range(1, 60)]
    assert "plugin-0 (p00.yaml:2)" in first[0][3] and "56 more" in first[-1][3]
    [fact] = run_facts(tmp_path / "p00.yaml")
    assert isinstance(fact, Plugin) and fact.name_span.line == 3
    assert decode(loads(dumps(encode(fact)))) == fact  # what the result cache keeps of it


def run_facts(path: Path):
    from mlops_lint.index import REFERENCE_KINDS, ProjectIndex
    from mlops_lint.rule import RuleContext
    from mlops_lint.sources.yaml_k8s import load
    from mlops_lint.rules.gpu.gpu009_duplicate_device_plugin import device_plugins

    document = load(path.read_bytes(), path.name)
    context = RuleContext({}, ProjectIndex([document], only_kinds=REFERENCE_KINDS), Config())
    return [fact for obj in document.objects for fact in device_plugins(obj, context)]


# ---------------------------------------------------------------------------------------------
# GPU004: a Spark pod template gets its GPU request from Spark


SPARK_TEMPLATE = """\
apiVersion: v1
kind: Pod
metadata: {name: executor}
spec:
  containers:
  - name: spark-kubernetes-executor
  tolerations:
  - {key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule}
"""


@pytest.mark.parametrize("container, fires", [
    ("  - name: spark-kubernetes-executor\n", False),  # Spark's container name: Spark adds the GPU request
    ("  - name: spark-kubernetes-driver\n    image: apache/spark:3.5.3\n", False),
    ("  - name: executor\n", False),  # no image: a stub another program completes, not a pod
    ("  - name: executor\n    image: apache/spark:3.5.3\n", True),  # a pod as written: judged
])
def test_gpu004_leaves_spark_pod_templates_to_spark(tmp_path: Path, container: str, fires: bool) -> None:
    text = SPARK_TEMPLATE.replace("  - name: spark-kubernetes-executor\n", container)
    toleration = text.splitlines().index("  - {key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule}")
    found = run(tmp_path, {"executor.yaml": text}, "GPU004")
    assert [(r.rule, r.line) for r in found] == ([("GPU004", toleration + 1)] if fires else [])


TRUST_REPROS = SHARED / "repros" / "trust"


@pytest.mark.skipif(not TRUST_REPROS.is_dir(), reason="../shared/repros/trust is not present")
@pytest.mark.parametrize("folder, rules", [
    ("gpu004-spark-pod-template", ["GPU004"]),  # Spark adds the GPU request
    ("sch002-shell-placeholders", ["SCH002"]),  # placeholders are unknown values, not errors
])
def test_trust_repros_give_no_finding(folder: str, rules: list[str]) -> None:
    root = TRUST_REPROS / folder
    report = lint(LintRequest(paths=[root], config=Config(root=root), registry=REGISTRY, select=rules, cwd=root))
    assert report.active == [] and set(report.file_status.values()) == {"linted"}


# ---------------------------------------------------------------------------------------------
# GPU009: components a script installs (helm, kubectl apply of NVIDIA's manifest; issue 36 item 5)

OPERATOR_SCRIPT = "helm install {release} {alias}/gpu-operator -n gpu-operator --create-namespace{extra}\n"
PLUGIN_DS = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: nvidia-device-plugin, namespace: kube-system}
spec:
  selector: {matchLabels: {app: p}}
  template:
    metadata: {labels: {app: p}}
    spec:
      containers:
      - {name: plugin, image: "nvcr.io/nvidia/k8s-device-plugin:v0.17.1"}
"""


@pytest.mark.parametrize("script, found", [
    # the GPU Operator and the device plugin chart in one script: the plugin's chart word
    ("helm upgrade --install gpu-op nvidia/gpu-operator --namespace gpu-operator\n"
     "helm install nvdp nvdp/nvidia-device-plugin -n nvdp --version 0.17.0\n", [(2, 19)]),
    ("helm install --generate-name oci://nvcr.io/nvidia/gpu-operator --wait\n"
     "sudo kubectl apply -f https://raw.githubusercontent.com/NVIDIA/k8s-device-plugin/v0.17.0/"
     "deployments/static/nvidia-device-plugin.yml\n", [(2, 23)]),
    # the operator's own plugin turned off; a plain upgrade installs nothing; a local file is linted as a file
    ("helm install op nvidia/gpu-operator --set driver.enabled=false,devicePlugin.enabled=false\n"
     "helm install nvdp nvdp/nvidia-device-plugin\n", []),
    ("helm install op nvidia/gpu-operator\nhelm upgrade nvdp nvdp/nvidia-device-plugin\n"
     "kubectl apply -f nvidia-device-plugin.yml\n", []),
    # a values file may turn the operator's plugin off: unknown, not reported; a later --set decides
    ("helm install op nvidia/gpu-operator -f values.yaml\nhelm install nvdp nvdp/nvidia-device-plugin\n", []),
    ("helm install op nvidia/gpu-operator -f values.yaml --set devicePlugin.enabled=true\n"
     "helm install nvdp nvdp/nvidia-device-plugin\n", [(2, 19)]),
    ("helm install op nvidia/gpu-operator $EXTRA\nhelm install nvdp nvdp/nvidia-device-plugin\n", []),
    # one release installed twice (an idempotent re-run) is one plugin; two releases are two
    ("helm upgrade -i nvdp nvdp/nvidia-device-plugin\nhelm upgrade -i nvdp nvdp/nvidia-device-plugin\n", []),
    ("helm upgrade -i a nvdp/nvidia-device-plugin\nhelm upgrade -i b nvdp/nvidia-device-plugin\n", [(2, 19)]),
    # the chart word of unknown value is not an install
    ("helm install op $CHART\nhelm install nvdp nvdp/nvidia-device-plugin\n", []),
    # an option of unknown value is an option (its name is known): the chart is still found, and a
    # version the script does not set turns nothing off; NVIDIA's URL with an unset version is that manifest
    ("helm install op nvidia/gpu-operator --version=$OP_VERSION\n"
     "helm install --version=$V nvdp nvdp/nvidia-device-plugin\n", [(2, 32)]),
    ("helm install op nvidia/gpu-operator --set=$VALUES\nhelm install nvdp nvdp/nvidia-device-plugin\n", []),
    ("helm install op nvidia/gpu-operator\nkubectl apply -f "
     "https://raw.githubusercontent.com/NVIDIA/k8s-device-plugin/${VERSION}/deployments/static/nvidia-device-plugin.yml\n",
     [(2, 18)]),
])
def test_gpu009_components_installed_by_a_script(tmp_path: Path, script: str, found: list) -> None:
    results = run(tmp_path, {"install.sh": "#!/bin/sh\n" + script}, "GPU009")
    assert [(r.path, r.line - 1, r.column) for r in results] == [("install.sh", line, col) for line, col in found]
    for r in results:
        assert "this script installs NVIDIA's device plugin" in r.message and "two plugins" in r.message


def test_gpu009_script_operator_counts_against_a_plugin_manifest(tmp_path: Path) -> None:
    """A DaemonSet of the project beside a GPU Operator a script installs is reported at the
    DaemonSet, naming the script's line; with the operator's plugin off it is not."""
    script = "#!/bin/bash\nhelm repo add nvidia https://helm.ngc.nvidia.com/nvidia\n" + OPERATOR_SCRIPT
    files = {"plugin.yaml": PLUGIN_DS, "install.sh": script.format(release="gpu-operator", alias="nvidia", extra="")}
    [finding] = run(tmp_path, files, "GPU009")
    assert (finding.path, finding.line, finding.column) == ("plugin.yaml", 3, 18)
    assert "the device plugin of the GPU Operator installed by Helm chart `nvidia/gpu-operator`, " \
           "release `gpu-operator` (install.sh:3)" in finding.message
    files["install.sh"] = script.format(release="gpu-operator", alias="nvidia",
                                        extra=" --set-string devicePlugin.enabled=false")
    assert run(tmp_path, files, "GPU009") == []


def test_gpu009_script_installs_with_workers(tmp_path: Path) -> None:
    """The scripts are in the index every worker has: --jobs 1 and 2 agree."""
    for number in range(40):
        (tmp_path / f"p{number:02}.yaml").write_text(PLUGIN_DS.replace("nvidia-device-plugin,", f"plugin-{number},"),
                                                     encoding="utf-8")
    (tmp_path / "zz.sh").write_text("helm install nvdp nvdp/nvidia-device-plugin\n", encoding="utf-8")
    runs = [[(r.path, r.line, r.column, r.message) for r in
             lint(LintRequest(paths=[tmp_path], config=Config(), registry=REGISTRY, select=["GPU009"], jobs=jobs,
                              cwd=tmp_path)).active] for jobs in (1, 2)]
    assert runs[0] == runs[1]
    assert runs[0][-1][:3] == ("zz.sh", 1, 19) and "40 more" not in runs[0][-1][3]


def test_script_installs_reads_helm_and_kubectl() -> None:
    from mlops_lint.model.installs import DCGM_EXPORTER, DEVICE_PLUGIN, GPU_OPERATOR, script_installs
    from mlops_lint.model.unknown import UNKNOWN
    from mlops_lint.sources.shell import load_text

    text = ("helm --kube-context prod upgrade --install op ./charts/gpu-operator-v25.3.0.tgz -n gpu "
            "--set dcgmExporter.enabled=false\n"
            "helm install exp gpu-helm-charts/dcgm-exporter\n"
            "helm install op2 gpu-operator --repo https://helm.ngc.nvidia.com/nvidia --set devicePlugin.enabled=$X\n"
            "kubectl create --filename=https://raw.githubusercontent.com/NVIDIA/dcgm-exporter/main/dcgm-exporter.yaml\n"
            "helm template x nvidia/gpu-operator\nhelm install y bitnami/nginx\n")
    installs = script_installs(load_text(text, "s.sh").shell, "s.sh")
    assert [(i.component, i.release, i.namespace, i.span.line) for i in installs] == [
        (GPU_OPERATOR, "op", "gpu", 1), (DCGM_EXPORTER, "exp", "default", 2), (GPU_OPERATOR, "op2", "default", 3),
        (DCGM_EXPORTER, "", "default", 4)]
    assert installs[0].deploys("devicePlugin") is True and installs[0].deploys("dcgmExporter") is False
    # the --set word's value is unknown as a whole (it may set any key)
    assert installs[2].deploys("devicePlugin") is UNKNOWN and installs[2].deploys("dcgmExporter") is UNKNOWN
    assert installs[1].deploys("dcgmExporter") is True and installs[1].deploys("devicePlugin") is False
    assert DEVICE_PLUGIN not in {i.component for i in installs}


# ---------------------------------------------------------------------------------------------
# GPU011: named MIG profiles need the mixed strategy

MIG_JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: trial, namespace: ml}
spec:
  template:
    spec:
      containers:
      - name: trial
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          limits:
            RESOURCE: 1
"""

POLICY = """
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  mig:
    strategy: STRATEGY
"""

PLUGIN = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: nvidia-device-plugin, namespace: kube-system}
spec:
  template:
    spec:
      containers:
      - name: nvidia-device-plugin-ctr
        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.1
        STATED
"""


@pytest.mark.parametrize("strategy, fires", [("single", True), ("none", True), ("mixed", False), ("Single", True),
                                             ("'${MIG_STRATEGY}'", False), ("[single]", False)])
def test_gpu011_cluster_policy_strategy(tmp_path: Path, strategy: str, fires: bool) -> None:
    files = {"policy.yaml": POLICY.replace("STRATEGY", strategy),
             "job.yaml": MIG_JOB.replace("RESOURCE", "nvidia.com/mig-1g.10gb")}
    results = run(tmp_path, files, "GPU011")
    if not fires:
        assert results == []
        return
    (result,) = results
    assert str(result.path).endswith("job.yaml")
    assert (result.line, result.column) == (13, 13)
    assert f"`{strategy.lower()}`" in result.message and "policy.yaml:7" in result.message


@pytest.mark.parametrize("stated, fires", [
    ('args: ["--mig-strategy=single", "--fail-on-init-error=false"]', True),
    ('args: ["--mig-strategy", "none"]', True),
    ('args: ["--mig-strategy=mixed"]', False),
    ("env: [{name: MIG_STRATEGY, value: single}]", True),
    ("env: [{name: MIG_STRATEGY, valueFrom: {configMapKeyRef: {name: c, key: k}}}]", False),  # not literal
    ('args: ["--mig-strategy=mixed"]\n        env: [{name: MIG_STRATEGY, value: single}]', False),  # the flag wins
    ("env: [{name: OTHER, value: single}]", False),  # no strategy stated: not judged
])
def test_gpu011_device_plugin_strategy(tmp_path: Path, stated: str, fires: bool) -> None:
    files = {"plugin.yaml": PLUGIN.replace("STATED", stated),
             "job.yaml": MIG_JOB.replace("RESOURCE", "nvidia.com/mig-1g.10gb")}
    results = run(tmp_path, files, "GPU011")
    assert [r.rule for r in results] == (["GPU011"] if fires else [])
    if fires:
        assert "DaemonSet `nvidia-device-plugin`" in results[0].message


def test_gpu011_leaves_full_gpus_and_mixed_projects_alone(tmp_path: Path) -> None:
    single, mig_job = POLICY.replace("STRATEGY", "single"), MIG_JOB.replace("RESOURCE", "nvidia.com/mig-1g.10gb")
    projects = [tmp_path / name for name in ("full", "both", "unstated")]
    for project in projects:
        project.mkdir()
    full = {"policy.yaml": single, "job.yaml": MIG_JOB.replace("RESOURCE", "nvidia.com/gpu")}
    assert run(projects[0], full, "GPU011") == []
    both = {"policy.yaml": single, "plugin.yaml": PLUGIN.replace("STATED", 'args: ["--mig-strategy=mixed"]'),
            "job.yaml": mig_job}
    assert run(projects[1], both, "GPU011") == []  # the project states both: alternatives, not judged
    assert run(projects[2], {"job.yaml": mig_job}, "GPU011") == []  # nothing stated
    both["plugin.yaml"] = PLUGIN.replace("STATED", "")  # a plugin that states nothing leaves the policy's word
    assert [r.rule for r in run(projects[1], both, "GPU011")] == ["GPU011"]


# ---------------------------------------------------------------------------------------------
# GPU012: the layout a pod selects, against the project's mig-parted config

MIG_CONFIG = """
apiVersion: v1
kind: ConfigMap
metadata: {name: mig-parted-config, namespace: gpu-operator}
data:
  config.yaml: |
    version: v1
    mig-configs:
      all-disabled:
      - devices: all
        mig-enabled: false
      hptuning-1g10gb:
      - devices: all
        mig-enabled: true
        mig-devices: {"1g.10gb": 7, "2g.20gb": 0}
      templated:
      - devices: all
        mig-enabled: true
        mig-devices: {"1g.10gb": "{{ .Values.count }}"}
"""

SELECTING_JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: trial, namespace: ml}
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/mig.config: LAYOUT
      containers:
      - name: trial
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          limits: {RESOURCE: 1}
"""


@pytest.mark.parametrize("layout, resource, problem", [
    ("hptuning-1g10gb", "nvidia.com/mig-1g.10gb", None),
    ("hptuning-1g10gb", "nvidia.com/gpu", None),
    ("hptuning-1g10gb", "nvidia.com/mig-2g.20gb", "creates only `1g.10gb` instances"),  # a count of 0 creates none
    ("all-disabled", "nvidia.com/mig-1g.10gb", "creates no MIG instance"),
    ("hptuning-1g10g", "nvidia.com/mig-1g.10gb", "no mig-parted config of the project defines"),
    ("hptuning-2g20gb", "nvidia.com/gpu", "no mig-parted config of the project defines"),
    ("templated", "nvidia.com/mig-3g.40gb", None),  # a layout not readable: not judged
    ("all-balanced", "nvidia.com/mig-1g.10gb", None),  # NVIDIA's default catalogue
    ("'{{ .Values.layout }}'", "nvidia.com/mig-1g.10gb", None),
])
def test_gpu012_layouts(tmp_path: Path, layout: str, resource: str, problem: str | None) -> None:
    job = SELECTING_JOB.replace("LAYOUT", layout).replace("RESOURCE", resource)
    results = run(tmp_path, {"config.yaml": MIG_CONFIG, "job.yaml": job}, "GPU012")
    if problem is None:
        assert results == []
        return
    (result,) = results
    assert str(result.path).endswith("job.yaml") and (result.line, result.column) == (9, 32)
    assert problem in result.message and "config.yaml:6" in result.message


def test_gpu012_needs_a_config_and_suggests_a_fitting_layout(tmp_path: Path) -> None:
    job = SELECTING_JOB.replace("LAYOUT", "hptuning-1g10g").replace("RESOURCE", "nvidia.com/mig-1g.10gb")
    assert run(tmp_path, {"job.yaml": job}, "GPU012") == []  # no mig-parted config in the project: not judged
    (result,) = run(tmp_path, {"config.yaml": MIG_CONFIG, "job.yaml": job}, "GPU012")
    assert result.fix == "nvidia.com/mig.config: hptuning-1g10gb"
    affinity = job.replace("      nodeSelector:\n        nvidia.com/mig.config: hptuning-1g10g\n",
                           "      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                           "{nodeSelectorTerms: [{matchExpressions: [{key: nvidia.com/mig.config, operator: In, "
                           "values: [hptuning-1g10g]}]}, {matchExpressions: [{key: pool, operator: In, values: [a]}]}]}}}\n")
    assert run(tmp_path, {"config.yaml": MIG_CONFIG, "job.yaml": affinity}, "GPU012") == []  # a term without the layout
    pinned = affinity.replace(", {matchExpressions: [{key: pool, operator: In, values: [a]}]}", "")
    (result,) = run(tmp_path, {"config.yaml": MIG_CONFIG, "job.yaml": pinned}, "GPU012")
    assert (result.line, result.column) == (8, 7) and result.fix == "values: [hptuning-1g10gb]"


# ---------------------------------------------------------------------------------------------
# GPU011 and GPU012 in a folder of repositories (linter.model.locality): a statement governs
# only the manifests of its own top-level folder unless the root is a git top or has a config


def _write_tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")


def _lint_folder(root: Path, select: str, cwd: Path) -> list:
    """``mlops-lint ROOT`` from ``cwd``, each root found as the CLI finds it (no config given)."""
    report = lint(LintRequest(paths=[root], config=None, registry=REGISTRY, select=[select], cwd=cwd))
    return report.active


SIDE_BY_SIDE = {
    "deepops/workloads/examples/mig-mixed-pod.yaml": MIG_JOB.replace("RESOURCE", "nvidia.com/mig-1g.10gb"),
    "gpu-operator/config/samples/v1_clusterpolicy.yaml": POLICY.replace("STRATEGY", "single"),
}


@pytest.mark.parametrize("marker, fires", [(None, False), (".git/HEAD", True), (".mlops-lint.yaml", True)])
def test_gpu011_repositories_side_by_side(tmp_path: Path, marker: str | None, fires: bool) -> None:
    corpus = tmp_path / "corpus"
    _write_tree(corpus, SIDE_BY_SIDE)
    if marker is not None:
        _write_tree(corpus, {marker: "ref: refs/heads/main\n" if marker.startswith(".git") else "{}\n"})
    results = _lint_folder(corpus, "GPU011", cwd=tmp_path)
    assert [(Path(r.path).name, r.line, r.column) for r in results] == (
        [("mig-mixed-pod.yaml", 13, 13)] if fires else [])
    if fires:
        assert "v1_clusterpolicy.yaml:7" in results[0].message


def test_gpu011_statement_governs_its_own_folder_and_from_the_top(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    single = POLICY.replace("STRATEGY", "single")
    _write_tree(corpus, {**SIDE_BY_SIDE, "deepops/config/policy.yaml": single})  # the same repository's policy
    (result,) = _lint_folder(corpus, "GPU011", cwd=tmp_path)
    assert "deepops/config/policy.yaml:7" in result.message and "v1_clusterpolicy" not in result.message
    other = tmp_path / "other"
    _write_tree(other, {**SIDE_BY_SIDE, "policy.yaml": single})  # a policy directly in the top governs every folder
    (result,) = _lint_folder(other, "GPU011", cwd=tmp_path)
    assert "policy.yaml:7" in result.message
    mixed = tmp_path / "mixed"  # the pod's own repository says mixed: the other one's single is not its cluster
    _write_tree(mixed, {**SIDE_BY_SIDE, "deepops/config/policy.yaml": POLICY.replace("STRATEGY", "mixed")})
    assert _lint_folder(mixed, "GPU011", cwd=tmp_path) == []


@pytest.mark.parametrize("marker, fires", [(None, False), (".git/HEAD", True)])
def test_gpu012_repositories_side_by_side(tmp_path: Path, marker: str | None, fires: bool) -> None:
    corpus = tmp_path / "corpus"
    job = SELECTING_JOB.replace("LAYOUT", "hptuning-2g20gb").replace("RESOURCE", "nvidia.com/gpu")
    _write_tree(corpus, {"examples/jobs/job.yaml": job, "operator/samples/mig-config.yaml": MIG_CONFIG})
    if marker is not None:
        _write_tree(corpus, {marker: "ref: refs/heads/main\n"})
    results = _lint_folder(corpus, "GPU012", cwd=tmp_path)
    assert [(Path(r.path).name, r.line, r.column) for r in results] == ([("job.yaml", 9, 32)] if fires else [])


# ---------------------------------------------------------------------------------------------
# GPU002 and a zero limit (GPU003's finding)


def test_a_zero_gpu_limit_is_left_to_gpu003(tmp_path: Path) -> None:
    # a CPU variant that limits nvidia.com/gpu to 0 asks for no GPU: GPU003 asks to remove the
    # entry; GPU002 asking to add `requests: nvidia.com/gpu: 0` beside it would contradict that
    pod = """\
        apiVersion: v1
        kind: Pod
        metadata: {name: cpu-pod}
        spec:
          containers:
          - name: train
            image: tensorflow/tensorflow:2.16.1
            resources:
              limits:
                nvidia.com/gpu: %s
        """
    assert [(r.rule, r.line) for r in run(tmp_path, {"pod.yaml": pod % "0"}, "GPU003")] == [("GPU003", 10)]
    assert run(tmp_path, {"pod.yaml": pod % "0"}, "GPU002") == []
    assert run(tmp_path, {"pod.yaml": pod % '"0"'}, "GPU002") == []
    assert [(r.rule, r.line, r.column) for r in run(tmp_path, {"pod.yaml": pod % "1"}, "GPU002")] == [("GPU002", 10, 9)]
