"""NAP rules beyond their fixtures: which projects and clusters they judge, aliases, positions and
messages (issue 37, "AKS Automatic as it behaves")."""

from __future__ import annotations

from pathlib import Path

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

REGISTRY = load_registry()


def lint_tree(tmp_path: Path, files: dict[str, str], select: list[str], config: Config | None = None,
              overrides: dict | None = None) -> list:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / ".mlops-lint.yaml").write_text("# defaults\n")
    report = lint(LintRequest(paths=[tmp_path], config=config, registry=REGISTRY, cwd=tmp_path, select=select,
                              overrides=overrides or {}))
    return report.active


ARTICLE_AUTOSCALER = """\
#!/bin/bash
az aks nodepool update \\
  --resource-group "$RESOURCE_GROUP" \\
  --cluster-name "$AKS_CLUSTER" \\
  --name "$GPU_NODE_POOL" \\
  --enable-cluster-autoscaler \\
  --min-count 0 \\
  --max-count 8
az aks update \\
  --resource-group "$RESOURCE_GROUP" \\
  --name "$AKS_CLUSTER" \\
  --cluster-autoscaler-profile \\
    scan-interval=20s \\
    max-graceful-termination-sec=120
"""


def test_nap001_silent_on_a_standard_project(tmp_path: Path) -> None:
    """The article's Standard autoscaler steps, with no Automatic or NAP cluster anywhere."""
    assert lint_tree(tmp_path, {"scale.sh": ARTICLE_AUTOSCALER}, ["NAP001"]) == []


def test_nap001_the_articles_steps_on_automatic(tmp_path: Path) -> None:
    found = lint_tree(tmp_path, {"scale.sh": ARTICLE_AUTOSCALER}, ["NAP001"],
                      overrides={"profile": "aks-automatic", "profile_from": "--profile"})
    assert [(r.line, r.column) for r in found] == [(6, 3), (12, 3)]
    assert found[0].message == (
        "`--enable-cluster-autoscaler`, `--min-count`, `--max-count` on `az aks nodepool update`: the profile is "
        "aks-automatic, where node auto-provisioning makes the nodes from pod requests; a cluster-autoscaler pool "
        "beside it is a second autoscaler on the same pending pods")
    assert found[1].message.startswith("`--cluster-autoscaler-profile` on `az aks update`: the profile is aks-automatic, "
                                       "and node auto-provisioning does not read the cluster autoscaler profile")


def test_nap001_aliases_and_the_disable_switch(tmp_path: Path) -> None:
    script = ("#!/bin/bash\naz aks create -g rg -n ml --sku automatic\n"
              "az aks nodepool add -g rg --cluster-name ml -n a -e --min-count 1 --max-count 2\n"
              "az aks update -g rg -n ml --ca-profile scan-interval=20s\n"
              "az aks nodepool update -g rg --cluster-name ml -n a --disable-cluster-autoscaler\n")
    found = lint_tree(tmp_path, {"c.sh": script}, ["NAP001"])
    assert [(r.line, r.column, r.message.split(":")[0]) for r in found] == [
        (3, 50, "`-e`, `--min-count`, `--max-count` on `az aks nodepool add`"),
        (4, 27, "`--ca-profile` on `az aks update`")]


def test_nap001_only_the_nap_clusters_commands_when_the_project_makes_two(tmp_path: Path) -> None:
    script = ("#!/bin/bash\naz aks create -g rg -n nap --node-provisioning-mode Auto\n"
              "az aks create -g rg -n std\n"
              "az aks nodepool add -g rg --cluster-name std -n gpu --enable-cluster-autoscaler --min-count 0 --max-count 2\n"
              "az aks nodepool add -g rg --cluster-name nap -n gpu --enable-cluster-autoscaler --min-count 0 --max-count 2\n"
              "az aks nodepool add -g rg --cluster-name \"$OTHER\" -n gpu --enable-cluster-autoscaler --min-count 0 "
              "--max-count 2\n")
    found = lint_tree(tmp_path, {"c.sh": script}, ["NAP001"])
    # aks-standard (mixed: not inferred); the NAP cluster's pool, and one of a cluster the script does not determine
    assert [r.line for r in found] == [5, 6]
    assert "the cluster is node auto-provisioned by `az aks create --node-provisioning-mode Auto` at c.sh:2" in found[0].message


def test_nap001_terraform_values_from_variables_are_not_judged(tmp_path: Path) -> None:
    tf = ('variable "scale" {\n  default = true\n}\n'
          'resource "azurerm_kubernetes_cluster" "aks" {\n  name = "ml"\n  sku_tier = "Automatic"\n'
          '  default_node_pool {\n    name = "system"\n    auto_scaling_enabled = var.scale\n  }\n}\n'
          'resource "azurerm_kubernetes_cluster_node_pool" "gpu" {\n  name = "gpu"\n  enable_auto_scaling = true\n}\n')
    found = lint_tree(tmp_path, {"main.tf": tf}, ["NAP001"])
    assert [(r.line, r.column, r.message.split(":")[0]) for r in found] == [(14, 3, "`enable_auto_scaling = true`")]


def nodepool(name: str, requirements: str, extra: str = "", node_class: str = "{group: karpenter.azure.com, kind: AKSNodeClass, name: default}") -> str:
    return (f"apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: {name}\nspec:\n  template:\n"
            f"    spec:\n      nodeClassRef: {node_class}\n      requirements:\n{requirements}{extra}---\n")


def gpu_job(spec: str = "") -> str:
    return ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n"
            f"      restartPolicy: Never\n{spec}      containers:\n      - name: trainer\n        image: t:1\n"
            "        resources:\n          limits:\n            nvidia.com/gpu: 1\n")


AUTOMATIC = {"profile": "aks-automatic", "profile_from": "--profile"}
FAMILY_N = "      - {key: karpenter.azure.com/sku-family, operator: In, values: [N]}\n"


def test_nap002_no_gpu_nodepool_points_at_the_request(tmp_path: Path) -> None:
    found = lint_tree(tmp_path, {"job.yaml": gpu_job()}, ["NAP002"], overrides=AUTOMATIC)
    assert [(r.line, r.column) for r in found] == [(14, 13)]
    assert found[0].message == (
        "pod template asks for nvidia.com/gpu (container `trainer`) but no NodePool can make a node with it: AKS's "
        "default NodePool allows the D family only and the project has no NodePool that allows a GPU size (the profile "
        "is aks-automatic); NAP never makes a node for it and it stays Pending")


def test_nap002_silent_without_nap(tmp_path: Path) -> None:
    assert lint_tree(tmp_path, {"job.yaml": gpu_job()}, ["NAP002"]) == []


def test_nap002_a_key_the_requirements_let_karpenter_choose_is_no_absent_label(tmp_path: Path) -> None:
    pool = nodepool("gpu", FAMILY_N + "      - {key: workload, operator: In, values: [training, tuning]}\n")
    job = gpu_job("      nodeSelector:\n        workload: tuning\n")
    assert lint_tree(tmp_path, {"pool.yaml": pool + job}, ["NAP002"], overrides=AUTOMATIC) == []


def test_nap002_another_providers_nodepool_serves_nothing(tmp_path: Path) -> None:
    pool = nodepool("gpu", "      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [p4d]}\n",
                    node_class="{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}")
    found = lint_tree(tmp_path, {"pool.yaml": pool + gpu_job()}, ["NAP002"], overrides=AUTOMATIC)
    assert [r.rule for r in found] == ["NAP002"]
    assert "the project has no NodePool that allows a GPU size" in found[0].message


def test_nap002_the_projects_default_nodepool_replaces_aks_default(tmp_path: Path) -> None:
    pool = nodepool("default", FAMILY_N)
    assert lint_tree(tmp_path, {"pool.yaml": pool + gpu_job()}, ["NAP002"], overrides=AUTOMATIC) == []


def test_nap002_inferred_from_a_nap_cluster_and_named(tmp_path: Path) -> None:
    found = lint_tree(tmp_path, {"job.yaml": gpu_job(), "c.sh": "#!/bin/bash\naz aks create -g rg -n ml --sku automatic\n"},
                      ["NAP002"])
    assert "(the cluster is made AKS Automatic by `az aks create --sku automatic` at c.sh:2)" in found[0].message


def test_gpu005_is_off_in_aks_automatic() -> None:
    from mlops_lint.engine.selection import enabled_rules

    codes = [m.code for m in enabled_rules(REGISTRY, Config(profile="aks-automatic"), ["ALL"])]
    assert "GPU005" not in codes and "NAP002" in codes
    assert "GPU005" in [m.code for m in enabled_rules(REGISTRY, Config(), ["ALL"])]


def ckpt_job(grace: str = "", annotations: str = "") -> str:
    meta = f"    metadata:\n      annotations:\n{annotations}" if annotations else ""
    return ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n" + meta +
            f"    spec:\n      restartPolicy: OnFailure\n{grace}      containers:\n      - name: trainer\n"
            "        image: t:1\n        volumeMounts:\n        - {name: checkpoints, mountPath: /checkpoints}\n"
            "      volumes:\n      - name: checkpoints\n        persistentVolumeClaim: {claimName: ckpt}\n")


def cpu_nodepool(extra_spec: str = "", template: str = "") -> str:
    return ("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: cpu\nspec:\n" + extra_spec +
            "  template:\n    spec:\n      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}\n"
            + template + "      requirements:\n      - {key: karpenter.azure.com/sku-family, operator: In, values: [D]}\n---\n")


def test_nap003_the_default_grace_and_the_nodepools_value(tmp_path: Path) -> None:
    pool = cpu_nodepool(template="      terminationGracePeriod: 20s\n")
    found = lint_tree(tmp_path, {"all.yaml": pool + ckpt_job()}, ["NAP003"])
    assert [(r.line, r.column) for r in found] == [(19, 5)]  # the template's spec:, no grace written
    assert found[0].message == (
        "pod template of Job `train` writes checkpoints (container `trainer`: mount path /checkpoints) with the default "
        "grace period of 30 s, but NodePool terminationGracePeriod `cpu` 20 s (all.yaml:9) overrides it: a drained "
        "node goes away after 20 s, before a checkpoint on SIGTERM can finish; raise the NodePool's "
        "terminationGracePeriod to at least 30s")


def test_nap003_not_judged(tmp_path: Path) -> None:
    templated = cpu_nodepool(template="      terminationGracePeriod: '{{ .Values.grace }}'\n")
    assert lint_tree(tmp_path / "a", {"all.yaml": templated + ckpt_job()}, ["NAP003"]) == []
    longer = cpu_nodepool(template="      terminationGracePeriod: 1h\n")
    assert lint_tree(tmp_path / "b", {"all.yaml": longer + ckpt_job("      terminationGracePeriodSeconds: 600\n")},
                     ["NAP003"]) == []
    no_checkpoint = ckpt_job().replace("/checkpoints", "/data").replace("checkpoints", "data").replace("ckpt", "data")
    short = cpu_nodepool(template="      terminationGracePeriod: 20s\n")
    assert lint_tree(tmp_path / "c", {"all.yaml": short + no_checkpoint}, ["NAP003"]) == []


def test_nap004_budgets_policies_annotations(tmp_path: Path) -> None:
    """The job selects the project's NodePool (else AKS's default one, which consolidates, may take it)."""
    def ckpt_job(grace: str = "", annotations: str = "") -> str:
        return globals()["ckpt_job"]("      nodeSelector: {karpenter.sh/nodepool: cpu}\n" + grace, annotations)

    blocked = cpu_nodepool('  disruption:\n    budgets:\n    - nodes: "0"\n')
    assert lint_tree(tmp_path / "a", {"all.yaml": blocked + ckpt_job()}, ["NAP004"]) == []
    scheduled = cpu_nodepool('  disruption:\n    budgets:\n    - {nodes: "0", schedule: "0 9 * * mon-fri", duration: 8h}\n')
    assert [r.rule for r in lint_tree(tmp_path / "b", {"all.yaml": scheduled + ckpt_job()}, ["NAP004"])] == ["NAP004"]
    empty = cpu_nodepool("  disruption:\n    consolidationPolicy: WhenEmpty\n")
    assert lint_tree(tmp_path / "c", {"all.yaml": empty + ckpt_job()}, ["NAP004"]) == []
    annotated = ckpt_job(annotations='        karpenter.sh/do-not-disrupt: "true"\n')
    assert lint_tree(tmp_path / "d", {"all.yaml": cpu_nodepool() + annotated}, ["NAP004"]) == []


def test_nap004_needs_node_auto_provisioning(tmp_path: Path) -> None:
    """No NodePool and no Automatic or NAP cluster: AKS's default NodePool is not there."""
    assert lint_tree(tmp_path / "a", {"job.yaml": ckpt_job()}, ["NAP004"]) == []
    found = lint_tree(tmp_path / "b", {"job.yaml": ckpt_job()}, ["NAP004"], overrides=AUTOMATIC)
    assert [(r.line, r.column) for r in found] == [(7, 5)]
    assert "NodePool `default`, which consolidates underused nodes" in found[0].message
    serving = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: serve\nspec:\n  selector: {}\n  template:\n"
               "    spec:\n      containers:\n      - {name: s, image: s:1}\n")
    assert lint_tree(tmp_path / "c", {"d.yaml": serving}, ["NAP004"], overrides=AUTOMATIC) == []


def test_nap002_a_cpu_nodepool_offers_no_gpu_and_daemonsets_are_not_judged(tmp_path: Path) -> None:
    """A NodePool of the D family (sizes not listed) is no GPU NodePool: the finding says no NodePool
    allows a GPU size, not that the pod misses its taint; a GPU DaemonSet is not judged."""
    pool = cpu_nodepool(template="      taints:\n      - {key: team, value: dev, effect: NoSchedule}\n")
    found = lint_tree(tmp_path / "a", {"all.yaml": pool + gpu_job()}, ["NAP002"], overrides=AUTOMATIC)
    assert [r.message.split(" (the profile")[0] for r in found] == [
        "pod template asks for nvidia.com/gpu (container `trainer`) but no NodePool can make a node with it: AKS's "
        "default NodePool allows the D family only and the project's NodePools (cpu) allow no VM size with it"]
    daemonset = gpu_job().replace("kind: Job", "kind: DaemonSet").replace("apiVersion: batch/v1", "apiVersion: apps/v1")
    assert lint_tree(tmp_path / "b", {"ds.yaml": daemonset}, ["NAP002"], overrides=AUTOMATIC) == []


def test_nap004_a_cpu_job_whose_only_sign_is_a_serving_image_is_not_judged(tmp_path: Path) -> None:
    archive = ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: archive\nspec:\n  template:\n    spec:\n"
               "      restartPolicy: Never\n      containers:\n      - name: archive-model\n"
               "        image: pytorch/torchserve:latest\n        command: [torch-model-archiver, --model-name, m]\n")
    assert lint_tree(tmp_path / "a", {"job.yaml": archive}, ["NAP004"], overrides=AUTOMATIC) == []
    trainer = archive.replace("pytorch/torchserve:latest", "myacr.azurecr.io/train-tabular:1")
    assert [r.rule for r in lint_tree(tmp_path / "b", {"job.yaml": trainer}, ["NAP004"], overrides=AUTOMATIC)] == ["NAP004"]


def test_nap_a_label_of_another_clouds_domain_is_on_no_nap_node(tmp_path: Path) -> None:
    """Karpenter sets only its NodePool's and well-known labels: a GKE selector matches no node."""
    gke = gpu_job("      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-tesla-t4\n")
    found = lint_tree(tmp_path / "a", {"pool.yaml": nodepool("gpu", FAMILY_N) + gke}, ["NAP002"], overrides=AUTOMATIC)
    assert [(r.line, r.column) for r in found] == [(21, 9)]
    assert "`gpu`: nodeSelector cloud.google.com/gke-accelerator=nvidia-tesla-t4 does not match" in found[0].message
    gfd = gpu_job("      nodeSelector:\n        nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB\n")
    assert lint_tree(tmp_path / "b", {"pool.yaml": nodepool("gpu", FAMILY_N) + gfd}, ["NAP002"], overrides=AUTOMATIC) == []


def test_nap004_a_tpu_workload_is_not_judged(tmp_path: Path) -> None:
    tpu = ckpt_job().replace("        image: t:1\n", "        image: t:1\n        resources:\n          limits: {google.com/tpu: 4}\n")
    assert lint_tree(tmp_path, {"job.yaml": tpu}, ["NAP004"], overrides=AUTOMATIC) == []


def test_nap004_a_nodepool_alone_does_not_bring_aks_default_one(tmp_path: Path) -> None:
    """aks-standard, no Automatic or NAP cluster: a tainted NodePool (another repository's, in a tree
    linted as one project) is the only NodePool; a job that does not tolerate it is not judged."""
    pool = cpu_nodepool(template="      taints:\n      - {key: team, value: dev, effect: NoSchedule}\n")
    assert lint_tree(tmp_path, {"all.yaml": pool + ckpt_job()}, ["NAP004"]) == []


def test_nap_rules_on_malformed_nodepools_give_no_rule_error(tmp_path: Path) -> None:
    """NodePool fields of the wrong type are not judged (no LNT002), whatever the rules read."""
    weird = ("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: odd\nspec:\n  disruption: nope\n"
             "  template:\n    spec:\n      nodeClassRef: default\n      terminationGracePeriod: 60\n"
             "      requirements: {key: x}\n      taints: [1, {key: k}]\n---\n"
             "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: odd2\nspec:\n  disruption:\n"
             "    budgets: [3, {nodes: 0}]\n  template: []\n---\n")
    found = lint_tree(tmp_path, {"all.yaml": weird + ckpt_job("      terminationGracePeriodSeconds: 120\n")},
                      ["NAP002", "NAP003", "NAP004", "LNT002"], overrides=AUTOMATIC)
    assert "LNT002" not in [r.rule for r in found]


def test_lnt005_silent_when_the_given_profile_agrees(tmp_path: Path) -> None:
    found = lint_tree(tmp_path, {"c.sh": "#!/bin/bash\naz aks create -g rg -n ml --sku automatic\n"}, ["LNT005"],
                      overrides=AUTOMATIC)
    assert found == []


RUNTIME_WITH_INITIALIZERS = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torchtune-llama
spec:
  template:
    spec:
      replicatedJobs:
      - name: dataset-initializer
        template:
          metadata:
            labels:
              trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer
          spec:
            template:
              spec:
                containers:
                - {name: dataset-initializer, image: ghcr.io/kubeflow/trainer/dataset-initializer}
      - name: model-initializer
        template:
          spec:
            template:
              spec:
                containers:
                - {name: model-initializer, image: ghcr.io/kubeflow/trainer/model-initializer}
      - name: node
        template:
          metadata:
            labels:
              trainer.kubeflow.org/trainjob-ancestor-step: trainer
          spec:
            template:
              spec:
                containers:
                - {name: node, image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime, command: [tune, run]}
"""

RAYJOB_WITH_SUBMITTER = """\
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: train
spec:
  entrypoint: python train.py
  rayClusterSpec:
    headGroupSpec:
      template:
        spec:
          containers:
          - {name: ray-head, image: rayproject/ray:2.41.0}
    workerGroupSpecs:
    - groupName: small-group
      template:
        spec:
          containers:
          - {name: ray-worker, image: rayproject/ray:2.41.0}
  submitterPodTemplate:
    spec:
      restartPolicy: Never
      containers:
      - {name: submitter, image: rayproject/ray:2.41.0}
"""


def test_nap004_pods_that_hold_no_progress_are_not_judged(tmp_path: Path) -> None:
    """Trainer v2's initializer steps (by step label or job name) and a RayJob's submitter download or
    submit: eviction loses no training (corpus: torchtune llama3_2_3B, kuberay light-weight-submitter)."""
    found = lint_tree(tmp_path / "a", {"runtime.yaml": RUNTIME_WITH_INITIALIZERS}, ["NAP004"], overrides=AUTOMATIC)
    assert [(r.line, r.message.split(" of a training")[0]) for r in found] == [(33, "node replicas")]
    found = lint_tree(tmp_path / "b", {"rayjob.yaml": RAYJOB_WITH_SUBMITTER}, ["NAP004"], overrides=AUTOMATIC)
    assert [r.message.split(" of a training")[0] for r in found] == ["head replicas", "small-group replicas"]


def test_nap004_a_ray_job_on_cpus_is_judged_only_when_its_entrypoint_or_pods_train(tmp_path: Path) -> None:
    """KubeRay's samples run `sample_code.py` (a counter), Ray Data batches and `pi`-like demos on CPUs:
    a Ray kind is no evidence of training (corpus: 53 such findings were gone); `train.py` or a Ray
    Tune search in the entrypoint is."""
    demo = RAYJOB_WITH_SUBMITTER.replace("name: train\n", "name: demo\n").replace(
        "python train.py", "python /home/ray/samples/sample_code.py")
    assert lint_tree(tmp_path / "a", {"rayjob.yaml": demo}, ["NAP004"], overrides=AUTOMATIC) == []
    tune = demo.replace("sample_code.py", "tune_gpt2.py --num_workers=10")
    found = lint_tree(tmp_path / "b", {"rayjob.yaml": tune}, ["NAP004"], overrides=AUTOMATIC)
    assert [r.message.split(" of a training")[0] for r in found] == ["head replicas", "small-group replicas"]
    assert "`tune` in its entrypoint or pods" in found[0].message


def test_nap004_an_mpi_demo_on_cpus_is_not_judged_but_an_mpi_training_is(tmp_path: Path) -> None:
    """mpi-operator's `pi` examples (corpus: 8 findings gone) compute a number; Horovod trains."""
    mpijob = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: pi
spec:
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - {name: mpi-launcher, image: mpioperator/mpi-pi:openmpi, command: [mpirun, -n, "2", /home/mpiuser/pi]}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - {name: mpi-worker, image: mpioperator/mpi-pi:openmpi}
"""
    assert lint_tree(tmp_path / "a", {"mpijob.yaml": mpijob}, ["NAP004"], overrides=AUTOMATIC) == []
    horovod = mpijob.replace("/home/mpiuser/pi", "python /examples/train_tensorflow.py")
    found = lint_tree(tmp_path / "b", {"mpijob.yaml": horovod}, ["NAP004"], overrides=AUTOMATIC)
    assert [r.message.split(" of a training")[0] for r in found] == ["Launcher replicas", "Worker replicas"]


FLUX_RUNTIME_AND_TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: hpc-distributed
spec:
  mlPolicy:
    numNodes: 1
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels:
              trainer.kubeflow.org/trainjob-ancestor-step: trainer
          spec:
            template:
              spec:
                containers:
                - {name: node, image: ubuntu:jammy}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: interactive
spec:
  runtimeRef:
    name: hpc-distributed
  trainer:
    numNodes: 4
    image: myacr.azurecr.io/md-sim:1.0
    command: ["sleep", "infinity"]
"""


def test_nap004_an_operators_job_whose_pods_only_sleep_is_not_training(tmp_path: Path) -> None:
    """A TrainJob whose trainer only runs `sleep infinity` holds an interactive session (Kubeflow
    Trainer's Flux example: a user shells in to run the simulator): training by kind no longer, as
    a GPU `sleep` Job is not; the same TrainJob running its program is judged (its runtime's own
    view, with no command, is a trainer's template and is judged as before)."""
    found = lint_tree(tmp_path / "a", {"all.yaml": FLUX_RUNTIME_AND_TRAINJOB}, ["NAP004"], overrides=AUTOMATIC)
    assert [(r.line, r.column) for r in found] == [(18, 15)]
    assert "ClusterTrainingRuntime" in found[0].message
    running = FLUX_RUNTIME_AND_TRAINJOB.replace('["sleep", "infinity"]', '["lmp", "-in", "in.reaxc.hns"]')
    found = lint_tree(tmp_path / "b", {"all.yaml": running}, ["NAP004"], overrides=AUTOMATIC)
    assert [(r.line, r.column) for r in found] == [(18, 15), (29, 3)]
    assert "of a training workload (it is a trainer.kubeflow.org TrainJob)" in found[1].message
    shell = FLUX_RUNTIME_AND_TRAINJOB.replace('["sleep", "infinity"]', '[sh, -c, "echo ready; sleep infinity"]')
    assert [r.line for r in lint_tree(tmp_path / "c", {"all.yaml": shell}, ["NAP004"], overrides=AUTOMATIC)] == [18]


def test_nap004_mpi_workers_that_sleep_still_train_with_their_launcher(tmp_path: Path) -> None:
    """Idle is the whole workload's: MPI workers that only `sleep` host the ranks the launcher's
    `mpirun` starts over ssh, and evicting one ends the run."""
    mpijob = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: horovod
spec:
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - {name: launcher, image: horovod/horovod:0.28.1, command: [mpirun, -np, "2", python, train.py]}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - {name: worker, image: horovod/horovod:0.28.1, command: [sleep, infinity]}
"""
    found = lint_tree(tmp_path, {"mpijob.yaml": mpijob}, ["NAP004"], overrides=AUTOMATIC)
    assert [r.message.split(" of a training")[0] for r in found] == ["Launcher replicas", "Worker replicas"]


def limited(name: str, limits: str, requirements: str = FAMILY_N) -> str:
    return nodepool(name, requirements).replace("spec:\n  template:", f"spec:\n  limits: {limits}\n  template:", 1)


def big_job(cpu: str = "16", memory: str = "64Gi", gpus: int = 1) -> str:
    return gpu_job().replace("        resources:\n          limits:\n            nvidia.com/gpu: 1\n",
                             f"        resources:\n          requests: {{cpu: '{cpu}', memory: {memory}}}\n"
                             f"          limits:\n            nvidia.com/gpu: {gpus}\n")


def test_nap002_nodepool_limits_below_the_pods_request(tmp_path: Path) -> None:
    cases = [
        ("{cpu: '8'}", "its `limits` cap `cpu` at `8`, below the pod's request of 16"),
        ("{memory: 32Gi}", "its `limits` cap `memory` at `32Gi`, below the pod's request of 64Gi"),
        ("{nvidia.com/gpu: 0}", "its `limits` cap `nvidia.com/gpu` at `0`, below the pod's request of 1"),
    ]
    for limits, why in cases:
        found = lint_tree(tmp_path, {"pool.yaml": limited("gpu", limits) + big_job()}, ["NAP002"], overrides=AUTOMATIC)
        assert [(r.line, r.column) for r in found] == [(27, 13)], limits  # the GPU request of the job
        assert f"`gpu` (pool.yaml:2): {why}; NAP never makes a node" in found[0].message


def test_nap002_nodepool_limits_that_leave_room_or_are_not_known(tmp_path: Path) -> None:
    for limits in ("{cpu: '1000', memory: 1000Gi, nvidia.com/gpu: 8}", "{cpu: '${CPU_LIMIT}'}", "{pods: '1'}"):
        assert lint_tree(tmp_path, {"pool.yaml": limited("gpu", limits) + big_job()}, ["NAP002"],
                         overrides=AUTOMATIC) == [], limits
    # one NodePool capped, another that takes the pod without limits: NAP uses the other
    pools = limited("gpu-small", "{nvidia.com/gpu: 0}") + nodepool("gpu", FAMILY_N)
    assert lint_tree(tmp_path, {"pool.yaml": pools + big_job()}, ["NAP002"], overrides=AUTOMATIC) == []


def test_nap002_nodepool_limits_below_one_node_of_its_only_size(tmp_path: Path) -> None:
    sizes = "      - {key: node.kubernetes.io/instance-type, operator: In, values: [Standard_NC24ads_A100_v4]}\n"
    found = lint_tree(tmp_path, {"pool.yaml": limited("a100", "{cpu: '16'}", sizes) + big_job(cpu="4")}, ["NAP002"],
                      overrides=AUTOMATIC)
    assert [r.line for r in found] == [27]
    assert "`a100` (pool.yaml:2): its `limits` cap `cpu` at `16`, below one Standard_NC24ads_A100_v4 node's 24" \
        in found[0].message
    assert lint_tree(tmp_path, {"pool.yaml": limited("a100", "{cpu: '24'}", sizes) + big_job(cpu="4")}, ["NAP002"],
                     overrides=AUTOMATIC) == []


def test_nap002_a_pod_a_standard_clusters_pool_takes_is_not_judged(tmp_path: Path) -> None:
    """A NAP cluster beside a Standard one with a tainted GPU pool: a GPU pod that selects and
    tolerates that pool may be meant for the Standard cluster, where NAP makes no node (before:
    NAP002 said no NodePool makes a node for it). A pod no Standard pool takes is still judged."""
    script = ("#!/bin/bash\naz aks create -g rg -n napaks --node-provisioning-mode Auto --node-vm-size Standard_D4s_v3\n"
              "az aks create -g rg -n aks --node-vm-size Standard_D4s_v3\n"
              "az aks nodepool add -g rg --cluster-name aks -n gpunp --node-vm-size Standard_NC4as_T4_v3 "
              "--labels accelerator=nvidia --node-taints sku=gpu:NoSchedule\n")
    placed = gpu_job("      nodeSelector: {accelerator: nvidia}\n"
                     "      tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]\n")
    assert lint_tree(tmp_path, {"c.sh": script, "job.yaml": placed}, ["NAP002"]) == []
    found = lint_tree(tmp_path, {"c.sh": script, "job.yaml": gpu_job()}, ["NAP002"])  # the taint repels it
    assert [(r.rule, r.line) for r in found] == [("NAP002", 14)]


MIXED_TF = """\
resource "azurerm_kubernetes_cluster" "nap" {
  name = "napaks"
  node_provisioning_profile {
    mode = "Auto"
  }
  default_node_pool {
    name                 = "system"
    auto_scaling_enabled = true
  }
}

resource "azurerm_kubernetes_cluster" "std" {
  name = "aks"
  default_node_pool {
    name                 = "system"
    auto_scaling_enabled = true
  }
}

resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name                  = "gpunp"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.std.id
  auto_scaling_enabled  = true
}

resource "azurerm_kubernetes_cluster_node_pool" "napgpu" {
  name                  = "napgpu"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.nap.id
  auto_scaling_enabled  = true
}
"""


def test_nap001_terraform_judges_only_the_nap_clusters_resources(tmp_path: Path) -> None:
    """Terraform with a NAP cluster and a Standard one: the autoscaler switches of the NAP cluster
    and of its pool are reported, not the Standard cluster's (before: all four were)."""
    found = lint_tree(tmp_path, {"main.tf": MIXED_TF}, ["NAP001"])
    assert [(r.rule, r.line) for r in found] == [("NAP001", 8), ("NAP001", 29)]
    # a cluster name Terraform does not write literally may be the NAP cluster's
    found = lint_tree(tmp_path, {"main.tf": MIXED_TF.replace('name = "aks"', "name = var.name")}, ["NAP001"])
    assert [r.line for r in found] == [8, 16, 23, 29]


MIXED_BICEP = """\
resource nap 'Microsoft.ContainerService/managedClusters@2025-05-01' = {
  name: 'napaks'
  properties: {
    nodeProvisioningProfile: { mode: 'Auto' }
  }
}

resource std 'Microsoft.ContainerService/managedClusters@2025-05-01' = {
  name: 'aks'
  properties: {
    agentPoolProfiles: [
      { name: 'system', mode: 'System', enableAutoScaling: true }
    ]
  }
}

resource gpu 'Microsoft.ContainerService/managedClusters/agentPools@2025-05-01' = {
  parent: std
  name: 'gpunp'
  properties: { enableAutoScaling: true }
}

resource napgpu 'Microsoft.ContainerService/managedClusters/agentPools@2025-05-01' = {
  parent: nap
  name: 'napgpu'
  properties: { enableAutoScaling: true }
}
"""


def test_nap001_bicep_judges_only_the_nap_clusters_resources(tmp_path: Path) -> None:
    """Bicep with a NAP cluster and a Standard one: only the NAP cluster's pool (by its `parent`)
    is reported (before: all three switches were)."""
    found = lint_tree(tmp_path, {"main.bicep": MIXED_BICEP}, ["NAP001"])
    assert [(r.rule, r.line) for r in found] == [("NAP001", 26)]
