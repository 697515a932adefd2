"""A training container writes checkpoints to storage that does not outlive the pod or the node.

## What it does
In training workloads (Job, CronJob, Kubeflow and Volcano jobs, RayJob, JobSet, a
run-to-completion Pod), flags containers whose checkpoints land on:

- an `emptyDir` (on the node's disk, or in RAM with `medium: Memory`) or a generic ephemeral
  volume: both are deleted with the pod;
- a `hostPath`: it stays on one node, and the replacement pod may run on another;
- the container's own filesystem: its writable layer is discarded when the container restarts.

Evidence that a place holds checkpoints: a writable volume mount whose mount path or volume
name mentions checkpoints (`checkpoint` or `ckpt`, any case), or a checkpoint destination the
container names, in an env var (`CHECKPOINT_DIR`, `CKPT_PATH`, `SAVE_CHECKPOINT_DIR` …) or a
command-line flag or setting (`--checkpoint-dir /ckpt`, `--ckpt_path=/ckpt`,
`--checkpoint-file /ckpt/last.pt`, `checkpointer.output_dir=/ckpt`, also inside a `bash -c`
script, line continuations joined), the flags real trainers write their checkpoints under
(Hugging Face Trainer's `--output_dir`, fairseq's `--save-dir`, `--save_dir`, torchtune's
`output_dir=` override of a `tune run` command, whatever the path is called; torchtune's
`checkpointer.checkpoint_dir` is where it reads the model from, not a destination), or any other destination flag or env var (`SCRATCH_DIR`, `--save-path` …) whose path
itself mentions checkpoints (`--scratch-dir=/scratch/checkpoints`). `$(VAR)`, `${VAR}` and
`$VAR` are expanded from the container's literal env values, and relative paths from its
`workingDir`; without one a relative path (`--save_dir ./checkpoints`) is under the image's
WORKDIR (`/` unless the image sets one), which the manifest does not tell: in a container that
mounts no volume it is on the container filesystem wherever WORKDIR is, and is judged so; in one
that mounts volumes it is not judged.
The path is then matched to the mount that holds it by the longest mount-path prefix, as the
kernel resolves it; a path on no mount is on the container filesystem. The finding points at the
mount path, or at the env value or argument that names the destination.

## Why is this bad?
Checkpoints exist to survive the pod: preemption, eviction, a node drain or a spot reclaim ends
it, and the replacement must resume from the last saved step. The article: "persist checkpoints
outside the node so training can recover from eviction or preemption", "Use node-local ephemeral
storage only for reconstructable caches and temporary files", and "Training workloads that can
be preempted must write checkpoints to persistent storage … and recover without relying on
node-local files."

## Example
```yaml
      containers:
      - name: trainer
        env:
        - name: CHECKPOINT_DIR
          value: /scratch/checkpoints
        volumeMounts:
        - name: scratch
          mountPath: /scratch
      volumes:
      - name: scratch
        emptyDir: {}
```

Use instead:
```yaml
      containers:
      - name: trainer
        env:
        - name: CHECKPOINT_DIR
          value: /checkpoints
        volumeMounts:
        - name: checkpoints
          mountPath: /checkpoints
      volumes:
      - name: checkpoints
        persistentVolumeClaim:
          claimName: model-checkpoints
```

## Known problems
- Only names that say *where checkpoints go* count as evidence: a name with `checkpoint`/`ckpt`
  and `dir`, `path`, `folder`, `root`, `location`, `save`, `output`, `store`, `prefix` or `dest`,
  and without `load`, `resume`, `restore`, `pretrain`, `init`, `from`, `source`, `input`; a bare
  `--checkpoint /x` is ambiguous (many tools read a model from it) and is not taken, nor are
  names with `model` (`--model-dir` is where TensorFlow writes checkpoints, and where servers
  read weights). Framework defaults that write checkpoints without saying so (Hugging Face
  `--output_dir /tmp/out`, Lightning's `default_root_dir`) are not recognised unless the path
  mentions checkpoints.
- Paths built at run time (a `valueFrom` env var, a variable the image sets, a relative path
  without `workingDir`) are not followed.
- Init containers (other than native sidecars) are not checked: they typically stage a
  pretrained checkpoint for the trainer to read. Inference workloads are not checked either.
- A trainer that stages checkpoints on local disk and uploads them to object storage itself is
  flagged; suppress the finding with a reason.

## References
- Kubernetes, Volumes (emptyDir, hostPath): https://kubernetes.io/docs/concepts/storage/volumes/
- Kubernetes, Ephemeral volumes: https://kubernetes.io/docs/concepts/storage/ephemeral-volumes/
- AKS, Storage options for applications: https://learn.microsoft.com/azure/aks/concepts-storage
"""

from __future__ import annotations

from mlops_lint.model.k8s import PodSpec
from mlops_lint.model.storage import (EPHEMERAL, NODE_LOCAL, checkpoint_paths, describe_volume, is_read_only,
                                  mentions_checkpoint, mount_for, pod_volumes, volume_storage)
from mlops_lint.rule import POD, Finding, rule

LOST = {
    EPHEMERAL: "it is deleted with the pod, so a preempted or evicted pod loses every checkpoint",
    NODE_LOCAL: "it stays on one node, so a pod rescheduled elsewhere (eviction, node upgrade, scale-down) "
                "finds no checkpoint",
}


@rule(code="STO002", name="checkpoint-on-ephemeral", severity="error", scope=POD, tags=("storage", "checkpoints"))
def check(pod: PodSpec, ctx):
    if pod.workload is None or not pod.workload.is_training:
        return
    volumes = pod_volumes(pod)
    for container in pod.containers:
        if container.is_ephemeral or (container.is_init and not container.is_sidecar):
            continue
        who = f"{container.kind_label} `{container.name}`"
        reported: set[int | str] = set()
        for mount_index, mount in container.volume_mounts:
            name, path = mount.get("name"), mount.get("mountPath")
            _, volume = volumes.get(str(name), (None, None))
            if volume is None or is_read_only(mount, volume) or not (mentions_checkpoint(path) or mentions_checkpoint(name)):
                continue
            storage = volume_storage(volume)
            if storage in LOST:
                reported.add(mount_index)
                yield Finding(
                    mount.value_span("mountPath"),
                    f"{who} mounts checkpoint volume `{name}` at {path} from {describe_volume(volume)}: {LOST[storage]}; "
                    "mount a PersistentVolumeClaim there",
                    node=container.path + ("volumeMounts", mount_index, "mountPath"),
                )
        for evidence in checkpoint_paths(container):
            held = mount_for(container, evidence.path)
            if held is None:
                if evidence.path in reported:
                    continue
                reported.add(evidence.path)
                yield Finding(
                    evidence.span,
                    f"{who} writes checkpoints to {evidence.path} ({evidence.source}), which is on no volume mount: "
                    "the container filesystem is discarded when the container restarts; mount a PersistentVolumeClaim there",
                    node=evidence.node,
                )
                continue
            mount_index, mount = held
            _, volume = volumes.get(str(mount.get("name")), (None, None))
            storage = volume_storage(volume) if volume is not None else None
            if storage not in LOST or mount_index in reported or is_read_only(mount, volume):
                continue
            reported.add(mount_index)
            yield Finding(
                evidence.span,
                f"{who} writes checkpoints to {evidence.path} ({evidence.source}), on volume `{mount.get('name')}` "
                f"mounted at {mount.get('mountPath')} from {describe_volume(volume)}: {LOST[storage]}; "
                "put the checkpoints on a PersistentVolumeClaim",
                node=evidence.node,
            )
