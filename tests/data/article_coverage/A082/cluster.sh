#!/usr/bin/env bash
az aks create --resource-group ml-rg --name ml-aks --enable-oidc-issuer --generate-ssh-keys
