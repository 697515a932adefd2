"""Distributed training and NCCL: PyTorchJob/TFJob replicas, NCCL environment, NetworkPolicies among replicas."""
