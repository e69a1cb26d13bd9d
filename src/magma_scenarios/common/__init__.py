"""Building blocks shared by the built-in scenarios (top-down grasps, zone checks, goals)."""
