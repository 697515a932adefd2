#!/bin/bash
az aks nodepool add -g rg --cluster-name aks --name gpunp --mode User --node-vm-size Standard_NC24ads_A100_v4 --node-count 3 --labels accelerator=nvidia --node-taints sku=gpu:NoSchedule
