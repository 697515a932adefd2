"""Security rules (SEC001-SEC006): securityContext merging, exemptions and credential detection.

The merge of pod and container ``securityContext`` and the implicit privilege escalation are
tested through the rules on small manifests (lines and messages); SEC006's name and value
classifiers directly, with the ML names that must never fire (``TOKENIZERS_PARALLELISM``,
``MAX_TOKENS``, ``HF_TOKEN_PATH`` …) and a property that no message ever contains the secret.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlops_lint.config import Config
from mlops_lint.engine import run_rules
from mlops_lint.model.security import is_device_plugin_path as exempt
from mlops_lint.registry import load_registry
from mlops_lint.sources.yaml_k8s import load_text
from mlops_lint.rules.sec.sec006_secret_in_env import credential, name_strength, not_a_secret, words
from mlops_lint.rules.sec.sec006_secret_in_env import _PLACEHOLDER


def lint(text: str, *codes: str):
    docs = [load_text(text, "pod.yaml")]
    registry = load_registry()
    rules = [registry.get(code) for code in codes]
    return sorted((r.line, r.rule, r.message) for r, _ in run_rules(docs, {"pod.yaml"}, rules, Config()))


def pod(container_sc: str = "", pod_sc: str = "", extra: str = "") -> str:
    """A Pod manifest; ``pod_sc``/``extra`` go under ``spec`` (2 spaces), ``container_sc`` under the
    container (4 spaces); their own continuation lines carry that indentation already."""
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  {pod_sc}\n  {extra}\n"
            f"  containers:\n  - name: c\n    image: x:1\n    {container_sc}\n")


# ---------------------------------------------------------------------------------------------
# SEC001 / SEC002 / SEC004: container-only fields


@pytest.mark.parametrize("sc,fires,why", [
    ("securityContext: {allowPrivilegeEscalation: false}", False, ""),
    ("securityContext: {allowPrivilegeEscalation: true}", True, "sets `allowPrivilegeEscalation: true`"),
    ("securityContext: {}", True, "defaults to true"),
    ("", True, "defaults to true"),
    ("securityContext: {privileged: true, allowPrivilegeEscalation: false}", False, ""),  # SEC004's alone
    ("securityContext: {privileged: true}", False, ""),
    ("securityContext: {allowPrivilegeEscalation: false, capabilities: {add: [CAP_SYS_ADMIN]}}", True, "CAP_SYS_ADMIN"),
    ("securityContext: {allowPrivilegeEscalation: false, capabilities: {add: [sys_admin]}}", True, "CAP_SYS_ADMIN"),
    ("securityContext: {allowPrivilegeEscalation: false, capabilities: {add: [NET_ADMIN]}}", False, ""),
])
def test_sec001_effective_escalation(sc, fires, why):
    found = lint(pod(sc), "SEC001")
    assert bool(found) == fires
    if fires:
        assert why in found[0][2]


def test_sec001_pod_level_field_does_not_count():
    """allowPrivilegeEscalation exists on containers only; a pod-level key is ignored by Kubernetes."""
    assert lint(pod(pod_sc="securityContext: {allowPrivilegeEscalation: false}"), "SEC001")


def test_sec001_and_sec002_skip_windows_pods_but_sec004_does_not():
    windows = pod("securityContext: {privileged: true}", extra="os: {name: windows}")
    assert lint(windows, "SEC001", "SEC002") == []
    assert [rule for _, rule, _ in lint(windows, "SEC004")] == ["SEC004"]


@pytest.mark.parametrize("drop,fires", [("[ALL]", False), ("[NET_RAW, ALL]", False), ("[all]", True),
                                        ("[NET_RAW]", True), ("[]", True)])
def test_sec002_drop_all_exactly(drop, fires):
    assert bool(lint(pod(f"securityContext: {{capabilities: {{drop: {drop}}}}}"), "SEC002")) == fires


def test_sec004_only_boolean_true():
    assert lint(pod("securityContext: {privileged: false}"), "SEC004") == []
    assert lint(pod("securityContext: {privileged: 'true'}"), "SEC004") == []
    [(line, _, message)] = lint(pod("securityContext: {privileged: true}"), "SEC004")
    assert line == 10 and "container `c` is privileged" in message


# ---------------------------------------------------------------------------------------------
# SEC003: the container overrides the pod


@pytest.mark.parametrize("pod_sc,container_sc,result", [
    ("securityContext: {runAsUser: 1000}", "", None),
    ("securityContext: {runAsNonRoot: true}", "", None),
    ("securityContext: {runAsUser: 0}", "securityContext: {runAsUser: 1000}", None),
    ("securityContext: {runAsNonRoot: true}", "securityContext: {runAsUser: 0}", "its `runAsUser: 0`"),
    ("securityContext: {runAsUser: 0, runAsNonRoot: true}", "", "the pod's `runAsUser: 0`"),
    ("securityContext: {runAsNonRoot: true}", "securityContext: {runAsNonRoot: false}", "its `runAsNonRoot: false`"),
    ("securityContext: {runAsNonRoot: false}", "securityContext: {runAsNonRoot: true}", None),
    ("", "securityContext: {runAsUser: 1000, runAsNonRoot: false}", None),
    ("", "", "neither it nor its pod"),
    ("securityContext: {runAsUser: '{{ .Values.uid }}'}", "", None),
])
def test_sec003_merge(pod_sc, container_sc, result):
    found = lint(pod(container_sc, pod_sc), "SEC003")
    if result is None:
        assert found == []
    else:
        assert len(found) == 1 and result in found[0][2]


def test_sec003_positions_point_at_the_effective_field():
    text = pod("securityContext: {allowPrivilegeEscalation: false}", "securityContext:\n    runAsUser: 0")
    [(line, _, _)] = lint(text, "SEC003")
    assert text.splitlines()[line - 1].strip() == "runAsUser: 0"
    [(line, _, _)] = lint(pod("securityContext: {allowPrivilegeEscalation: false}"), "SEC003")
    assert line == 10  # the container's securityContext key


def test_sec003_user_namespaces_and_windows_users():
    assert lint(pod(extra="hostUsers: false"), "SEC003") == []
    windows = "os: {name: windows}"
    assert lint(pod(pod_sc="securityContext: {windowsOptions: {runAsUserName: ContainerUser}}", extra=windows), "SEC003") == []
    assert lint(pod(pod_sc="securityContext: {windowsOptions: {runAsUserName: ContainerAdministrator}}", extra=windows),
                "SEC003")


# ---------------------------------------------------------------------------------------------
# SEC005: the device plugin exemption


@pytest.mark.parametrize("path,ok", [
    ("/var/lib/kubelet/device-plugins", True), ("/var/lib/kubelet/device-plugins/", True),
    ("//var/lib/kubelet/device-plugins", True), ("/var/lib/kubelet/./device-plugins/kubelet.sock", True),
    ("/var/lib/kubelet/device-plugins/../pods", False), ("/var/lib/kubelet/device-plugins-evil", False),
    ("/var/lib/kubelet", False), ("var/lib/kubelet/device-plugins", False), ("/", False),
])
def test_sec005_exemption(path, ok):
    assert exempt(path) is ok


def test_sec005_reports_each_host_path_volume():
    text = pod(extra="volumes:\n  - {name: a, hostPath: {path: /data}}\n  - {name: b, emptyDir: {}}\n"
                     "  - {name: c, hostPath: {path: /var/lib/kubelet/device-plugins}}")
    found = lint(text, "SEC005")
    assert [(rule, "`a`" in message) for _, rule, message in found] == [("SEC005", True)]


# ---------------------------------------------------------------------------------------------
# SEC006: names, values, formats


def test_words_split_snake_kebab_and_camel_case():
    assert words("HF_TOKEN") == ["HF", "TOKEN"]
    assert words("hfToken") == ["HF", "TOKEN"]
    assert words("wandb-api-key") == ["WANDB", "API", "KEY"]
    assert words("OpenAIAPIKey") == ["OPEN", "AIAPI", "KEY"] or words("OpenAIAPIKey")[-1] == "KEY"


@pytest.mark.parametrize("name,strength", [
    ("HF_TOKEN", "strong"), ("HUGGING_FACE_HUB_TOKEN", "strong"), ("JUPYTER_TOKEN", "strong"),
    ("DB_PASSWORD", "strong"), ("DB_PASS", "strong"), ("MYSQL_PWD", "strong"), ("AZURE_CLIENT_SECRET", "strong"),
    ("WANDB_API_KEY", "strong"), ("AWS_SECRET_ACCESS_KEY", "strong"), ("STORAGE_ACCOUNT_KEY", "strong"),
    ("OPENAI_APIKEY", "strong"), ("SECRET_KEY", "strong"), ("TOKEN_VALUE", "strong"), ("PASSWORD_B64", "strong"),
    ("WANDB_KEY", "weak"), ("SORT_KEY", "weak"), ("BASIC_AUTH", "weak"),
    ("TOKENIZERS_PARALLELISM", None), ("MAX_TOKENS", None), ("MAX_NEW_TOKENS", None), ("HF_TOKEN_PATH", None),
    ("TOKEN_FILE", None), ("SECRET_NAME", None), ("KEY_FILE", None), ("TLS_KEY_PATH", None),
    ("AWS_ACCESS_KEY_ID", None), ("PAD_TOKEN", None), ("EOS_TOKEN", None), ("BOS_TOKEN_ID", None),
    ("RAY_AUTH_MODE", None), ("PASS_DEVICE_SPECS", None), ("PWD", None), ("OAUTH_TOKEN_URL", None),
    ("PASSWORD_AUTH", None), ("NCCL_IB_HCA", None), ("PASSWORDLESS_ENABLED", None),
])
def test_name_strength(name, strength):
    assert name_strength(name) == strength


@pytest.mark.parametrize("value", [
    "", "   ", "true", "0", "1", "none", "$(HF_TOKEN)", "${TOKEN}", "{{ .Values.token }}", "<your-token>",
    "YOUR_API_KEY", "GITHUB_TOKEN", "changeme", "REPLACE_ME", "xxxxxxxx", "********", "/var/run/secrets/token",
    "./creds.json", "key.json", "~/.ssh/id_rsa", "https://vault.example.com/v1/secret", "hf-token-secret", "abc",
])
def test_values_that_are_not_secrets(value):
    assert not_a_secret(value)
    assert credential("API_TOKEN", value) is None


@pytest.mark.parametrize("name,value,what", [
    ("ANYTHING", "hf_" + "Ab3dEfGh1jKlMn0pQrStUvWxYz12345678", "Hugging Face"),
    ("ANYTHING", "ghp_" + "R7w2Kq9ZtLm4Xv8Bn3Yc6Hd1Fs5Gj0Pa2Qe7", "GitHub"),
    ("ANYTHING", "AKIAZ7Q3LMNP4RTV2XWY", "AWS"),
    ("ANYTHING", "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2lnbmF0dXJlLWJ5dGVz", "JSON Web Token"),
    ("ANYTHING", "-----BEGIN RSA PRIVATE KEY-----\nMIIE", "private key"),
    ("CONN", "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=Zm9vYmFyYmF6;EndpointSuffix=core.windows.net",
     "account key"),
    ("CONN", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=r;SharedAccessKey=Zm9vYmFyYmF6cXV4", "account key"),
    ("URL", "postgres://user:S3cret@db:5432/x", "URL with a password"),
    ("URL", "redis://:S3cretPass@redis:6379/0", "URL with a password"),
    ("JDBC", "jdbc:sqlserver://db;user=sa;password=Pa55w0rd!", "password"),
    ("DB_PASSWORD", "hunter2", "credential"),
    ("WANDB_KEY", "3f9a2c71e8b04d56a1f7", "credential"),
])
def test_credentials_found(name, value, what):
    found = credential(name, value)
    assert found is not None and what in found


@pytest.mark.parametrize("name,value", [
    ("HTTP_PROXY", "http://user:pass@example:8080"),
    ("HTTP_PROXY", "http://proxy.corp:3128"),
    ("DATABASE_URL", "postgres://user:$(DB_PASSWORD)@db:5432/x"),
    ("AZURE_STORAGE_CONNECTION_STRING",
     "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;"),
    ("SORT_KEY", "created_at"), ("CACHE_KEY", "v2-imagenet-224"),
    ("HF_TOKEN", "hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
    ("MAX_TOKENS", "4096"), ("PAD_TOKEN", "<pad>"), ("TOKENIZERS_PARALLELISM", "false"),
])
def test_not_credentials(name, value):
    assert credential(name, value) is None


# Random passwords; a run of one character, or a value holding a placeholder word (`xxx`, `todo`,
# `your_`, as SEC006's docs list them), is a placeholder, not a secret.

SECRETS = st.text(alphabet="abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789", min_size=12, max_size=30).filter(
    lambda s: len(set(s)) > 8 and not _PLACEHOLDER.search(s))


@given(SECRETS)
def test_messages_never_contain_the_secret(secret):
    text = pod(f"env:\n    - {{name: DB_PASSWORD, value: '{secret}'}}\n    - {{name: URL, value: 'postgres://u:{secret}@h/d'}}")
    found = lint(text, "SEC006")
    assert len(found) == 2
    for _, _, message in found:
        assert secret not in message


def test_sec006_never_for_value_from_and_points_at_the_value():
    text = pod("env:\n    - name: HF_TOKEN\n      valueFrom: {secretKeyRef: {name: hf, key: token}}\n"
               "    - name: DB_PASSWORD\n      value: hunter2-prod")
    [(line, _, message)] = lint(text, "SEC006")
    assert text.splitlines()[line - 1].strip() == "value: hunter2-prod"
    assert "`DB_PASSWORD`" in message and "hunter2" not in message


# ---------------------------------------------------------------------------------------------
# A KServe predictor's `model:` runs in its ServingRuntime's container (linter.model.kserve)

KSERVE_RUNTIME = """\
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {name: vllm-runtime, namespace: ml-serving}
spec:
  supportedModelFormats:
  - {name: huggingface, autoSelect: true}
  containers:
  - name: kserve-container
    image: vllm/vllm-openai:v0.6.3@sha256:0a3b9fedefe1f61ac4d5a9de9015c0863db27ca0fde2d4e37e6268147980b726
    resources:
      requests: {cpu: "4", memory: 32Gi}
      limits: {memory: 32Gi}
"""
KSERVE_ISVC = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llama, namespace: ml-serving}
spec:
  predictor:
    model:
      modelFormat: {name: huggingface}
      storageUri: hf://meta-llama/Llama-3.1-8B-Instruct
"""
KSERVE_CODES = ("RES001", "RES002", "SEC001", "SEC002", "SEC003")


def kserve_lint(tmp_path, files: dict[str, str], jobs: int = 1) -> list[tuple[str, int, str]]:
    from mlops_lint.engine import LintRequest, lint as lint_paths

    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    report = lint_paths(LintRequest(paths=[tmp_path], config=Config(), registry=load_registry(),
                                    select=list(KSERVE_CODES), cwd=tmp_path, jobs=jobs))
    return sorted((r.path, r.line, r.rule) for r in report.active)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_kserve_model_is_judged_merged_with_its_serving_runtime(tmp_path, jobs: int) -> None:
    # the runtime gives the requests and limits (no RES001/RES002 on the predictor) and its own
    # container's missing securityContext is reported once, on the runtime
    runtime_sec = [("runtime.yaml", 8, "SEC001"), ("runtime.yaml", 8, "SEC002"), ("runtime.yaml", 8, "SEC003")]
    assert kserve_lint(tmp_path, {"runtime.yaml": KSERVE_RUNTIME, "isvc.yaml": KSERVE_ISVC}, jobs) == runtime_sec
    # named by `runtime:`, and a value the predictor sets itself stays the predictor's
    named = KSERVE_ISVC.replace("      storageUri:", "      runtime: vllm-runtime\n      securityContext:"
                                " {allowPrivilegeEscalation: true, capabilities: {drop: [ALL]}, runAsNonRoot: true}\n"
                                "      storageUri:")
    assert kserve_lint(tmp_path, {"runtime.yaml": KSERVE_RUNTIME, "isvc.yaml": named}, jobs) == [
        ("isvc.yaml", 9, "SEC001"), *runtime_sec]


def test_a_kserve_model_without_a_known_runtime_is_judged_alone(tmp_path) -> None:
    # no runtime in the project (or one that serves another format): the predictor's container is all there is
    other = KSERVE_RUNTIME.replace("name: huggingface", "name: sklearn")
    found = kserve_lint(tmp_path, {"runtime.yaml": other, "isvc.yaml": KSERVE_ISVC})
    assert [f for f in found if f[0] == "isvc.yaml"] == [("isvc.yaml", 7, code) for code in KSERVE_CODES]
# SEC007: host namespaces and host ports


@pytest.mark.parametrize("extra, container, found", [
    ("hostNetwork: true", "", [(6, "network namespace (`hostNetwork: true`)")]),
    ("hostPID: true", "", [(6, "process namespace (`hostPID: true`)")]),
    ("hostIPC: true", "", [(6, "IPC namespace (`hostIPC: true`)")]),
    ("hostNetwork: false", "", []),
    ('hostPID: "true"', "", []),  # not a boolean: the schema rule's finding
    ("", "ports: [{containerPort: 8080, hostPort: 8080}]", [(10, "binds port 8080 of the node")]),
    ("", "ports: [{containerPort: 8080, hostPort: 0}]", []),
    ("", "ports: [{containerPort: 8080}]", []),
    # with the host network, the ports are the node's already: one finding, not two
    ("hostNetwork: true", "ports: [{containerPort: 8080, hostPort: 8080}]", [(6, "network namespace")]),
])
def test_sec007_fields(extra: str, container: str, found: list) -> None:
    results = lint(pod(container_sc=container, extra=extra), "SEC007")
    assert [(line, rule) for line, rule, _ in results] == [(line, "SEC007") for line, _ in found]
    assert all(text in message for (_, _, message), (_, text) in zip(results, found))


def test_sec007_columns_and_profile_severity() -> None:
    from mlops_lint.engine.selection import enabled_rules

    text = pod(extra="hostPID: true", container_sc="ports: [{containerPort: 80, hostPort: 80}]")
    docs = [load_text(text, "pod.yaml")]
    meta = load_registry().get("SEC007")
    results = sorted((r for r, _ in run_rules(docs, {"pod.yaml"}, [meta], Config())), key=lambda r: r.line)
    assert [(r.line, r.column, r.severity) for r in results] == [(6, 12, "warning"), (10, 43, "warning")]
    automatic = Config(profile="aks-automatic")
    assert "SEC007" in [m.code for m in enabled_rules(load_registry(), automatic, ["ALL"])]
    results = [r for r, _ in run_rules(docs, {"pod.yaml"}, [meta], automatic)]
    assert sorted(r.severity for r in results) == ["error", "error"]


def test_sec007_leaves_daemonsets_alone() -> None:
    daemonset = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: exporter}
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      hostNetwork: true
      containers: [{name: c, image: x:1, ports: [{containerPort: 9400, hostPort: 9400}]}]
"""
    assert lint(daemonset, "SEC007") == []
    assert [rule for _, rule, _ in lint(daemonset.replace("DaemonSet", "Deployment"), "SEC007")] == ["SEC007"]


@pytest.mark.parametrize("field", ["hostIPC", "hostPID", "hostNetwork"])
def test_sec007_leaves_a_template_without_containers_alone(field: str) -> None:
    # another linter's test input (a Deployment whose template sets only the field, no container):
    # no pod is made of it; with one container it is a workload and is judged
    fragment = f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: app}}
spec:
  template:
    spec:
      {field}: true
"""
    assert lint(fragment, "SEC007") == []
    workload = fragment + "      containers: [{name: c, image: x:1}]\n"
    assert [(line, rule) for line, rule, _ in lint(workload, "SEC007")] == [(8, "SEC007")]


# ---------------------------------------------------------------------------------------------
# SEC008: in-tree Azure provisioners

STORAGE_CLASS = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: sc}\nprovisioner: PROVISIONER\n"


@pytest.mark.parametrize("provisioner, csi", [
    ("kubernetes.io/azure-disk", "disk.csi.azure.com"),
    ("kubernetes.io/azure-file", "file.csi.azure.com"),
    ("disk.csi.azure.com", None),
    ("file.csi.azure.com", None),
    ("kubernetes.io/aws-ebs", None),  # another cloud's plugin: not this rule's
    ("Kubernetes.io/azure-disk", None),  # provisioner names are case-sensitive: no plugin answers it
])
def test_sec008_provisioners(provisioner: str, csi: str | None) -> None:
    results = lint(STORAGE_CLASS.replace("PROVISIONER", provisioner), "SEC008")
    if csi is None:
        assert results == []
        return
    ((line, rule, message),) = results
    assert (line, rule) == (4, "SEC008") and f"`{provisioner}`" in message and f"`{csi}`" in message


def test_sec008_position_and_profile() -> None:
    docs = [load_text(STORAGE_CLASS.replace("PROVISIONER", "kubernetes.io/azure-disk"), "sc.yaml")]
    meta = load_registry().get("SEC008")
    (standard,) = [r for r, _ in run_rules(docs, {"sc.yaml"}, [meta], Config())]
    assert (standard.line, standard.column, standard.severity) == (4, 14, "warning")
    (automatic,) = [r for r, _ in run_rules(docs, {"sc.yaml"}, [meta], Config(profile="aks-automatic"))]
    assert automatic.severity == "error" and "Deployment Safeguards" in automatic.message
    other = STORAGE_CLASS.replace("storage.k8s.io/v1", "example.com/v1").replace("PROVISIONER", "kubernetes.io/azure-disk")
    assert lint(other, "SEC008") == []  # another group's StorageClass kind


# ---------------------------------------------------------------------------------------------
# SEC009: labels in AKS's reserved domain

RESERVED_POD = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n    KEY: x\nspec:\n  nodeSelector: {kubernetes.azure.com/agentpool: gpu}\n  containers:\n  - {name: c, image: x:1}\n"


@pytest.mark.parametrize("key, fires", [
    ("kubernetes.azure.com/team", True),
    ("kubernetes.azure.com/managedby", True),
    ("team.kubernetes.azure.com/x", False),  # another domain (a subdomain is not the reserved prefix)
    ("kubernetes.azure.com", False),  # a name without the domain's slash
    ("ml.example.com/team", False),
])
def test_sec009_label_keys(key: str, fires: bool) -> None:
    results = lint(RESERVED_POD.replace("KEY", key), "SEC009")
    assert [rule for _, rule, _ in results] == (["SEC009"] if fires else [])
    if fires:
        assert results[0][0] == 6 and f"`{key}`" in results[0][2]


def test_sec009_position_and_profile() -> None:
    docs = [load_text(RESERVED_POD.replace("KEY", "kubernetes.azure.com/team"), "pod.yaml")]
    meta = load_registry().get("SEC009")
    (standard,) = [r for r, _ in run_rules(docs, {"pod.yaml"}, [meta], Config())]
    assert (standard.line, standard.column, standard.severity) == (6, 5, "warning")
    (automatic,) = [r for r, _ in run_rules(docs, {"pod.yaml"}, [meta], Config(profile="aks-automatic"))]
    assert automatic.severity == "error" and "Deployment Safeguards" in automatic.message


def test_sec007_leaves_control_plane_static_pods_alone() -> None:
    # kubeadm's kube-apiserver static pod: the node's network is what it serves (corpus: checkov's
    # k8s_utf16.yaml); the same Pod outside kube-system or without the label is judged
    static = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-apiserver\n  namespace: kube-system\n"
              "  labels: {component: kube-apiserver, tier: control-plane}\nspec:\n  hostNetwork: true\n"
              "  containers:\n  - name: kube-apiserver\n    image: registry.k8s.io/kube-apiserver:v1.31.1\n")
    assert lint(static, "SEC007") == []
    other = static.replace("namespace: kube-system", "namespace: ml")
    assert [(line, rule) for line, rule, _ in lint(other, "SEC007")] == [(8, "SEC007")]
    unlabelled = static.replace("tier: control-plane", "tier: backend")
    assert [(line, rule) for line, rule, _ in lint(unlabelled, "SEC007")] == [(8, "SEC007")]


NETWORK_POD = """apiVersion: v1
kind: Pod
metadata: {name: boot-server}
spec:
  hostNetwork: true
  hostPID: true
  containers:
  - name: server
    image: IMAGE
    COMMAND
    ports: [{containerPort: 67, hostPort: 67, protocol: UDP}]
"""


@pytest.mark.parametrize("image, command, network", [
    ("quay.io/someone/dhcpd:4.4", "", True),  # a DHCP server answers broadcasts on the node's link
    ("docker.io/networkboot/dhcpd", "", True),
    ("myacr.azurecr.io/infra/dnsmasq-alpine:2.90", "", True),  # a variant of the repository
    ("registry.k8s.io/dns/k8s-dns-node-cache:1.23.1", "", True),
    ("docker.io/calico/node:v3.28.0", "", True),  # the end of the path: `node` alone says too little
    ("alpine:3.20", "command: [/usr/sbin/dnsmasq, --keep-in-foreground]", True),  # the program it starts
    ("nginx:1.27", "", False),  # a web server reaches its clients through a Service
    ("myacr.azurecr.io/team/node:1.0", "", False),
    ("myacr.azurecr.io/dhcpdump-exporter:1.0", "", False),  # a name that only begins with one
    ("nvcr.io/nvidia/pytorch:24.05-py3", "command: [torchrun, train.py]", False),
])
def test_sec007_network_services_keep_the_node_network(image: str, command: str, network: bool) -> None:
    """A DHCP/PXE server, a node-local DNS cache or a CNI agent does the node's networking: its
    hostNetwork and host ports are what it is for (corpus: deepops' dhcpd Pod); its hostPID is
    still reported, and every other pod is judged as before."""
    found = lint(NETWORK_POD.replace("IMAGE", image).replace("COMMAND", command), "SEC007")
    expected = [(6, "process namespace")] if network else [(5, "network namespace"), (6, "process namespace")]
    assert [(line, rule) for line, rule, _ in found] == [(line, "SEC007") for line, _ in expected]
    assert all(text in message for (_, _, message), (_, text) in zip(found, expected))
    without_host_network = NETWORK_POD.replace("  hostNetwork: true\n", "").replace("IMAGE", image).replace(
        "COMMAND", command)
    ports = [line for line, _, message in lint(without_host_network, "SEC007") if "binds port 67" in message]
    assert ports == ([] if network else [10])


def test_sec007_leaves_device_plugins_of_other_kinds_alone() -> None:
    """A device plugin run as a Deployment (it mounts the kubelet's device-plugin directory) is a
    node agent, as a DaemonSet is; the same pod without the mount is judged."""
    plugin = """apiVersion: apps/v1
kind: Deployment
metadata: {name: rdma-plugin}
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      hostNetwork: true
      containers:
      - name: plugin
        image: myacr.azurecr.io/rdma-plugin:1.0
        volumeMounts: [{name: dp, mountPath: /var/lib/kubelet/device-plugins}]
      volumes:
      - {name: dp, hostPath: {path: /var/lib/kubelet/device-plugins}}
"""
    assert lint(plugin, "SEC007") == []
    other = plugin.replace("path: /var/lib/kubelet/device-plugins}", "path: /var/run/plugin}")
    assert [(line, rule) for line, rule, _ in lint(other, "SEC007")] == [(9, "SEC007")]


@pytest.mark.parametrize("container", ["securityContext: {privileged: true}",
                                       "securityContext: {privileged: true}\n    ports: [{containerPort: 80, hostPort: 80}]"])
def test_sec007_privileged_pod_host_namespaces_are_sec004s_finding(container: str) -> None:
    # one cause, one finding: a privileged container has the node already (corpus: rook-ceph-tools)
    text = pod(container_sc=container, extra="hostNetwork: true\n  hostPID: true")
    assert [(line, rule) for line, rule, _ in lint(text, "SEC004", "SEC007")] == [(11, "SEC004")]


def test_sec007_privileged_pod_keeps_its_host_ports() -> None:
    text = pod(container_sc="securityContext: {privileged: true}\n    ports: [{containerPort: 80, hostPort: 80}]")
    assert [(line, rule) for line, rule, _ in lint(text, "SEC004", "SEC007")] == [(10, "SEC004"), (11, "SEC007")]
