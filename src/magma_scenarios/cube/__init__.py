"""The cube scenario: a Panda, a cube and two zones.

The world ``MagmaCube-v1`` lives in ``magma_scenarios.cube.env`` and is registered when that
module is imported (it imports the simulator; this package does not).
"""
