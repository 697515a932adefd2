"""A KAITO tuning Workspace downloads its dataset from a public URL.

## What it does
Flags each entry of a KAITO `Workspace`'s `tuning.input.urls` (`kaito.sh/v1alpha1` and
`v1beta1`) that is an `http`/`https` URL on a publicly reachable host. Hosts inside the cluster
or a private network are not flagged: `localhost`, `*.svc`, `*.cluster.local`, `*.internal`,
Azure Private Link names (`*.privatelink.*`) and private IP addresses. A URL that carries an
Azure SAS token (`sig=` in the query) is flagged with a note: the token is a credential written
into the manifest. Values filled in later (`${DATASET_URL}`, `{{ … }}`) are not judged. The
finding points at the URL.

## Why is this bad?
KAITO fetches `urls` anonymously when the tuning job starts: whatever the URL serves that day is
what the model is tuned on, nothing records its version, and the dataset has to be public (or
carry its access token in the manifest). The article's example tunes "using a publicly
accessible dataset", then: "For production, store the training dataset in an approved Azure
storage account, use private access and workload identity where supported", and "Treat the
workspace manifest, input dataset version, preset version, adapter configuration, and output
image digest as one versioned training record."

## Example
```yaml
tuning:
  input:
    urls:
    - https://huggingface.co/datasets/yahma/alpaca-cleaned/resolve/main/alpaca_data_cleaned.json
```

Use instead:
```yaml
tuning:
  input:
    volumeSource:
      persistentVolumeClaim:
        claimName: alpaca-cleaned-2024-06   # Azure Files/Blob, private endpoint
```

## Known problems
- A public host that requires authentication anyway (a Hugging Face gated dataset) is still
  flagged: the URL form gives KAITO no governed identity to use.
- `inference.adapters[].source.urls` are not checked here.

## References
- KAITO, fine-tuning input and output: https://github.com/kaito-project/kaito/blob/main/docs/tuning/README.md
- Azure Storage, private endpoints: https://learn.microsoft.com/azure/storage/common/storage-private-endpoints
"""

from __future__ import annotations

import ipaddress
from urllib.parse import parse_qs, urlsplit

from mlops_lint.model.document import K8sObject
from mlops_lint.model.k8s import is_templated
from mlops_lint.model.tree import dig
from mlops_lint.rule import Kind, Finding, rule

PRIVATE_SUFFIXES = (".svc", ".cluster.local", ".internal", ".local", ".localdomain")


def public_host(url: str) -> str | None:
    """The host of an http(s) URL when it is publicly reachable; None otherwise."""
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").lower()
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not host:
        return None
    if host == "localhost" or host.endswith(PRIVATE_SUFFIXES) or ".privatelink." in host or "." not in host:
        return None  # in-cluster names (svc, svc.cluster.local) and single-label hosts are private
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    return None if (address.is_private or address.is_loopback or address.is_link_local) else host


@rule(code="KAI002", name="kaito-input-public-url", severity="warning", scope=Kind("Workspace"),
      tags=("kaito", "supply-chain"))
def check(obj: K8sObject, ctx):
    if obj.group != "kaito.sh":
        return
    urls = dig(obj.body, "tuning", "input", "urls")
    if not isinstance(urls, list):
        return
    for index, url in enumerate(urls):
        if not isinstance(url, str) or is_templated(url):
            continue
        host = public_host(url)
        if host is None:
            continue
        try:
            signed = "sig" in parse_qs(urlsplit(url).query)
        except ValueError:
            signed = False
        token = "; its SAS token is a credential written into the manifest" if signed else ""
        yield Finding(
            urls.item_span(index),
            f"Workspace `{obj.name}` tunes on a dataset downloaded from the public host {host}{token}: the data is "
            "unversioned and ungoverned; store it in an approved Azure storage account and mount it with "
            "`tuning.input.volumeSource` (private access, workload identity)",
            node=("tuning", "input", "urls", index),
        )
