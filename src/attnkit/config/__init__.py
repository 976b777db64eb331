"""Typed configuration: dataclasses with defaults, YAML read once at the edge.

:func:`load_yaml` reads a YAML file (plus ``--set section.key=value`` overrides) into a
dataclass, checking every key and value against the dataclass' fields, types and ranges. Every
problem is a :class:`ConfigError` that names the file, the line (or the option) and the field.
"""

from attnkit.config.convert import ConfigError, _Where
from attnkit.config.loader import (
    apply_overrides,
    from_dict,
    load_yaml,
    parse_overrides,
    read_yaml,
    save_yaml,
    to_dict,
)

__all__ = [
    "ConfigError",
    "_Where",
    "apply_overrides",
    "from_dict",
    "load_yaml",
    "parse_overrides",
    "read_yaml",
    "save_yaml",
    "to_dict",
]
