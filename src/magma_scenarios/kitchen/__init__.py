"""The kitchen scenario: a counter with drawers, a lidded box, bowls and objects to put away.

The layout is in ``magma_scenarios.kitchen.world`` and needs no simulator. The world
``MagmaKitchen-v1`` lives in ``magma_scenarios.kitchen.env`` and is registered when that
module is imported (it imports the simulator; this package does not).
"""
