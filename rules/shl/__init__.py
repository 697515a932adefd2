"""SHL: what shell scripts do to the cluster by hand (article: the `kubectl` steps of "Partition A100 and H100 GPUs with MIG", "Provision an AKS GPU node pool")."""
