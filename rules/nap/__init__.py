"""NAP: AKS Automatic and node auto-provisioning (Karpenter NodePools, what NAP does to pods)."""
