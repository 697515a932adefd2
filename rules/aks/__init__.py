"""AKS: node pools and the cluster autoscaler (article: "Provision an AKS GPU node pool", "Configure cluster autoscaling")."""
