"""GPU: scheduling GPU workloads (article: "Schedule GPU workloads", "Partition … with MIG", "Isolate GPU workloads")."""
