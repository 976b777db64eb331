"""Each application's command group (``attnkit translation align ...``), from its App, and
hidden aliases for the top-level names those commands had before they moved (kept for one
release; each use prints where the command went)."""

from __future__ import annotations

import functools
import sys

import typer
from typer.models import CommandInfo, TyperInfo


def add_application_groups(app: typer.Typer) -> None:
    """Add every registered application's group to ``app``, and its moved names as aliases."""
    from attnkit.apps import all_apps

    for application in all_apps():
        group = application.commands()
        if group is None:
            continue
        app.add_typer(
            group,
            name=application.group,
            help=f"{application.title}: its own commands.",
            rich_help_panel="Applications",
        )
        for old in application.moved:
            _alias(app, group, old, f"{application.group} {old}")


def _alias(app: typer.Typer, group: typer.Typer, old: str, new: str) -> None:
    """Register the command or subgroup ``old`` of ``group`` on ``app`` under its old name,
    hidden, printing where it moved."""
    for command in group.registered_commands:
        if _name(command) == old:
            app.registered_commands.append(_moved_command(command, old, new))
            return
    for sub in group.registered_groups:
        if sub.name == old:
            app.registered_groups.append(_moved_group(sub, old, new))
            return
    raise RuntimeError(f"no command {old!r} in the group of `attnkit {new}`")


def _name(command: CommandInfo) -> str:
    return command.name or command.callback.__name__.replace("_", "-")


def _moved_command(command: CommandInfo, old: str, new: str) -> CommandInfo:
    callback = command.callback

    @functools.wraps(callback)
    def moved(*args, **kwargs):
        print(f"note: `attnkit {old}` moved to `attnkit {new}`", file=sys.stderr)
        return callback(*args, **kwargs)

    return replace_info(command, name=_name(command), callback=moved, hidden=True)


def _moved_group(info: TyperInfo, old: str, new: str) -> TyperInfo:
    alias = typer.Typer(no_args_is_help=True)
    sub = info.typer_instance
    for command in sub.registered_commands:
        name = _name(command)
        alias.registered_commands.append(_moved_command(command, f"{old} {name}", f"{new} {name}"))
    for inner in sub.registered_groups:
        alias.registered_groups.append(
            _moved_group(inner, f"{old} {inner.name}", f"{new} {inner.name}")
        )
    return TyperInfo(alias, name=old, help=info.help, hidden=True)


def replace_info(info: CommandInfo, **changes) -> CommandInfo:
    """A copy of a Typer CommandInfo with ``changes`` (CommandInfo is no dataclass)."""
    fields = dict(vars(info))
    fields.update(changes)
    return CommandInfo(**fields)
