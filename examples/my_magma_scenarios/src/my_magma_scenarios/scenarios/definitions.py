from magma_core.simulation.data_structures import (
    SituationInit,
    StageInput,
    ToolCall,
    UserInstruction,
)
from magma_core.simulation.goals import At
from magma_core.simulation.stage import BaseTaskStage
from magma_core.simulation.tasks import (
    BaseRequest,
    MessageEvent,
    TaskDefinition,
    ToolCallEvent,
    UserEvent,
)
from my_magma_scenarios.scenarios.tools import MyTools


class CubeTo(BaseTaskStage):
    def __init__(self, zone: str):
        self.zone = zone
        self.target_tool_calls = 2  # pick, place: generated tasks need exact targets
        self.max_tool_calls = 4
        super().__init__(
            goals=[At("cube", zone, thresh=0.06)],
            stage_goal_description=f"The cube is in {zone}.",
            stage_input=StageInput(UserInstruction(f"Put the cube in {zone}."), True),
        )

    def _to_spec_arguments(self):
        return {"zone": self.zone}


class MoveCube(BaseRequest):
    """The user asks for the cube in the zone where it is not."""

    def sample_parameters(self, state, rng):
        here = state.relations["object_area"].get("cube")
        return {"zone": rng.choice([z for z in state.attributes["areas"] if z != here])}

    def create_stages(self, state, params):
        return [CubeTo(params["zone"])]

    def perfect_trace(self, state, params):
        zone = params["zone"]
        return [
            UserEvent(f"Put the cube in {zone}."),
            ToolCallEvent([ToolCall("pick", {"object": "cube"})]),
            ToolCallEvent([ToolCall("place", {"area": zone})]),
            MessageEvent(f"The cube is in {zone}."),  # the completion answer
        ]

    def apply_request(self, state, params):
        state.relations["object_area"]["cube"] = params["zone"]
        return state


class Shuffle(TaskDefinition):
    maniskill_env_id = "MagmaCube-v1"
    Tools_cls = MyTools
    situation_init = SituationInit({"objects": ["cube"], "areas": ["zone_a", "zone_b"]})
    active_requests = [MoveCube()]
    max_target_tool_calls = 8  # four moves
    randomized_config_path = "randomization.yaml"
