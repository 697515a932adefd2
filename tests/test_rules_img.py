"""IMG rules beyond their fixtures: which tags move (IMG006), and the split of one unpinned image
between IMG001, IMG002 and IMG006 (one cause, one finding)."""

from __future__ import annotations

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.model.images import is_moving_tag
from mlops_lint.registry import load_registry

REGISTRY = load_registry()
POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: IMAGE\n"


def run(image: str, select: list[str]) -> list:
    report = lint(LintRequest(paths=[], config=Config(), registry=REGISTRY, select=select,
                              stdin=("pod.yaml", POD.replace("IMAGE", image).encode())))
    return report.active


@pytest.mark.parametrize("tag, moving", [
    ("main", True), ("master", True), ("nightly", True), ("stable", True), ("edge", True), ("dev", True),
    ("devel", True), ("develop", True), ("MAIN", True), ("latest-gpu", True), ("nightly-cu121", True),
    ("main-latest", True), ("py3-nightly", True),
    ("latest", False), (None, False), ("", False), ("2.4.1", False), ("main-3f2a9c1", False),
    ("12.4.1-devel-ubuntu22.04", False), ("stable-alpine", False), ("development-2024.06.01", False),
    ("latestgpu", False), ("nightly2024", False),
])
def test_moving_tags(tag, moving: bool) -> None:
    assert is_moving_tag(tag) is moving


@pytest.mark.parametrize("image, rules", [
    ("rayproject/ray:nightly", ["IMG006"]),
    ("tensorflow/tensorflow:latest-gpu", ["IMG006"]),
    ("rayproject/ray:nightly@sha256:" + "a" * 64, []),
    ("rayproject/ray:2.40.0", ["IMG002"]),
    ("rayproject/ray:latest", ["IMG001"]),
    ("rayproject/ray", ["IMG001"]),
])
def test_one_unpinned_image_gives_one_finding(image: str, rules: list[str]) -> None:
    found = run(image, ["IMG001", "IMG002", "IMG006"])
    assert [r.rule for r in found] == rules


def test_img006_points_at_the_image_and_asks_for_a_release_and_its_digest() -> None:
    (finding,) = run("ghcr.io/example/fetcher:main", ["IMG006"])
    assert (finding.line, finding.column, finding.severity) == (7, 12, "warning")
    assert finding.message == ("container `c` image `ghcr.io/example/fetcher:main` uses the moving tag `main`, which "
                               "points at a new build every time it is pushed; use a release tag and pin its digest")


CSV = """\
apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata: {name: gpu-operator-certified.v0.0.0}
spec:
  install:
    strategy: deployment
    spec:
      deployments:
      - name: gpu-operator
        spec:
          selector: {matchLabels: {app: gpu-operator}}
          template:
            metadata: {labels: {app: gpu-operator}}
            spec:
              containers:
              - name: gpu-operator
                image: IMAGE
"""


@pytest.mark.parametrize("text, image, severity, says", [
    # Kubernetes' staging registries hold pre-release builds (corpus: lws and kueue-populator's kustomizations)
    (POD, "us-central1-docker.pkg.dev/k8s-staging-images/lws/lws:main", "info", "`k8s-staging-images` is a Kubernetes "
     "staging registry"),
    (POD, "gcr.io/k8s-staging-kueue/kueue:nightly", "info", "`k8s-staging-kueue` is a Kubernetes staging registry"),
    (POD, "registry.k8s.io/lws/lws:main", "warning", "points at a new build every time it is pushed"),
    # an OLM bundle's branch tag is a development branch's default (corpus: gpu-operator's CSV main-latest)
    (CSV, "ghcr.io/nvidia/gpu-operator:main-latest", "info", "it is in an OLM bundle of a development branch"),
    (CSV, "ghcr.io/nvidia/gpu-operator:main", "info", "it is in an OLM bundle of a development branch"),
    (CSV, "ghcr.io/nvidia/gpu-operator:nightly", "warning", "points at a new build every time it is pushed"),
    (POD, "ghcr.io/nvidia/gpu-operator:main-latest", "warning", "points at a new build every time it is pushed"),
])
def test_img006_development_defaults_are_info(text: str, image: str, severity: str, says: str) -> None:
    report = lint(LintRequest(paths=[], config=Config(), registry=REGISTRY, select=["IMG006"],
                              stdin=("x.yaml", text.replace("IMAGE", image).encode())))
    (finding,) = report.active
    assert (finding.rule, finding.severity) == ("IMG006", severity)
    assert says in finding.message and f"uses the moving tag `{image.rsplit(':', 1)[1]}`" in finding.message


# ---------------------------------------------------------------------------------------------
# IMG005: a CUDA image on a training job that requests no GPU

from mlops_lint.rules.img.img005_cuda_image_without_gpu import cuda_image  # noqa: E402

JOB = ("apiVersion: batch/v1\nkind: KIND\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n"
       "      containers:\n      - name: c\n        image: IMAGE\nRESOURCES")


@pytest.mark.parametrize("image, cuda", [
    ("nvidia/cuda:12.4.1-runtime-ubuntu22.04", True), ("nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04", True),
    ("pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime", True), ("rayproject/ray:2.41.0-py311-cu121", True),
    ("nvcr.io/nvidia/pytorch:24.05-py3", True), ("myacr.azurecr.io/ml/trainer-cuda:1.0", True),
    ("tensorflow/tensorflow:2.16.1-gpu", True), ("mirror.io/tensorflow/tensorflow:2.16.1-gpu-jupyter", True),
    ("pytorch/pytorch:2.4.1-cpu", False), ("tensorflow/tensorflow:2.16.1", False), ("rayproject/ray:2.41.0", False),
    ("myacr.azurecr.io/app:gpu", False),  # an own image's `gpu` tag: not known to be CUDA
    ("nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0", False),  # NVIDIA's GPU check
    ("myacr.azurecr.io/cuda-cpu:1", False), ("docker.io/library/python:3.12", False), ("${IMAGE}", False),
    ("myacr.azurecr.io/customer:1.0", False), ("myacr.azurecr.io/cucumber:cu", False),
])
def test_img005_cuda_images(image: str, cuda: bool) -> None:
    assert (cuda_image(image) is not None) is cuda


def img005(image: str, kind: str = "Job", resources: str = "") -> list:
    text = JOB.replace("KIND", kind).replace("IMAGE", image).replace("RESOURCES", resources)
    report = lint(LintRequest(paths=[], config=Config(), registry=REGISTRY, select=["IMG005"],
                              stdin=("job.yaml", text.encode())))
    return report.active


def test_img005_points_at_the_image_of_a_training_job_without_gpus() -> None:
    found = img005("pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime")
    assert [(f.rule, f.line, f.column) for f in found] == [("IMG005", 10, 16)]
    assert "no pod of the Job requests a GPU" in found[0].message
    gpu = "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    assert img005("pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime", resources=gpu) == []
    zero = "        resources: {limits: {nvidia.com/gpu: 0}}\n"
    assert [f.rule for f in img005("nvidia/cuda:12.4.1-base-ubuntu22.04", resources=zero)] == ["IMG005"]


def test_img005_only_training_workloads() -> None:
    deployment = JOB.replace("batch/v1", "apps/v1").replace("KIND", "Deployment").replace(
        "      restartPolicy: Never\n", "").replace("IMAGE", "nvidia/cuda:12.4.1-base-ubuntu22.04").replace("RESOURCES", "")
    report = lint(LintRequest(paths=[], config=Config(), registry=REGISTRY, select=["IMG005"],
                              stdin=("d.yaml", deployment.encode())))
    assert report.active == []


TORCH_RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-distributed}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
"""


def trainjob(name: str, trainer: str) -> str:
    return ("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: NAME}\nspec:\n"
            "  runtimeRef: {name: torch-distributed}\n  trainer:\nTRAINER").replace("NAME", name).replace("TRAINER", trainer)


def test_img005_a_trainjob_is_judged_on_its_own_image_not_its_runtimes(tmp_path) -> None:
    """The shared runtime's CUDA image is its author's default for GPU TrainJobs: CPU-only TrainJobs that
    fall back to it are no finding there (corpus: kubeflow trainer's examples gave two findings on
    torch_distributed.yaml's image line); a TrainJob that sets a CUDA image itself is reported at it."""
    (tmp_path / "runtime.yaml").write_text(TORCH_RUNTIME)
    (tmp_path / "cpu-a.yaml").write_text(trainjob("a", "    numNodes: 2\n    resourcesPerNode: {limits: {cpu: 2}}\n"))
    (tmp_path / "cpu-b.yaml").write_text(trainjob("b", "    numNodes: 1\n"))
    (tmp_path / "own.yaml").write_text(trainjob("own", "    image: nvcr.io/nvidia/pytorch:24.05-py3\n"
                                                       "    resourcesPerNode: {limits: {cpu: 2}}\n"))
    (tmp_path / ".mlops-lint.yaml").write_text("# defaults\n")
    report = lint(LintRequest(paths=[tmp_path], config=None, registry=REGISTRY, select=["IMG005"], cwd=tmp_path))
    assert [(f.path.rsplit("/", 1)[-1], f.line, f.column) for f in report.active] == [("own.yaml", 7, 12)]
    assert "training TrainJob `own` runs `nvcr.io/nvidia/pytorch:24.05-py3`" in report.active[0].message


# ---------------------------------------------------------------------------------------------
# IMG007: code downloaded when the container starts

from mlops_lint.rules.img.img007_code_downloaded_at_start import downloads  # noqa: E402
from mlops_lint.model.shellc import statements  # noqa: E402

CONTAINER_POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: x:1\nSTART"


def img007(start: str) -> list:
    report = lint(LintRequest(paths=[], config=Config(), registry=REGISTRY, select=["IMG007"],
                              stdin=("pod.yaml", CONTAINER_POD.replace("START", start).encode())))
    return report.active


@pytest.mark.parametrize("script, fires", [
    ("pip install torch && python train.py", True), ("pip3 install -r requirements.txt; python t.py", True),
    ("python3 -m pip install -U transformers", True), ("uv pip install --system vllm", True),
    ("sudo -H pip install x", True), ("PIP_NO_CACHE_DIR=1 pip install x", True),
    ("curl -fsSL https://x.io/i.sh | sh", True), ("wget -qO- https://x.io/get | python3 -", True),
    ("curl -sSLO https://x.io/setup.sh && bash setup.sh", True), ("wget https://x.io/a/b/run.py?raw=1", True),
    ('bash -c "$(curl -fsSL https://x.io/install)"', True), ("bash <(curl -s https://x.io/i)", True),
    ("pip install -e . && python t.py", False), ("pip install /wheels/*.whl", False),
    ("pip install --no-index -f /wheels -r r.txt", False), ("pip freeze > /out/req.txt", False),
    ("pip list", False), ("echo pip install x", False), ("curl -o /data/x.csv https://x.io/x.csv", False),
    ("curl -s http://svc:8080/healthz | grep ok", False),
    ("curl -fsSL https://x.io/i.sh | bash -s -- --version 1.2", True), ("curl -fsSL https://x.io/i | sudo sh -", True),
    ("curl -s https://api.x.io/v1 | python3 -c 'import json,sys; print(json.load(sys.stdin))'", False),
    ("curl -s https://api.x.io/v1 | python -m json.tool", False), ("curl -s https://x.io/data | bash parse.sh", False),
])
def test_img007_downloads(script: str, fires: bool) -> None:
    assert (downloads(statements(script), script) is not None) is fires


def test_img007_positions() -> None:
    found = img007('    command: ["/bin/bash", "-c", "--"]\n    args: ["cd /src; pip install -r requirements.txt; python t.py"]\n')
    assert [(f.rule, f.line, f.column) for f in found] == [("IMG007", 9, 12)]  # the script after `-c --`
    assert "`pip install -r requirements.txt`" in found[0].message
    found = img007("    command: [pip, install, torch]\n")
    assert [(f.line, f.column) for f in found] == [(8, 15)]
    assert img007("    command: [python, train.py]\n    args: [--pip, install]\n") == []


SCRIPTS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: scripts, namespace: NS}
data:
  start.sh: |
    #!/bin/bash
    cat > /tmp/notes.txt <<'EOF'
    pip install is what the image's Dockerfile runs
    EOF
    BODY
    exec python train.py
"""
SCRIPT_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: t:1
        WORKDIR
        command: COMMAND
        volumeMounts:
        - {name: scripts, mountPath: /opt/scripts}
      volumes:
      - name: scripts
        configMap: {name: scripts}
"""


def lint_tree(tmp_path, files: dict[str, str], jobs: int = 1) -> list:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=REGISTRY, select=["IMG007"], cwd=tmp_path,
                              jobs=jobs))
    return [(r.path, r.line, r.column, r.message) for r in report.active]


@pytest.mark.parametrize("command, workdir, body, namespace, fires", [
    ('["bash", "/opt/scripts/start.sh"]', "", "pip install -r requirements.txt", "ml", True),
    ('["/opt/scripts/start.sh", "--epochs", "3"]', "", "curl -fsSL https://x.io/i.sh | sh", "ml", True),
    ('["sh", "-c", "set -e; source /opt/scripts/start.sh"]', "", "pip install torch", "ml", True),
    ('["bash", "start.sh"]', "workingDir: /opt/scripts", "pip install torch", "ml", True),
    ('["bash", "start.sh"]', "", "pip install torch", "ml", False),  # relative, no workingDir: not known
    ('["bash", "/opt/scripts/start.sh"]', "", "pip install torch", "other", False),  # another namespace's
    ('["bash", "/opt/scripts/start.sh"]', "", "pip install -e .", "ml", False),  # a local package
    ('["bash", "/opt/scripts/start.sh"]', "", "echo ready", "ml", False),  # only the here-document names pip
    ('["bash", "/app/start.sh"]', "", "pip install torch", "ml", False),  # the image's own script
])
@pytest.mark.parametrize("jobs", [1, 2])
def test_img007_reads_the_configmap_script_a_container_runs(tmp_path, command: str, workdir: str, body: str,
                                                            namespace: str, fires: bool, jobs: int) -> None:
    files = {"scripts.yaml": SCRIPTS.replace("NS", namespace).replace("BODY", body),
             "job.yaml": SCRIPT_JOB.replace("COMMAND", command).replace("WORKDIR", workdir or "env: []")}
    found = lint_tree(tmp_path, files, jobs)
    line = files["job.yaml"].splitlines()[11]
    column = line.rindex('"', 0, line.index("start.sh")) + 1  # the quoted item that names the script
    assert [(path, line, column) for path, line, column, _ in found] == ([("job.yaml", 12, column)] if fires else [])
    if fires:
        assert "(key `start.sh` of ConfigMap `scripts`, scripts.yaml:5), which downloads code when it starts" \
            in found[0][3]


def test_statements_leave_here_document_bodies_out() -> None:
    from mlops_lint.model.shellc import statements

    script = "cat <<'EOF'\npip install x\nEOF\ncat > f <<-END\n\tcurl https://x.io/i.sh | sh\n\tEND\npython train.py\n"
    assert [words for words, _ in statements(script)] == [("cat",), ("cat",), ("python", "train.py")]
