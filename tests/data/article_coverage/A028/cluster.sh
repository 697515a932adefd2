#!/usr/bin/env bash
az aks create --resource-group ml-rg --name ml-aks --network-plugin azure --generate-ssh-keys
