"""A model server without a readiness or liveness probe.

## What it does
Flags the model-server containers of a Deployment or StatefulSet that serves a model (a container
running a model-server image such as vLLM, Triton, TensorFlow Serving, TorchServe, TGI or Ollama,
or a command that starts one: `vllm serve`, `tritonserver`, `python -m vllm.entrypoints…`) when
the container has no `readinessProbe` or no `livenessProbe`. One finding per container names what
is missing and, for a known server, its health endpoint; it points at the container's name.

A LeaderWorkerSet that serves a model (vLLM, SGLang or TensorRT-LLM over several nodes) is
judged on its leader: the leader's server container answers the requests, and the workers only
run the engine's shards for it (without a `leaderTemplate` every pod runs the one template, and
its server container is judged).

Other containers of the pod, other Deployments (web front ends, controllers, demos), Jobs and
training workloads are not judged. Two serving kinds are left out because their controllers
write the probes: KServe InferenceServices (in serverless mode Knative's queue-proxy probes the
predictor, and a `model:` predictor runs its ServingRuntime's container, probes included) and
KubeRay RayServices (KubeRay injects readiness and liveness probes into the head and worker
containers, and the workers' readiness checks Ray Serve's proxy).

## Why is this bad?
The article links AKS's resiliency and reliability practices for what keeps a pipeline up, and
AKS Deployment Safeguards (on by default in AKS Automatic) require readiness and liveness probes
on every container. A model server needs both more than most: it listens on its port minutes
before the weights are loaded, so without a readiness probe the Service sends requests to a replica
that can only fail them after every rollout, restart and scale-up; and a server whose CUDA context
died or whose engine hung keeps its port open, so without a liveness probe it holds its GPU and
its share of the traffic until someone notices.

## Example
```yaml
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.3
        ports: [{containerPort: 8000}]
```

Use instead:
```yaml
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.3
        ports: [{containerPort: 8000}]
        readinessProbe:
          httpGet: {path: /health, port: 8000}
          periodSeconds: 10
        livenessProbe:
          httpGet: {path: /health, port: 8000}
          initialDelaySeconds: 300
          periodSeconds: 30
```

## Known problems
- The endpoint and the delays depend on the server and the model's load time: there is no
  automatic fix. A `startupProbe` does not replace either probe. The hint names a known server's
  health path and port: its default port, or the one port the container declares instead (a
  `--port` flag moved it); with several other ports declared, the path only.
- A serving image the linter does not know as a model server is not judged.

## References
- Kubernetes, Configure liveness, readiness and startup probes: https://kubernetes.io/docs/tasks/configure-pod-container/configure-liveness-readiness-startup-probes/
- AKS, Deployment safeguards: https://learn.microsoft.com/azure/aks/deployment-safeguards
- AKS, Resiliency and reliability best practices: https://learn.microsoft.com/azure/aks/best-practices-app-cluster-reliability
"""

from mlops_lint.model.serving import long_running_server, server_image, server_program, serves_requests
from mlops_lint.rule import CONTAINER, Finding, rule

# health endpoints of the servers whose image says which one it is (path, port)
HEALTH = {
    "vllm/vllm-openai": ("/health", 8000), "nvidia/tritonserver": ("/v2/health/ready", 8000),
    "huggingface/text-generation-inference": ("/health", 80), "huggingface/text-embeddings-inference": ("/health", 80),
    "tensorflow/serving": ("/v1/models/<model>", 8501), "pytorch/torchserve": ("/ping", 8080),
    "ollama/ollama": ("/", 11434), "lmsysorg/sglang": ("/health", 30000), "seldonio/mlserver": ("/v2/health/ready", 8080),
}
PROBES = ("readinessProbe", "livenessProbe")


@rule(code="REL001", name="serving-probes-missing", severity="warning", scope=CONTAINER, tags=("reliability", "serving"))
def check(container, ctx):
    if container.field != "containers":
        return
    workload = container.pod.workload
    if workload is None or long_running_server(workload) is None or not serves_requests(container.pod):
        return
    image = server_image(container.image)
    if image is None and server_program(container) is None:
        return  # a sidecar of the model server
    missing = [p for p in PROBES if not isinstance(container.body.get(p), dict)]
    if not missing:
        return
    known = HEALTH.get(image or "")
    where = ""
    if known:
        port = _port(container, known[1])
        where = f" (this server answers on `{known[0]}`" + (f", port {port})" if port else ")")
    yield Finding(
        container.span,
        f"model server `{container.name}` of {workload.kind} `{workload.obj.name}` has no "
        f"{' and no '.join(f'`{p}`' for p in missing)}: "
        + ("the Service sends requests to replicas still loading the model, " if "readinessProbe" in missing else "")
        + ("a hung server keeps its GPU and its traffic until restarted by hand, " if "livenessProbe" in missing else "")
        + "and AKS Deployment Safeguards require both",
        node=container.path + ("name",),
        fix=f"add {' and '.join(f'`{p}`' for p in missing)} on the server's health endpoint{where}",
    )


def _port(container, default: int) -> int | None:
    """The port the server listens on: its default when the container declares it or no port,
    the one port it declares (a `--port` moved it), else None (several, none the default)."""
    ports = container.body.get("ports")
    declared = [p.get("containerPort") for p in ports if isinstance(p, dict)] if isinstance(ports, list) else []
    declared = [p for p in declared if isinstance(p, int) and not isinstance(p, bool)]
    if not declared or default in declared:
        return default
    return declared[0] if len(declared) == 1 else None
