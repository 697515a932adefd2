#!/bin/bash
az aks update \
  --resource-group rg \
  --name aks \
  --cluster-autoscaler-profile \
    scan-interval=20s \
    scale-down-unneded-time=10m
