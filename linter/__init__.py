"""mlops-lint: a policy and compliance linter for ML workloads on Azure Kubernetes Service."""

__version__ = "0.1.0"
