"""``values_from`` in a ``params_spec`` entry: optional, checked, passed on to the agent."""

from __future__ import annotations

import pytest

from magma_core.simulation.data_structures import ToolExecution
from magma_core.simulation.tools import BaseToolsAPI, register_tool


class Tools(BaseToolsAPI):
    @register_tool(description="Pick.", params_spec={
        "object": {"description": "what", "type": str, "values_from": "objects"},
        "speed": {"description": "how fast", "type": float}}, optional=["speed"])
    def pick(self, obs, env_id, params) -> ToolExecution:
        return ToolExecution(["OK"], None)


def test_values_from_reaches_the_api_description_only_where_declared():
    parameters = Tools().get_api_description()[0]["parameters"]
    assert parameters["object"] == {"description": "what", "type": "str", "required": True, "values_from": "objects"}
    assert "values_from" not in parameters["speed"]


@pytest.mark.parametrize("bad", ["", 3, ["objects"]])
def test_a_bad_values_from_is_refused(bad):
    with pytest.raises(TypeError, match="values_from"):
        register_tool(params_spec={"o": {"description": "d", "type": str, "values_from": bad}})
