"""The ``rl`` environment served as an OpenEnv environment (optional extra ``magma[openenv]``).

- :mod:`.mapping`: MAGMA's side, as plain data (actions to assistant messages, step credit,
  group advantages, reset options, which group a reset joins); no OpenEnv import.
- :mod:`.models`: the OpenEnv ``Action`` / ``Observation`` / ``State`` of the environment.
- :mod:`.server`: one :class:`~magma_core.rl.env.TrainingEnv` behind OpenEnv's server, a
  session per rollout, groups sharing one start snapshot.
- :mod:`.client`: OpenEnv's ``EnvClient`` for it. :mod:`.trl_adapter`: TRL's
  ``environment_factory`` over that client.

``python -m magma_core.integrations.openenv serve cube.PickPlace --seeds 0,1 --port 8000``
serves one (guide: docs/guides/openenv.md). Only the modules above that need OpenEnv import it,
so importing this package (and :mod:`.mapping`) needs no OpenEnv.
"""
