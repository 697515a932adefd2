"""Paragraphs several rules' docs share, written once: a rule docstring line that is only
``{{name}}`` stands for the paragraph ``name`` (expanded by ``linter.rule.rule`` into
``RuleMeta.doc``, so ``explain``, SARIF help and docs/rules/ read the whole text).

They describe the engine's shared models (which objects carry pod views, how placement is
judged, which DRA claims count as GPUs): when a model changes, its paragraph changes here once.
"""

from __future__ import annotations

import re

PARTS = {
    "pod-views": (
        """It reads every pod view: the Kubernetes workloads, Kubeflow Training Operator jobs and Trainer v2
runtimes and TrainJobs, JobSets, Volcano Jobs, KubeRay clusters, jobs (their submitter too) and
services, LeaderWorkerSets, KAITO `inference.template` (Workspaces and InferenceSets), KServe
InferenceServices, ServingRuntimes and LLMInferenceServices, NVIDIA Dynamo DynamoGraphDeployments,
and any other object's pod template read generically (README, supported kinds)."""
    ),
    "dra-gpus": (
        """GPUs taken through Dynamic Resource Allocation count: a container using a resource claim whose
`ResourceClaimTemplate` or `ResourceClaim` names the `gpu.nvidia.com` device class (or a project
`DeviceClass` selecting that driver) is a GPU container."""
    ),
    "placement": (
        """Placement is judged where the cluster will put the pod: a queued workload gets what each Kueue
`ResourceFlavor` it may be admitted to injects (`nodeLabels` into its nodeSelector, `tolerations`
into its tolerations; with several flavors, a finding must hold for every one; of a ClusterQueue
written in several variant files, a variant that does not cover every resource the pod asks for
cannot admit it and counts only when none does, and a flavor is taken from beside its variant; a
workload whose framework the project's Kueue `Configuration` leaves out of `integrations.frameworks`
is not admitted by Kueue and is placed as written, QUE019's finding); a KAITO `Workspace`'s (or
`InferenceSet`'s) inference pods carry the tolerations KAITO appends (`nvidia.com/gpu` and
`sku=gpu`, `NoSchedule`); node auto-
provisioning `NodePool`s (`karpenter.sh/v1`) are pools of the cluster model with their template
labels, Karpenter's labels (`karpenter.sh/nodepool`, `node.kubernetes.io/instance-type`,
`karpenter.azure.com/sku-*`), taints and the VM sizes their requirements allow; and a pod asking for
a GPU, a MIG profile or DRA GPUs is judged only on the pools that can offer it, when its selection
reaches one (a pool made with `--gpu-instance-profile` offers that MIG profile). Where a cluster
of the project uses node auto-provisioning or AKS Automatic, nodes it does not describe may
appear; a label that only the pools of a Standard cluster beside it set (`--labels`,
`node_labels`) keeps a pod to that cluster's pools."""
    ),
}

_INCLUDE = re.compile(r"^\{\{([a-z-]+)\}\}$", re.M)


def expand(doc: str) -> str:
    """``doc`` with each ``{{name}}`` line replaced by its paragraph (an unknown name raises: a
    typo must not reach the docs)."""
    if "{{" not in doc:
        return doc
    return _INCLUDE.sub(lambda match: PARTS[match.group(1)], doc)
