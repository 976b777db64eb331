"""The web server of ``attnkit serve`` (Starlette on uvicorn): a core that names no application.

:func:`serve_app` serves the generic page (:mod:`.page`) for any App with a
:attr:`~attnkit.application.App.serve_input`; an application with a page of its own mounts its
routes on a :class:`~.running.Server` (:meth:`~.running.Server.mount`) and gets the same
transport: loopback by default with the ``Host`` check, the limits of :class:`~.limits.Limits`,
JSON errors (:mod:`.web`, :mod:`.protocol`) and a Ctrl-C that always stops it (:mod:`.ctrl_c`).
"""

from attnkit.server.limits import LIMITS, Limits, RequestError
from attnkit.server.page import make_page_server, serve_app
from attnkit.server.running import Server, serve_until_stopped

__all__ = [
    "LIMITS",
    "Limits",
    "RequestError",
    "Server",
    "make_page_server",
    "serve_app",
    "serve_until_stopped",
]
