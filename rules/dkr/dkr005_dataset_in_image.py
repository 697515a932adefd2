"""A COPY or ADD that puts datasets or checkpoints into the image.

## What it does
Flags each source of a `COPY` or `ADD` (shell and exec form, `--from=<stage>` sources and `ADD`
URLs included) that is a dataset or checkpoint by the `data-patterns`:

- a folder pattern (`data/`) matches a path with a folder of that name (`data`, `./data/`,
  `data/raw/`, `data/train-*.parquet`), except a code or config file inside it
  (`data/prepare.py`, `data/schema.yaml`);
- a file pattern (`*.parquet`) matches the last part of the path, a glob (`COPY *.csv ./`) or a
  URL's path (`ADD https://…/model.safetensors /models/`).

Only stages whose layers end up in an image are judged: the final stage, stages no other stage
uses (other `--target`s) and the stages they are built on. A builder stage that prepares data
and copies only its output onward ships no layer; the `COPY --from=` that carries data into the
final stage is what gets flagged. Here-documents (`COPY <<EOF /etc/app.conf`) are not sources.
The finding points at the source.

## Why is this bad?
Data and checkpoints change far more often than code and are large: every new dataset version
or checkpoint means a new multi-gigabyte image that every node pulls, scale-from-zero gets
slower, and checkpoints written inside the image are lost with the container. The article:
"Store large text and image datasets outside of your base container image and reference them
when needed at runtime", "Keep large datasets, model artifacts, and checkpoints out of
container images", and "Keep datasets and frequently changing checkpoints outside the image".
Mount them from Azure Blob Storage (BlobFuse or NFS), Azure Files or Azure Disk instead.

## Example
```dockerfile
COPY data/ /workspace/data/
COPY checkpoints/step-1000/model.safetensors /workspace/init/
```

Use instead:
```dockerfile
COPY train.py /workspace/
# the dataset and checkpoints come from volumes: --data-dir=/mnt/data --checkpoint-dir=/checkpoints
```

## Options
- `data-patterns` (list of strings): what counts as data or checkpoints. Entries ending in `/`
  are folder names, the others are file-name globs (`fnmatch`, case-insensitive). Default: the
  folders `data/`, `dataset/`, `datasets/`, `checkpoint/`, `checkpoints/`, `ckpt/`, `ckpts/`
  and the files `*.parquet`, `*.csv`, `*.tsv`, `*.jsonl`, `*.arrow`, `*.feather`, `*.tfrecord`,
  `*.tfrecords`, `*.npy`, `*.npz`, `*.h5`, `*.hdf5`, `*.lmdb`, `*.pt`, `*.pth`, `*.ckpt`,
  `*.safetensors`.

## Known problems
- The article's Containerization section also suggests packaging released model weights in
  serving images. Exported serving formats (`*.onnx`, `*.gguf`, TensorRT plans, Triton model
  repositories) are therefore not in the default list; a serving image that bakes
  `*.safetensors` weights on purpose can drop the pattern with `data-patterns` or suppress the
  line with a reason.
- `COPY . .` copies whatever the build context holds; a `data/` folder in it is only kept out by
  `.dockerignore`, which the linter does not read.
- A Python package named `data` (`COPY src/data/ …`) matches the `data/` folder pattern; suppress
  the line or change `data-patterns`.
- Downloads in RUN (`wget`, `azcopy`, `huggingface-cli download`) are not judged.

## References
- Dockerfile reference, COPY: https://docs.docker.com/reference/dockerfile/#copy
- Docker, .dockerignore files: https://docs.docker.com/build/concepts/context/#dockerignore-files
- AKS, storage options for applications: https://learn.microsoft.com/azure/aks/concepts-storage
"""

from fnmatch import fnmatch

from mlops_lint.model.docker import Dockerfile, expand, node_path
from mlops_lint.rule import DOCKERFILE, Finding, rule

DEFAULT_PATTERNS = [
    "data/", "dataset/", "datasets/", "checkpoint/", "checkpoints/", "ckpt/", "ckpts/",
    "*.parquet", "*.csv", "*.tsv", "*.jsonl", "*.arrow", "*.feather", "*.tfrecord", "*.tfrecords", "*.npy", "*.npz",
    "*.h5", "*.hdf5", "*.lmdb", "*.pt", "*.pth", "*.ckpt", "*.safetensors",
]
CODE_SUFFIXES = (".py", ".ipynb", ".sh", ".txt", ".md", ".yaml", ".yml", ".json", ".toml", ".cfg", ".ini", ".sql")


def matching(source: str, patterns: list[str]) -> str | None:
    """The pattern a COPY/ADD source matches, or None."""
    path = source.split("://", 1)[1].split("/", 1)[-1].split("?")[0] if "://" in source else source
    parts = [p for p in path.lower().split("/") if p not in ("", ".")]
    if not parts:
        return None
    is_code = not path.endswith("/") and parts[-1].endswith(CODE_SUFFIXES)
    for pattern in patterns:
        lowered = pattern.lower()
        if lowered.endswith("/"):
            if not is_code and lowered.rstrip("/") in parts:
                return pattern
        elif fnmatch(parts[-1], lowered):
            return pattern
    return None


@rule(code="DKR005", name="dataset-in-image", severity="warning", scope=DOCKERFILE, tags=("dockerfile", "images", "storage"),
      options={"data-patterns": list[str]}, defaults={"data-patterns": DEFAULT_PATTERNS})
def check(dockerfile: Dockerfile, ctx):
    patterns = list(ctx.options["data-patterns"])
    for stage in dockerfile.shipped_stages:
        for ins in stage.instructions:
            if ins.keyword not in ("COPY", "ADD"):
                continue
            if ins.exec_form:
                sources = [(s, ins.args_span) for s in (ins.exec_args or [])[:-1]]
            else:
                sources = [(w.text, w.span) for w in ins.words[:-1] if not w.text.startswith("<<")]
            origin = f" from stage `{ins.flag('from').value}`" if ins.flag("from") is not None else ""
            env = dockerfile.env_before(stage, ins) if any("$" in s for s, _ in sources) else {}
            for number, (source, span) in enumerate(sources):
                resolved = expand(source, env) if "$" in source else source
                pattern = matching(resolved, patterns) if resolved is not None else None
                if pattern is None or span is None:
                    continue
                shown = f"`{source}`" if resolved == source else f"`{source}` (`{resolved}`)"
                yield Finding(
                    span,
                    f"{ins.keyword} bakes {shown}{origin} into the image (data pattern `{pattern}`): datasets and "
                    "checkpoints in the image make every new version a new image for every node to pull",
                    node=node_path(stage, ins, number),
                    fix="mount the data at run time (Azure Blob CSI, Azure Files or Azure Disk) and pass its path to the trainer",
                )
