"""``UserError``: the one exception type for mistakes a user can fix (an unknown preset, a bad
agent spec, an unreachable agent, a run resumed with other settings, an unopenable store).

It is raised below the command line (drivers, agents, scenario loading) and carries a one-line
message; ``magma`` prints it as ``magma: error: MESSAGE`` and exits with status 2. Python
callers of :func:`magma_core.runs.run` catch it the same way.
"""

from __future__ import annotations


class UserError(Exception):
    """A mistake the user can fix; ``str(exc)`` is one line saying what and how."""
