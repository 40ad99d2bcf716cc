"""JSON codec for the measure layer's result dataclasses, derived from their type annotations.

:func:`encode` turns a dataclass (or a tuple/list of them, or a plain value) into JSON-able data:
a dataclass becomes ``{"type": name, field: value, ...}``, tuples become lists and non-finite
floats become ``{"float": "inf"}`` (JSON has no infinity). :func:`decode` is the inverse and
**validates** as it goes: every field must be present with a value of its annotated type
(``float``, ``int``, ``bool``, ``str``, ``Optional[X]``, ``tuple[X, ...]`` or one of the known
dataclasses), and only the dataclasses listed in :data:`TYPES` can be built, so an edited or
foreign file can neither create arbitrary objects nor smuggle in a value of the wrong type.
"""

import dataclasses
import math
import types
import typing

import numpy as np

from ._results import Derivation, Estimate, FinitenessReport, Lobe, Shell, TailModel

__all__ = ["encode", "decode", "CodecError", "TYPES"]

#: The dataclasses the codec may build.
TYPES = {cls.__name__: cls for cls in (Estimate, Lobe, Shell, TailModel, FinitenessReport, Derivation)}


class CodecError(ValueError):
    """The data does not match the schema of the expected type."""


def encode(obj):
    """JSON-able data for ``obj`` (see the module docstring)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out = {"type": type(obj).__name__}
        for f in dataclasses.fields(obj):
            out[f.name] = encode(getattr(obj, f.name))
        return out
    if isinstance(obj, (tuple, list)):
        return [encode(x) for x in obj]
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        value = float(obj)
        return value if math.isfinite(value) else {"float": repr(value)}
    raise TypeError(f"cannot encode {type(obj).__name__}")


def _float(data, where):
    if isinstance(data, dict) and set(data) == {"float"} and data["float"] in ("inf", "-inf", "nan"):
        return float(data["float"])
    if isinstance(data, bool) or not isinstance(data, (int, float)):
        raise CodecError(f"{where}: expected a number, got {type(data).__name__}")
    return float(data)


def decode(data, expected, where="data"):
    """Build a value of type ``expected`` from JSON data, validating every field."""
    origin = typing.get_origin(expected)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(expected)
        if data is None and type(None) in options:
            return None
        inner = [t for t in options if t is not type(None)]
        if len(inner) != 1:
            raise CodecError(f"{where}: unsupported union {expected}")
        return decode(data, inner[0], where)
    if origin is tuple:
        args = typing.get_args(expected)
        if not isinstance(data, list):
            raise CodecError(f"{where}: expected a list, got {type(data).__name__}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(decode(x, args[0], f"{where}[{i}]") for i, x in enumerate(data))
        if len(args) != len(data):
            raise CodecError(f"{where}: expected {len(args)} items, got {len(data)}")
        return tuple(decode(x, t, f"{where}[{i}]") for i, (x, t) in enumerate(zip(data, args)))
    if expected is float:
        return _float(data, where)
    if expected is bool:
        if not isinstance(data, bool):
            raise CodecError(f"{where}: expected true/false, got {type(data).__name__}")
        return data
    if expected is int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise CodecError(f"{where}: expected an integer, got {type(data).__name__}")
        return data
    if expected is str:
        if not isinstance(data, str):
            raise CodecError(f"{where}: expected a string, got {type(data).__name__}")
        return data
    if isinstance(expected, type) and expected.__name__ in TYPES and TYPES[expected.__name__] is expected:
        if not isinstance(data, dict) or data.get("type") != expected.__name__:
            raise CodecError(f"{where}: expected an object of type {expected.__name__}")
        hints = typing.get_type_hints(expected)
        names = [f.name for f in dataclasses.fields(expected)]
        extra = sorted(set(data) - set(names) - {"type"})
        missing = [n for n in names if n not in data]
        if extra or missing:
            raise CodecError(
                f"{where}: {expected.__name__} fields do not match (missing {missing}, unexpected {extra})"
            )
        return expected(**{n: decode(data[n], hints[n], f"{where}.{n}") for n in names})
    raise CodecError(f"{where}: cannot decode type {expected!r}")
