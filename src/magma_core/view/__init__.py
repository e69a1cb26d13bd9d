"""Layer 8: ``magma view``, a local web viewer over the run store, and episode videos.

``create_app(folder)`` is the FastAPI app (read-only over ``folder/magma.db``: runs, benchmark
runs, generations); ``serve`` runs it on 127.0.0.1. :mod:`.video` renders an episode's
top-down replay to an mp4.
"""

from magma_core.view.app import create_app
from magma_core.view.server import serve

__all__ = ["create_app", "serve"]
