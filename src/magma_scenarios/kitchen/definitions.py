"""The kitchen scenario's task definitions: long-horizon tasks generated from requests.

``LongKitchen`` asks questions validated SAY_ONLY (runs without a judge);
``LongKitchenJudged`` has a judge check each answer against the kitchen's true state.
Both ship the name-randomization config ``randomization.yaml`` (``--randomized``).
"""

from __future__ import annotations

from magma_core.simulation.data_structures import SituationInit
from magma_core.simulation.tasks import TaskDefinition
from magma_scenarios.kitchen.requests import (
    DrawerRule,
    Fetch,
    KeepOut,
    KitchenRules,
    PutAway,
    TidyCounter,
    WhatInside,
    WhereIs,
    starting_state,
)
from magma_scenarios.kitchen.tools import KitchenTools
from magma_scenarios.kitchen.world import ENV_ID, OBJECTS, PLACES


class LongKitchen(TaskDefinition):
    """Put away, fetch and tidy at the kitchen counter through a chain of requests, with
    questions about what is where (hidden places included) and rules."""

    name = "LongKitchen"
    maniskill_env_id = ENV_ID
    Tools_cls = KitchenTools
    situation_init = SituationInit({"objects": [o.name for o in OBJECTS], "places": list(PLACES)})
    starting_state = starting_state()
    active_requests = [PutAway(), Fetch(), TidyCounter(), WhereIs(), WhatInside(), DrawerRule(),
                       KeepOut()]
    RuleRenderer_cls = KitchenRules
    randomized_config_path = "randomization.yaml"
    max_target_tool_calls = 40
    max_stages = 20


class LongKitchenJudged(LongKitchen):
    """``LongKitchen`` whose questions a judge validates (needs ``--judge``)."""

    name = "LongKitchenJudged"
    active_requests = [PutAway(), Fetch(), TidyCounter(), WhereIs(judged=True),
                       WhatInside(judged=True), DrawerRule(), KeepOut()]
