#!/usr/bin/env bash
# GPU readiness check: run on a machine with CUDA (the project's GPU runs), from the repo root:
#
#     bash benchmarks/gpu_check.sh [SLOTS...]        (default slots: 1 64 1024)
#
# It makes/uses .venv-gpu (torch 2.13.0 with CUDA from PyPI, magma[dev] editable), then
#   1. runs the hidden-state / reproducibility tests (they pin physx_cpu: the reference),
#   2. prints SimBatch figures on physx_cuda at each slot count: env steps/s (step and the
#      motion path step_physics), save_slot / restore_slot, and an engine run (trace agent,
#      cube.PickPlace, one episode per slot) in episodes/min and decisions/s.
# Without CUDA it stops at once with one line and exit status 3. Each part has a time limit
# (GPU_CHECK_LIMIT seconds, default 300) so one hang cannot eat the machine's time.
set -euo pipefail
cd "$(dirname "$0")/.."
SLOTS=("${@:-1 64 1024}")
read -r -a SLOTS <<< "${SLOTS[*]}"
LIMIT="${GPU_CHECK_LIMIT:-300}"
VENV="${GPU_CHECK_VENV:-.venv-gpu}"

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "gpu_check: no CUDA device here (nvidia-smi missing or finds no GPU); run it on a GPU machine" >&2
    exit 3
fi
nvidia-smi -L
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
if [ ! -f "$VENV/.installed" ]; then
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q torch==2.13.0   # the CUDA build on Linux
    "$VENV/bin/python" -m pip install -q -e '.[dev]'
    touch "$VENV/.installed"
fi
PY="$VENV/bin/python"
if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
    echo "gpu_check: torch in $VENV sees no CUDA device (torch $("$PY" -c 'import torch; print(torch.__version__)'))" >&2
    exit 3
fi

echo "== hidden-state and reproducibility tests (physx_cpu reference)"
timeout "$LIMIT" "$PY" -m pytest -q -p no:randomly -n 0 \
    tests/engine/test_slot_tasks.py tests/gen/test_snapshots.py \
    tests/runs/test_world_reproducibility.py tests/simulation/test_sim_batch.py || echo "gpu_check: tests FAILED (status $?)"

for n in "${SLOTS[@]}"; do
    echo "== physx_cuda, $n slot(s)"
    timeout "$LIMIT" "$PY" - "$n" <<'PYEOF' || echo "gpu_check: $n slots FAILED or timed out (status $?)"
import statistics, sys, tempfile, time
from pathlib import Path
import torch
import magma_scenarios.cube.env  # noqa: F401
from magma_core.simulation.envs import SimBatch

n = int(sys.argv[1])
started = time.perf_counter()
sim = SimBatch("MagmaCube-v1", n, seed=0, backend="gpu")
print(f"  built in {time.perf_counter() - started:.1f} s on {sim.device}")
qpos = sim.robot_qpos(0)  # hold the arm where it is, gripper open: pd_joint_pos, 7 + 1
action = torch.cat([qpos[:, :7], torch.ones(n, 1, device=qpos.device)], dim=1)
for name, fn in (("step", sim.step), ("step_physics", sim.step_physics)):
    fn(action); torch.cuda.synchronize()
    t = time.perf_counter(); steps = 50
    for _ in range(steps):
        fn(action)
    torch.cuda.synchronize()
    rate = steps / (time.perf_counter() - t)
    print(f"  {name:13s} {rate:9.1f} batch steps/s = {rate * n:11.0f} slot-steps/s")
snap = sim.save_slot(0)
ts = []
for _ in range(20):
    t = time.perf_counter(); sim.save_slot(n - 1); sim.restore_slot(n - 1, snap); ts.append(time.perf_counter() - t)
print(f"  save+restore one slot: median {statistics.median(ts) * 1e3:.2f} ms")
sim.close()

from magma_core.runs import RunSpec, run
with tempfile.TemporaryDirectory() as tmp:
    t = time.perf_counter()
    result = run(RunSpec(target="cube.PickPlace", episodes=n, slots=n, out=Path(tmp), backend="gpu"))
    wall = time.perf_counter() - t
    ok = sum(s.status == "success" for s in result.summaries)
    decisions = sum(s.decisions for s in result.summaries)
    print(f"  engine run: {n} episodes in {wall:.1f} s = {60 * n / wall:.1f} episodes/min, "
          f"{decisions / wall:.1f} decisions/s, {ok}/{n} successful")
PYEOF
done
