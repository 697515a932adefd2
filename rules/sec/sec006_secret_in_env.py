"""A credential written in plain text as an environment variable's `value`.

## What it does
Flags an `env` entry of any container (init, sidecar and ephemeral ones included) whose literal
`value` is a credential:

- a known token format, whatever the variable's name: Hugging Face (`hf_…`), GitHub (`ghp_…`,
  `github_pat_…`), OpenAI-style (`sk-…`), AWS access keys (`AKIA…`), Google API keys, Slack,
  GitLab, npm and Stripe tokens, JSON Web Tokens, PEM private keys;
- a connection string or URL that embeds a secret: `AccountKey=`, `SharedAccessKey=`,
  `SharedAccessSignature=`, `Password=`/`Pwd=` in a `;`-separated string, a SAS `sig=`
  parameter, or a password in a URL (`postgres://user:pass@host`);
- a value under a credential-looking name. The name is split into words (`HF_TOKEN`,
  `hfToken`, `wandb-api-key`), and its last credential word must end the name or be followed only
  by words that keep it a secret (`_VALUE`, `_STRING`, `_B64`, `_KEY`): `PASSWORD`, `PASSWD`,
  `PASSPHRASE`, `SECRET`, `TOKEN`, `CREDENTIALS`, `API_KEY`, `ACCESS_KEY`, `SECRET_KEY`,
  `PRIVATE_KEY`, `ACCOUNT_KEY`, `CLIENT_SECRET`, a final `PASS` or `X_PWD`. So `HF_TOKEN_PATH`,
  `TOKEN_FILE`, `SECRET_NAME`, `KEY_FILE` and `AWS_ACCESS_KEY_ID` are references, not secrets;
  `TOKENIZERS_PARALLELISM` and `MAX_TOKENS` name no credential; tokenizer special tokens
  (`PAD_TOKEN`, `EOS_TOKEN`) are not credentials. A name ending in a bare `KEY` or `AUTH`
  (`WANDB_KEY`, `SORT_KEY`) counts only when the value looks random (16 or more characters mixing
  letters and digits, with high entropy).

Values that cannot be a credential are skipped: empty values, placeholders (`$(VAR)`, `${VAR}`,
`{{ … }}`, `<token>`, `YOUR_TOKEN`, `changeme`, `xxxx`, an all-capitals variable name), booleans
and switches (`true`, `0`, `1`, `none`), paths and file names (`/var/run/secrets/token`,
`key.json`), URLs without credentials, URLs whose host is a documentation name (`user:pass@example.com`,
RFC 2606), the Azure Storage emulator's published account (`AccountName=devstoreaccount1`), and
names of Secrets (`hf-token-secret`). Entries set
through `valueFrom` are never flagged. The finding points at the value and never prints it.

{{pod-views}}

## Why is this bad?
A credential in a manifest is in every clone of the repository, every CI log that prints the
manifest, every `kubectl get -o yaml` and in etcd as plain text, readable by anyone who can read
the Deployment or Job. It cannot be rotated without a redeploy, and one leaked Hugging Face,
storage or registry token exposes models and datasets. The article asks to "use private access
and workload identity where supported" for training data, and to keep model, data and pipeline
security controls in place; AKS recommends Kubernetes Secrets (or the Secrets Store CSI driver
with Azure Key Vault) and workload identity instead of literal credentials.

## Example
```yaml
        env:
        - name: HF_TOKEN
          value: hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789
```

Use instead:
```yaml
        env:
        - name: HF_TOKEN
          valueFrom:
            secretKeyRef:
              name: huggingface
              key: token
```

## Known problems
Credentials in ConfigMaps, `args`, or files baked into images are not seen. Weak or demo
passwords in examples (`admin`, `minioadmin`) are reported like real ones: they are still
credentials in plain text. A credential-named variable holding a non-secret literal (a token
*type*, a username) is reported; suppress it with a reason.

## References
- Kubernetes, Secrets (using Secrets as environment variables): https://kubernetes.io/docs/concepts/configuration/secret/
- AKS, Use the Azure Key Vault provider for Secrets Store CSI Driver: https://learn.microsoft.com/azure/aks/csi-secrets-store-driver
- AKS, Workload identity: https://learn.microsoft.com/azure/aks/workload-identity-overview
"""

import math
import re
from collections import Counter
from functools import cache

from mlops_lint.model.envvars import env_string
from mlops_lint.model.k8s import Container
from mlops_lint.model.placeholder import is_placeholder
from mlops_lint.rule import CONTAINER, Finding, rule

# Known token formats (value patterns), with what to call them in a message.
TOKEN_FORMATS = (
    (r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}", "a Hugging Face token"),
    (r"(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{36,}", "a GitHub token"),
    (r"(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{22,}", "a GitHub token"),
    (r"(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{20,}", "a GitLab token"),
    (r"(?<![A-Za-z0-9])sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}", "an API secret key (sk-…)"),
    (r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])", "an AWS access key"),
    (r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}", "a Google API key"),
    (r"(?<![A-Za-z0-9])xox[abposr]-[0-9A-Za-z-]{10,}", "a Slack token"),
    (r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}", "an npm token"),
    (r"(?<![A-Za-z0-9])[rs]k_live_[0-9A-Za-z]{20,}", "a Stripe key"),
    (r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", "a JSON Web Token"),
    (r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----", "a private key"),
)
# Secrets inside connection strings and URLs: the group is the secret part.
EMBEDDED = (
    (r"(?i)(?:^|;)\s*(?:AccountKey|SharedAccessKey)\s*=\s*([^;\s]+)", "a connection string with an account key"),
    (r"(?i)(?:^|;)\s*SharedAccessSignature\s*=\s*([^;\s]+)", "a connection string with a shared access signature"),
    (r"(?i)(?:^|;)\s*(?:Password|Pwd)\s*=\s*([^;]+)", "a connection string with a password"),
    (r"[?&]sig=([A-Za-z0-9%+/=]{20,})", "a URL with a shared access signature"),
    (r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]*:([^/\s@]+)@(?![^/\s:?#]*\bexample\b)", "a URL with a password"),
)


@cache
def _compiled() -> tuple[tuple[tuple[re.Pattern, str], ...], tuple[tuple[re.Pattern, str], ...]]:
    """TOKEN_FORMATS and EMBEDDED compiled, by the first literal value a container sets (17
    patterns, about 2 ms: a run whose containers set none never compiles them)."""
    return (tuple((re.compile(pattern), what) for pattern, what in TOKEN_FORMATS),
            tuple((re.compile(pattern), what) for pattern, what in EMBEDDED))
# The Azure Storage emulator's (Azurite's) account: its key is published, not a secret.
EMULATOR_ACCOUNT = re.compile(r"(?i)(?:^|;)\s*AccountName\s*=\s*devstoreaccount1\s*(?:;|$)")

CREDENTIAL_WORDS = {"PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "TOKEN", "CREDENTIAL", "CREDENTIALS", "APIKEY",
                    "ACCESSKEY", "SECRETKEY", "PRIVATEKEY"}
KEY_QUALIFIERS = {"API", "ACCESS", "SECRET", "PRIVATE", "ACCOUNT", "STORAGE", "MASTER", "SIGNING", "ENCRYPTION",
                  "CLIENT", "SHARED", "SUBSCRIPTION", "LICENSE", "SERVICE", "APP", "WEBHOOK", "HMAC", "SESSION"}
WEAK_WORDS = {"KEY", "AUTH"}  # count only with a random-looking value
SECRET_SUFFIXES = {"KEY", "VALUE", "STRING", "B64", "BASE64", "RAW", "PLAIN", "PLAINTEXT", "HEX", "TEXT"}
SPECIAL_TOKENS = {"BOS", "EOS", "PAD", "UNK", "SEP", "CLS", "MASK", "SPECIAL", "START", "END", "STOP", "EOT", "BOT",
                  "EOM", "IMAGE", "IMG", "AUDIO", "VIDEO", "SYSTEM", "CHAT", "TOOL", "THINK", "MAX", "MIN", "NUM",
                  "TOTAL", "DEFAULT", "BEGIN", "NEWLINE", "SPACE", "SEPARATOR"}
SWITCHES = {"true", "false", "yes", "no", "on", "off", "none", "null", "nil", "0", "1", "enabled", "disabled",
            "enable", "disable", "required", "optional", "auto", "default", "empty", "unset", "n/a", "na", "-"}

_WORDS = re.compile(r"[A-Z]+[0-9]*(?![a-z])|[A-Z]?[a-z]+[0-9]*|[0-9]+")
_PLACEHOLDER = re.compile(
    r"\$\(|\$\{|\{\{|^\$[A-Za-z_]|<[^<>]*>|^\[[^\]]*\]$|^%[^%]+%$|^(.)\1*$"
    r"|(?i:your[-_ ]|replace[-_ ]?(me|with|this)|change[-_]?me|placeholder|redacted|\bexample\b|\bdummy\b|\btodo\b|fixme|xxx)"
)
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_PATH = re.compile(r"^(?:/|\./|\.\./|~/|file:|[A-Za-z]:\\)|\.(?:json|pem|key|crt|cer|txt|ya?ml|p12|pfx|jks|env|token|der)$",
                   re.IGNORECASE)
_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_SECRET_NAME = re.compile(r"^[a-z0-9]+(?:[-.][a-z0-9]+)*[-.](?:secret|secrets|token|tokens|key|keys|creds|credentials|password)$")


def words(name: str) -> list[str]:
    """``HF_TOKEN`` / ``hfToken`` / ``hf-token`` -> ``["HF", "TOKEN"]``."""
    return [w.upper() for part in re.split(r"[^A-Za-z0-9]+", name) for w in _WORDS.findall(part)]


def _credential_word(ws: list[str], index: int) -> str | None:
    """Whether the word at ``index`` names a credential: "strong", "weak" or None."""
    word, previous, last = ws[index], ws[index - 1] if index else "", index == len(ws) - 1
    if word == "TOKEN" and previous in SPECIAL_TOKENS:
        return None  # a tokenizer's special token (PAD_TOKEN, EOS_TOKEN)
    if word in CREDENTIAL_WORDS or (word == "KEY" and previous in KEY_QUALIFIERS):
        return "strong"
    if last and (word == "PASS" or (word == "PWD" and index > 0)):
        return "strong"  # DB_PASS, MYSQL_PWD (a bare PWD is the working directory)
    if last and word in WEAK_WORDS:
        return "weak"
    return None


def name_strength(name: str) -> str | None:
    """"strong" when the name says the value is a credential, "weak" when it may be, else None.

    The last credential word decides, and only the words that keep it a secret may follow it
    (``TOKEN_VALUE`` is a token, ``TOKEN_PATH`` is not); a weak word right after a credential word
    qualifies it (``TOKEN_KEY`` stays a token).
    """
    ws = words(name)
    found: tuple[int, str] | None = None
    for index in range(len(ws)):
        strength = _credential_word(ws, index)
        if strength == "weak" and found is not None and found[0] == index - 1:
            continue
        if strength is not None:
            found = (index, strength)
    if found is None or not all(w in SECRET_SUFFIXES for w in ws[found[0] + 1:]):
        return None
    return found[1]


def not_a_secret(value: str) -> bool:
    """Placeholders, switches, paths, plain URLs and Secret names: values no credential looks like.
    A whole placeholder by the one test (linter.model.placeholder.is_placeholder: ``IMG_PLACEHOLDER``,
    ``[token|none]``, ``…``) counts, and so do this rule's own stand-ins for a credential
    (``redacted``, ``dummy``, ``xxxx``, a ``<…>`` or ``${…}`` part); a ``$`` inside a value does
    not (``P@ss$word1`` is a literal: Kubernetes expands only ``$(VAR)``)."""
    text = value.strip()
    return (len(text) < 4 or text.lower() in SWITCHES or bool(_PLACEHOLDER.search(text)) or is_placeholder(text) or bool(_ENV_NAME.match(text))
            or bool(_PATH.search(text)) or bool(_URL.match(text)) or bool(_SECRET_NAME.match(text)))


def looks_random(value: str) -> bool:
    text = value.strip()
    if len(text) < 16 or any(ch.isspace() for ch in text):
        return False
    if not (any(ch.isdigit() for ch in text) and any(ch.isalpha() for ch in text)):
        return False
    counts = Counter(text)
    entropy = -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())
    return entropy >= 3.0


def credential(name: str, value: str) -> str | None:
    """What kind of credential ``value`` is (for the message), or None."""
    token_formats, embedded = _compiled()
    for pattern, what in token_formats:
        match = pattern.search(value)
        if match and not _PLACEHOLDER.search(match.group(0)) and len(set(match.group(0))) > 8:
            return what
    emulator = EMULATOR_ACCOUNT.search(value)
    for pattern, what in embedded:
        match = pattern.search(value)
        secret = match.group(1).strip() if match else ""
        if secret and not emulator and not not_a_secret(secret) and not secret.startswith(("{", "*")):
            return what
    strength = name_strength(name)
    if strength is None or not_a_secret(value):
        return None
    if strength == "weak" and not looks_random(value):
        return None
    return "a credential"


@rule(code="SEC006", name="secret-in-env", severity="error", scope=CONTAINER,
      tags=("security", "secrets"), security_severity="7.5")
def check(container: Container, ctx):
    for var in container.env:
        if var.from_ref or var.value is None:
            continue
        what = credential(var.name, env_string(var.value))
        if what is not None:
            yield Finding(var.value_span,
                          f"env `{var.name}` of {container.kind_label} `{container.name}` holds {what} in plain "
                          "text; store it in a Secret and reference it with valueFrom.secretKeyRef",
                          node=var.path + ("value",),
                          fix=f"valueFrom:\n  secretKeyRef:\n    name: <secret>\n    key: {var.name.lower()}")
