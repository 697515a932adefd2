"""The kinds rules look up across files (:data:`REFERENCE_KINDS`), apart from the index that
holds them: the survey and the registry need the names on every run, a run whose results all
come from the cache never builds an index (and never imports the models it is built from)."""

# Kinds that rules look up across files. A parallel run indexes only these (each worker parses
# its own files, and only files that mention one of these kinds are shared with every worker);
# a lookup of any other kind there raises, so a new cross-file rule cannot silently see less.
REFERENCE_KINDS = frozenset({
    "LimitRange",  # container defaults
    "StorageClass", "PersistentVolumeClaim", "PersistentVolume",  # storage and reclaim policies
    "LocalQueue", "ClusterQueue", "ResourceFlavor", "Cohort", "Queue", "PriorityClass",  # queues
    "WorkloadPriorityClass",  # Kueue's workload priorities (the kueue.x-k8s.io/priority-class label)
    "Topology",  # Kueue's topology levels, for the topology-aware scheduling annotations (QUE017)
    "NetworkPolicy",  # distributed training traffic
    "PodMonitor", "ServiceMonitor",  # observability
    "ClusterPolicy",  # the GPU Operator's device plugin and DCGM exporter (DaemonSets reach GPU009 as facts)
    "GPUCluster",  # the GPU Operator's DRA configuration, which refuses to run beside a ClusterPolicy (GPU013)
    "CustomResourceDefinition",  # schemas of custom resources
    "ResourceClaimTemplate", "ResourceClaim", "DeviceClass",  # GPUs through Dynamic Resource Allocation
    "NodePool",  # node auto-provisioning (Karpenter) pools of the cluster model
    "TrainingRuntime", "ClusterTrainingRuntime",  # the pods a Kubeflow Trainer v2 TrainJob runs
    "ServingRuntime", "ClusterServingRuntime",  # the container a KServe predictor's model runs in
    "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",  # the project's admission policies (ADM001)
    "ValidatingPolicy",  # Kyverno's CEL admission policies (ADM001)
    "Namespace",  # namespace labels, for the admission policies' namespaceSelector
    "PodDisruptionBudget",  # the budgets that keep model-serving replicas up through drains (REL003)
    "Configuration",  # Kueue's manager Configuration: the integrations it enables (linter.model.kueueconfig)
    "ConfigMap",  # start scripts a container runs from a mounted ConfigMap (IMG007)
})
