#!/usr/bin/env bash
# The article: "Enable Azure Monitor managed service for Prometheus and Container Insights".
az aks create --resource-group ml-rg --name ml-aks --enable-azure-monitor-metrics --enable-addons monitoring
