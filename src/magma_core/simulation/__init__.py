"""Scenario contract (data structures, stages, goals, errors, tools, tasks) and the engine."""

import warnings

# SAPIEN warns when it is imported on a machine without a Vulkan loader, which is every
# headless machine we run on; the simulation layer handles that case (envs.headless).
warnings.filterwarnings("ignore", message="Failed to find system libvulkan", category=UserWarning)
