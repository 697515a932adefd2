"""Kubernetes' CEL libraries that the ``cel`` package lacks, registered as functions.

Kubernetes (https://kubernetes.io/docs/reference/using-api/cel/) adds to CEL's standard library:
the extended ``strings`` and ``lists`` libraries, ``regex`` (``find``, ``findAll``), ``url``,
``ip``/``cidr``, ``quantity`` and ``format``. The package's own ``cel.stdlib`` covers most string
and list helpers (``split``, ``join``, ``lowerAscii``, ``sum``, ``min`` …); this module adds the
rest with Kubernetes' semantics.

Values of the Kubernetes types (a quantity, a URL, an IP, a CIDR, a format) travel through CEL as
one-key maps (``{"@quantity": "3/2"}``): the binding converts only plain values. A quantity keeps
its exact value as a fraction's text, so ``quantity("1") == quantity("1000m")`` is true, as
Kubernetes' semantic equality has it. Regular expressions are RE2 (linear time), as in Kubernetes.
"""

from __future__ import annotations

import ipaddress
from fractions import Fraction
from typing import Any
from urllib.parse import urlsplit

_BASE: Any = None


def context(variables: dict[str, Any]) -> Any:
    """A CEL context with Kubernetes' libraries and ``variables`` (the functions are registered once)."""
    global _BASE
    from mlops_lint.cel.loader import engine

    cel = engine()
    if _BASE is None:
        base = cel.Context()
        cel.stdlib.add_stdlib_to_context(base)
        for name, function in FUNCTIONS.items():
            base.add_function(name, function)
        _BASE = base
    _BASE.update(variables)
    return _BASE


class CelError(ValueError):
    """A Kubernetes library function given a value it rejects (an evaluation error, as in Kubernetes)."""


def _tagged(value: Any, tag: str) -> Any:
    if isinstance(value, dict) and len(value) == 1 and tag in value:
        return value[tag]
    return None


# --- quantity ---------------------------------------------------------------------------------

def _parse_quantity(text: Any) -> Fraction | None:
    from mlops_lint.model.quantity import parse_quantity

    if not isinstance(text, str):
        return None
    return parse_quantity(text) if text == text.strip() and text else None


def _q(value: Fraction) -> dict[str, str]:
    return {"@quantity": f"{value.numerator}/{value.denominator}"}


def _qvalue(value: Any) -> Fraction:
    tagged = _tagged(value, "@quantity")
    if tagged is not None:
        return Fraction(tagged)
    if isinstance(value, int) and not isinstance(value, bool):
        return Fraction(value)
    raise CelError("no such overload: expected a quantity")


def quantity(text: Any) -> dict[str, str]:
    value = _parse_quantity(text)
    if value is None:
        raise CelError(f"invalid quantity: {text!r}")
    return _q(value)


def is_quantity(text: Any) -> bool:
    return _parse_quantity(text) is not None


def q_sign(value: Any) -> int:
    number = _qvalue(value)
    return (number > 0) - (number < 0)


def q_is_integer(value: Any) -> bool:
    number = _qvalue(value)
    return number.denominator == 1 and -(2**63) <= number < 2**63


def q_as_integer(value: Any) -> int:
    number = _qvalue(value)
    if number.denominator != 1 or not -(2**63) <= number < 2**63:
        raise CelError("cannot convert value to integer")
    return int(number)


def q_as_float(value: Any) -> float:
    return float(_qvalue(value))


def q_add(a: Any, b: Any) -> dict[str, str]:
    return _q(_qvalue(a) + _qvalue(b))


def q_sub(a: Any, b: Any) -> dict[str, str]:
    return _q(_qvalue(a) - _qvalue(b))


def q_less(a: Any, b: Any) -> bool:
    return _qvalue(a) < _qvalue(b)


def q_greater(a: Any, b: Any) -> bool:
    return _qvalue(a) > _qvalue(b)


def q_compare(a: Any, b: Any) -> int:
    x, y = _qvalue(a), _qvalue(b)
    return (x > y) - (x < y)


# --- regex (RE2) ------------------------------------------------------------------------------

def _regex(pattern: Any) -> Any:
    from mlops_lint.validation.regex import finder

    if not isinstance(pattern, str):
        raise CelError("no such overload: a regular expression is a string")
    compiled = finder(pattern)
    if compiled is None:
        raise CelError(f"invalid regular expression: {pattern!r}")
    return compiled


def find(text: Any, pattern: Any) -> str:
    match = _regex(pattern).search(text if isinstance(text, str) else "")
    return match.group(0) if match else ""


def find_all(text: Any, pattern: Any, limit: Any = -1) -> list[str]:
    found = [m.group(0) for m in _regex(pattern).finditer(text if isinstance(text, str) else "")]
    return found if not isinstance(limit, int) or limit < 0 else found[:limit]


# --- lists ------------------------------------------------------------------------------------

def is_sorted(items: Any) -> bool:
    if not isinstance(items, list):
        raise CelError("no such overload: isSorted takes a list")
    try:
        return all(items[i] <= items[i + 1] for i in range(len(items) - 1))
    except TypeError:
        raise CelError("no such overload: the list mixes types") from None


def index_of(where: Any, what: Any, start: Any = None) -> int:
    if isinstance(where, str):
        begin = 0 if start is None else start
        if not isinstance(what, str) or not isinstance(begin, int) or not 0 <= begin <= len(where):
            raise CelError("index out of range")
        return where.find(what, begin)
    if isinstance(where, list):
        for i, item in enumerate(where):
            if item == what and type(item) is type(what):
                return i
        return -1
    raise CelError("no such overload: indexOf")


def last_index_of(where: Any, what: Any, end: Any = None) -> int:
    if isinstance(where, str):
        if not isinstance(what, str):
            raise CelError("no such overload: lastIndexOf")
        if end is None:
            return where.rfind(what)
        if not isinstance(end, int) or not 0 <= end <= len(where):
            raise CelError("index out of range")
        return where.rfind(what, 0, end + len(what))
    if isinstance(where, list):
        for i in range(len(where) - 1, -1, -1):
            if where[i] == what and type(where[i]) is type(what):
                return i
        return -1
    raise CelError("no such overload: lastIndexOf")


# --- url --------------------------------------------------------------------------------------

def _parse_url(text: Any) -> Any:
    if not isinstance(text, str):
        return None
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        return None
    if not parts.scheme and not text.startswith("/"):
        return None  # Go's url.ParseRequestURI: absolute URL or absolute path
    return parts


def url(text: Any) -> dict[str, str]:
    if _parse_url(text) is None:
        raise CelError(f"URL parse error during conversion from string: {text!r}")
    return {"@url": text}


def is_url(text: Any) -> bool:
    return _parse_url(text) is not None


def _url_parts(value: Any) -> Any:
    text = _tagged(value, "@url")
    if text is None:
        raise CelError("no such overload: expected a URL")
    return urlsplit(text)


def get_scheme(value: Any) -> str:
    return _url_parts(value).scheme


def get_host(value: Any) -> str:
    return _url_parts(value).netloc.rpartition("@")[2]


def get_hostname(value: Any) -> str:
    return _url_parts(value).hostname or ""


def get_port(value: Any) -> str:
    host = get_host(value)
    if host.endswith("]"):
        return ""
    return host.rpartition(":")[2] if ":" in host else ""


def get_escaped_path(value: Any) -> str:
    return _url_parts(value).path


def get_query(value: Any) -> dict[str, list[str]]:
    from urllib.parse import parse_qs

    return {k: v for k, v in parse_qs(_url_parts(value).query, keep_blank_values=True).items()}


# --- ip and cidr ------------------------------------------------------------------------------

def _parse_ip(text: Any) -> Any:
    if not isinstance(text, str) or "%" in text:
        return None
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return None  # Kubernetes rejects IPv4-mapped IPv6 addresses
    return address


def ip(text: Any) -> dict[str, str]:
    if _parse_ip(text) is None:
        raise CelError(f"IP Address {text!r} parse error during conversion from string")
    return {"@ip": text}


def is_ip(text: Any) -> bool:
    return _parse_ip(text) is not None


def _address(value: Any) -> Any:
    text = _tagged(value, "@ip")
    if text is not None:
        return ipaddress.ip_address(text)
    if isinstance(value, str) and _parse_ip(value) is not None:
        return ipaddress.ip_address(value)
    raise CelError("no such overload: expected an IP")


def ip_is_canonical(text: Any) -> bool:
    address = _parse_ip(text)
    if address is None:
        raise CelError(f"IP Address {text!r} parse error during conversion from string")
    return str(address) == text


def family(value: Any) -> int:
    tagged = _tagged(value, "@cidr")
    if tagged is not None:
        return ipaddress.ip_network(tagged, strict=False).version
    return _address(value).version


def is_unspecified(value: Any) -> bool:
    return _address(value).is_unspecified


def is_loopback(value: Any) -> bool:
    return _address(value).is_loopback


def is_link_local_multicast(value: Any) -> bool:
    address = _address(value)
    if address.version == 4:
        return address in ipaddress.ip_network("224.0.0.0/24")
    return address.is_multicast and (int(address) >> 112) & 0xF == 2


def is_link_local_unicast(value: Any) -> bool:
    return _address(value).is_link_local and not _address(value).is_multicast


def is_global_unicast(value: Any) -> bool:
    address = _address(value)
    if address.version == 4 and address == ipaddress.ip_address("255.255.255.255"):
        return False
    return not (address.is_unspecified or address.is_loopback or address.is_multicast or address.is_link_local)


def _parse_cidr(text: Any) -> Any:
    if not isinstance(text, str) or "/" not in text:
        return None
    address, _, _ = text.partition("/")
    if _parse_ip(address) is None:
        return None
    try:
        return ipaddress.ip_interface(text)
    except ValueError:
        return None


def cidr(text: Any) -> dict[str, str]:
    if _parse_cidr(text) is None:
        raise CelError(f"network address parse error during conversion from string: {text!r}")
    return {"@cidr": text}


def is_cidr(text: Any) -> bool:
    return _parse_cidr(text) is not None


def _network(value: Any) -> Any:
    text = _tagged(value, "@cidr")
    if text is None:
        raise CelError("no such overload: expected a CIDR")
    return ipaddress.ip_interface(text)


def contains_ip(value: Any, other: Any) -> bool:
    network = _network(value).network
    address = _address(other)
    return address.version == network.version and address in network


def contains_cidr(value: Any, other: Any) -> bool:
    network = _network(value).network
    text = _tagged(other, "@cidr") if not isinstance(other, str) else other
    inner = _parse_cidr(text)
    if inner is None:
        raise CelError("no such overload: expected a CIDR")
    return inner.network.version == network.version and inner.network.subnet_of(network)


def cidr_ip(value: Any) -> dict[str, str]:
    return {"@ip": str(_network(value).ip)}


def masked(value: Any) -> dict[str, str]:
    return {"@cidr": str(_network(value).network)}


def prefix_length(value: Any) -> int:
    return _network(value).network.prefixlen


# --- format -----------------------------------------------------------------------------------

def _dns1123_label(text: str) -> list[str]:
    import re

    errors = []
    if len(text) > 63:
        errors.append("must be no more than 63 characters")
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", text):
        errors.append("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                      "and must start and end with an alphanumeric character")
    return errors


def _dns1123_subdomain(text: str) -> list[str]:
    import re

    errors = []
    if len(text) > 253:
        errors.append("must be no more than 253 characters")
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", text):
        errors.append("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                      "or '.', and must start and end with an alphanumeric character")
    return errors


def _dns1035_label(text: str) -> list[str]:
    import re

    errors = []
    if len(text) > 63:
        errors.append("must be no more than 63 characters")
    if not re.fullmatch(r"[a-z]([-a-z0-9]*[a-z0-9])?", text):
        errors.append("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                      "alphabetic character, and end with an alphanumeric character")
    return errors


def _qualified_name(text: str) -> list[str]:
    import re

    prefix, _, name = text.rpartition("/")
    errors = _dns1123_subdomain(prefix) if "/" in text else []
    if not name or len(name) > 63 or not re.fullmatch(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]", name):
        errors.append("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                      "with an alphanumeric character")
    return errors


def _label_value(text: str) -> list[str]:
    import re

    if len(text) > 63 or not re.fullmatch(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", text):
        return ["a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                "and must start and end with an alphanumeric character"]
    return []


def _uri(text: str) -> list[str]:
    return [] if _parse_url(text) is not None else ["must be a valid URI"]


def _uuid(text: str) -> list[str]:
    import re

    return [] if re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", text) else [
        "must be a lowercase UUID in 8-4-4-4-12 format"]


def _byte(text: str) -> list[str]:
    import base64
    import binascii

    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return ["must be base64 encoded"]
    return []


def _date(text: str) -> list[str]:
    from datetime import date

    try:
        date.fromisoformat(text)
    except ValueError:
        return ["must be a date in 2006-01-02 format"]
    return [] if len(text) == 10 else ["must be a date in 2006-01-02 format"]


def _datetime(text: str) -> list[str]:
    from datetime import datetime

    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return ["must be a RFC3339 date-time"]
    return []


FORMATS = {
    "dns1123Label": _dns1123_label, "dns1123Subdomain": _dns1123_subdomain, "dns1035Label": _dns1035_label,
    "qualifiedName": _qualified_name, "dns1123LabelPrefix": _dns1123_label,
    "dns1123SubdomainPrefix": _dns1123_subdomain, "dns1035LabelPrefix": _dns1035_label, "labelValue": _label_value,
    "uri": _uri, "uuid": _uuid, "byte": _byte, "date": _date, "datetime": _datetime,
}


def _format_factory(name: str) -> Any:
    def factory() -> dict[str, str]:
        return {"@format": name}

    return factory


def validate(fmt: Any, text: Any) -> Any:
    from mlops_lint.cel.loader import engine

    cel = engine()
    name = _tagged(fmt, "@format")
    if name not in FORMATS or not isinstance(text, str):
        raise CelError("no such overload: validate")
    errors = FORMATS[name](text)
    return cel.OptionalValue.of(errors) if errors else cel.OptionalValue.none()


FUNCTIONS: dict[str, Any] = {
    "quantity": quantity, "isQuantity": is_quantity, "sign": q_sign, "isInteger": q_is_integer,
    "asInteger": q_as_integer, "asApproximateFloat": q_as_float, "add": q_add, "sub": q_sub,
    "isLessThan": q_less, "isGreaterThan": q_greater, "compareTo": q_compare,
    "find": find, "findAll": find_all,
    "isSorted": is_sorted, "indexOf": index_of, "lastIndexOf": last_index_of,
    "url": url, "isURL": is_url, "getScheme": get_scheme, "getHost": get_host, "getHostname": get_hostname,
    "getPort": get_port, "getEscapedPath": get_escaped_path, "getQuery": get_query,
    "ip": ip, "isIP": is_ip, "ip.isCanonical": ip_is_canonical, "family": family,
    "isUnspecified": is_unspecified, "isLoopback": is_loopback, "isLinkLocalMulticast": is_link_local_multicast,
    "isLinkLocalUnicast": is_link_local_unicast, "isGlobalUnicast": is_global_unicast,
    "cidr": cidr, "isCIDR": is_cidr, "containsIP": contains_ip, "containsCIDR": contains_cidr,
    "masked": masked, "prefixLength": prefix_length,
    "validate": validate,
    **{f"format.{name}": _format_factory(name) for name in FORMATS},
}
# `cidr("…").ip()` and `ip("…")` share a name: a CIDR's address when given one, else a string's IP.


def _ip_or_cidr_ip(value: Any) -> dict[str, str]:
    if _tagged(value, "@cidr") is not None:
        return cidr_ip(value)
    return ip(value)


FUNCTIONS["ip"] = _ip_or_cidr_ip

__all__ = ["FUNCTIONS", "CelError", "context"]
