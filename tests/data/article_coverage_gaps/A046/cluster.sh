#!/bin/bash
az aks nodepool add -g rg --cluster-name aks --name gpunp --mode User --node-vm-size Standard_D8s_v5 --enable-cluster-autoscaler --min-count 0 --max-count 4 --labels accelerator=nvidia --node-taints sku=gpu:NoSchedule
