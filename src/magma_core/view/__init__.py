"""Layer 8: ``magma view``, a local web viewer over the run store.

``create_app(folder)`` is the FastAPI app (read-only over ``folder/magma.db``: runs, benchmark
runs, generations); ``serve`` runs it on 127.0.0.1. The viewer makes no pictures of its own:
an episode's video is what ``magma_core.runs.videos`` (the render package over the store)
gives it, and camera images are the bytes the store kept.
"""

from magma_core.view.app import create_app
from magma_core.view.server import serve

__all__ = ["create_app", "serve"]
