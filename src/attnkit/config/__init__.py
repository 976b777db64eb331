"""Typed configuration: dataclasses with defaults, YAML read once at the edge.

:func:`load_yaml` reads a YAML file (plus ``--set section.key=value`` overrides) into a
dataclass, checking every key and value against the dataclass' fields, types and bounds
(declared on the fields with :func:`bounded`; :class:`Checked` adds a hook for the rules
between fields). Every problem is a :class:`ConfigError` that names the file, the line (or
the option) and the field.
"""

from attnkit.config.bounds import Bounds, Checked, bounded, check_bounds
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
    "Bounds",
    "Checked",
    "ConfigError",
    "_Where",
    "apply_overrides",
    "bounded",
    "check_bounds",
    "from_dict",
    "load_yaml",
    "parse_overrides",
    "read_yaml",
    "save_yaml",
    "to_dict",
]
