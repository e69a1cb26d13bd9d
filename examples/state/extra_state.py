"""Extra state needed for replay: the world's hooks put hidden state into every snapshot.

Save a slot, change it, restore it: the lamp comes back with the physics.
Run: python examples/state/extra_state.py
"""

from __future__ import annotations

from lamp_world import ENV_ID

from magma_core.simulation.envs import SimBatch


def main() -> None:
    # --8<-- [start:main]
    with SimBatch(ENV_ID, 2, seed=0) as sim:
        snapshot = sim.save_slot(1)  # the lamp is off in slot 1

        state = sim.get_state()
        state["magma_extra_state"]["lamp_on"][1] = True
        state["actors"]["cube"][1, 0] = 0.2
        sim.set_state(state, slots=[1])  # change slot 1 only
        assert sim.get_state()["magma_extra_state"]["lamp_on"].tolist() == [False, True]

        sim.restore_slot(1, snapshot)
        restored = sim.get_state()
        print("lamp after restore:", restored["magma_extra_state"]["lamp_on"].tolist(),
              "| cube x:", restored["actors"]["cube"][:, 0].tolist())
        assert restored["magma_extra_state"]["lamp_on"].tolist() == [False, False]
        assert restored["actors"]["cube"][1, 0].item() != 0.2
    # --8<-- [end:main]


if __name__ == "__main__":
    main()
