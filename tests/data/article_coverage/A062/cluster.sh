#!/usr/bin/env bash
az aks nodepool add --resource-group ml-rg --cluster-name ml-aks --name gpunp --node-vm-size Standard_NC4as_T4_v3 --node-taints sku=gpu:NoSchedule --labels accelerator=nvidia --gpu-driver none
