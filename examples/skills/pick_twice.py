"""A skill: pick an object, and if the grasp fails, try once more.

List it in a scenario manifest's ``skills`` mapping and run with ``--skills``.
Run: python examples/skills/pick_twice.py (prints the skill's tool schema name)
"""

# --8<-- [start:skill]
from magma_core.simulation.skills import BaseSkill, CallTick, MessTick, SkillSpec


class PickTwice(BaseSkill):
    """Pick an object; if the grasp fails, try once more."""

    spec = SkillSpec(
        "pick_twice",
        "Pick an object, retrying once if the grasp fails.",
        ["pick"],
        {"object": {"description": "name of the object", "type": "str", "required": True}},
    )

    def start(self):
        self.tries = 1
        return CallTick("pick", {"object": self.arguments["object"]})

    def tick(self, status):
        if status.result or self.tries == 2:
            return MessTick(status.mess, status.result, status.error_flag)
        self.tries += 1
        return CallTick("pick", {"object": self.arguments["object"]})
# --8<-- [end:skill]


if __name__ == "__main__":
    print(PickTwice.spec.name, PickTwice.spec.description)
