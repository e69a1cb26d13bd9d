"""The LeRobot bridge: stored run episodes as a LeRobot v3.0 dataset (``--format lerobot``).

* :mod:`.mapping` — MAGMA's side, plain data in and out: an episode's control steps become
  frames (joint state, commanded action, stage, decision, recovery), its instructions the
  task and per-stage language segments with their verdicts;
* :mod:`.layout` — the v3.0 folder (parquet data and episodes, tasks and subtasks, info and
  stats) written with pyarrow and pandas;
* :mod:`.exporter` — the ``lerobot`` exporter plug-in, registered under the ``magma.export``
  entry-point group (the export layer finds it there and never imports this package);
* :mod:`.camera` — camera frames rendered from each step's stored world (only with a render
  device; without one the dataset has no camera feature and says why).

Episodes need control steps: ``magma run ... --record-control``. LeRobot itself is needed only
to read the dataset (``make test-bridge-lerobot`` loads it with ``LeRobotDataset``).
"""
