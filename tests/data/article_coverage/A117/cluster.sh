#!/bin/bash
az aks create -g rg --name aks --node-vm-size Standard_D4s_v5 --node-count 2
az aks nodepool add -g rg --cluster-name aks --name gpunp --mode User --node-vm-size Standard_NC24ads_A100_v4 --labels accelerator=nvidia --node-taints sku=gpu:NoSchedule --enable-cluster-autoscaler --min-count 0 --max-count 8
