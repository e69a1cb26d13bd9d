"""The sorting scenario: coloured cubes to sort into zones, with one Panda or two.

The layout (names, colours, places) is in ``magma_scenarios.sorting.world`` and needs no
simulator. The worlds ``MagmaSorting-v1`` (one arm) and ``MagmaSortingDuo-v1`` (two arms
side by side) live in ``magma_scenarios.sorting.env`` and are registered when that
module is imported (it imports the simulator; this package does not).
"""
