"""OBS: monitoring GPU and training workloads (article: "Monitor GPU utilization and training throughput")."""
