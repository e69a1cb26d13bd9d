"""The warehouse's task definitions: long-horizon order chains generated from requests.

``WarehouseOrders`` asks stock questions validated SAY_ONLY (runs without a judge);
``WarehouseOrdersJudged`` has a judge check each answer against the true layout. Both ship
the name-randomization config ``randomization.yaml`` (``--randomized``).
"""

from __future__ import annotations

from magma_core.simulation.data_structures import SituationInit
from magma_core.simulation.tasks import TaskDefinition
from magma_scenarios.warehouse.requests import (
    MoveOrder,
    StockQuestion,
    SwapBoxes,
    Transfer,
    starting_state,
)
from magma_scenarios.warehouse.tools import WarehouseTools
from magma_scenarios.warehouse.world import BOXES, ENV_ID, SLOTS


class WarehouseOrders(TaskDefinition):
    """A chain of move orders, transfers, swaps and stock questions (up to 24 tool calls)."""

    name = "WarehouseOrders"
    maniskill_env_id = ENV_ID
    Tools_cls = WarehouseTools
    situation_init = SituationInit({"objects": list(BOXES), "slots": list(SLOTS)})
    starting_state = starting_state()
    active_requests = [MoveOrder(), Transfer(), SwapBoxes(), StockQuestion(judged=False)]
    randomized_config_path = "randomization.yaml"
    max_target_tool_calls = 24
    max_stages = 16


class WarehouseOrdersJudged(WarehouseOrders):
    """``WarehouseOrders`` whose questions a judge validates (needs ``--judge``)."""

    name = "WarehouseOrdersJudged"
    active_requests = [MoveOrder(), Transfer(), SwapBoxes(), StockQuestion(judged=True)]
