#!/usr/bin/env bash
az aks create --resource-group ml-rg --name ml-aks --node-vm-size Standard_D4s_v5 --generate-ssh-keys
