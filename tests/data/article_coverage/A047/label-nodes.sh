#!/bin/bash
kubectl label nodes -l agentpool=gpunp accelerator=nvidia --overwrite
