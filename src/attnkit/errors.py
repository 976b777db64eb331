"""The errors a user's input can cause. The command line turns each into one line naming the
file, line or field, and exit code 2 (see :mod:`attnkit.cli`)."""


class DataError(ValueError):
    """Bad input data; the message names the file and, where it applies, the line."""
