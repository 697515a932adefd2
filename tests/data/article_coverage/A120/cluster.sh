#!/bin/bash
az aks create \
  --resource-group rg \
  --name aks \
  --node-vm-size Standard_D4s_v5
