"""XPL: workloads against the cluster's node pools, across files (pods that can never be placed)."""
