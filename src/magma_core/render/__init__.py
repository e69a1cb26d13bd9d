"""Layer 6: cameras and videos, the one place everything that makes a picture calls.

* :mod:`.device` — whether this process can render (``render_unavailable``), and the switch
  that turns rendering off whatever the machine (``MAGMA_RENDER=off``);
* :mod:`.frames` — the top-down schematic picture of a recorded world state and the footer;
* :mod:`.video` — the frames of an episode's video and the mp4 writer (ffmpeg of
  ``imageio-ffmpeg``), the video kinds and how ``auto`` resolves;
* :mod:`.rendered` — pictures of stored world states through a world's camera (a
  ``StateCamera`` per world, shared by the videos of one command);
* :mod:`.images` — camera images as the agents, the store and the exports carry them.

Its users sit above it: ``magma runs video`` and ``magma run --videos`` (through
``runs.videos``, which reads the store), the viewer's video route, ``--observe images`` (the run
loop) and the image exports. It imports layers 1-4 only, and the simulator only when a
picture is rendered through a camera: ``import magma_core.render`` needs neither ManiSkill nor
SAPIEN, and nor does a schematic video.
"""

from magma_core.render.device import RENDER_SWITCH, forced_off, render_unavailable, reset_probe

__all__ = ["RENDER_SWITCH", "forced_off", "render_unavailable", "reset_probe"]
