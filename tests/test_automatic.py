"""What the aks-automatic profile changes in existing rules (issue 37, "AKS Automatic as it
behaves"): RES001/RES002 say what Deployment Safeguards do, GPU010 no longer demands a catch-all
toleration, GPU005 is off (NAP002 judges NodePool taints)."""

from __future__ import annotations

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

REGISTRY = load_registry()
AUTOMATIC = Config(profile="aks-automatic")

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: t:1
        resources:
          limits:
            nvidia.com/gpu: 1
      - name: sidecar
        image: s:1
        resources:
          requests:
            memory: 1Gi
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: serve
spec:
  selector: {}
  template:
    spec:
      containers:
      - name: server
        image: s:1
        resources:
          requests:
            cpu: "1"
"""

PLUGIN = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-device-plugin
  namespace: kube-system
spec:
  selector: {}
  template:
    spec:
      priorityClassName: system-node-critical
      nodeSelector:
        accelerator: nvidia
      containers:
      - name: nvidia-device-plugin
        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.1
        args: [--fail-on-init-error=false]
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            drop: [ALL]
"""


def run(text: str, select: list[str], config: Config | None = None) -> list:
    report = lint(LintRequest(paths=[], config=config or Config(), registry=REGISTRY, select=select,
                              stdin=("deploy.yaml", text.encode())))
    return report.active


def messages(found: list) -> list[tuple[str, int, int, str]]:
    return [(r.rule, r.line, r.column, r.message) for r in found]


def test_res001_res002_say_what_deployment_safeguards_do_on_automatic() -> None:
    found = messages(run(JOB, ["RES001", "RES002"], AUTOMATIC))
    assert found == [
        ("RES001", 12, 9, "container `trainer` has no cpu or memory request: on AKS Automatic, Deployment Safeguards "
                          "set the request to cpu 500m and memory 2Gi with the limit equal to the request, a 2Gi memory "
                          "ceiling that OOMKills a trainer holding a model, batches and data-loader workers"),
        ("RES002", 13, 11, "container `trainer` has no memory limit: on AKS Automatic, Deployment Safeguards set the "
                           "request to memory 2Gi with the limit equal to the request, a 2Gi memory ceiling that "
                           "OOMKills a trainer holding a model, batches and data-loader workers"),
        # a memory request and no cpu: only cpu is filled; the memory limit stays unset (nothing filled)
        ("RES002", 17, 9, "container `sidecar` has no memory limit"),
        ("RES001", 18, 11, "container `sidecar` has no cpu request: on AKS Automatic, Deployment Safeguards set the "
                           "request to cpu 500m with the limit equal to the request"),
    ]


def test_res_messages_unchanged_in_aks_standard() -> None:
    found = messages(run(JOB, ["RES001", "RES002"]))
    assert [m for *_, m in found] == ["container `trainer` has no cpu or memory request",
                                      "container `trainer` has no memory limit",
                                      "container `sidecar` has no memory limit", "container `sidecar` has no cpu request"]


def test_res001_a_serving_container_is_no_trainer() -> None:
    found = messages(run(DEPLOYMENT, ["RES001"], AUTOMATIC))
    assert found == [("RES001", 13, 11, "container `server` has no memory request: on AKS Automatic, Deployment "
                                        "Safeguards set the request to memory 2Gi with the limit equal to the request, "
                                        "a 2Gi memory ceiling that OOMKills a container holding a model, batches and "
                                        "data-loader workers")]


def test_gpu010_demands_no_catch_all_toleration_on_automatic() -> None:
    assert [r.rule for r in run(PLUGIN, ["GPU010"])] == ["GPU010"]  # aks-standard: the article's {operator: Exists}
    assert run(PLUGIN, ["GPU010"], AUTOMATIC) == []
    unhardened = PLUGIN.replace("      priorityClassName: system-node-critical\n", "")
    assert [r.message.split(":")[0] for r in run(unhardened, ["GPU010"], AUTOMATIC)] == [
        "device-plugin DaemonSet `nvidia-device-plugin` has no priorityClassName"]
