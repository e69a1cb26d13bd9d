"""``python -m magma_core.integrations.openenv serve TARGET``: serve a preset or definition's
episodes as an OpenEnv environment on loopback until interrupted (Ctrl-C stores the rollouts
still running as ``truncated``)."""

from __future__ import annotations

import argparse
import sys

from magma_core.integrations.openenv.mapping import REWARD_MODES
from magma_core.integrations.openenv.server import LOOPBACK, MagmaOpenEnvServer, serve
from magma_core.rl import TaskSource, TrainingEnv
from magma_core.user_error import UserError


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m magma_core.integrations.openenv",
                                description="Serve MAGMA's rl environment as an OpenEnv environment.")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="serve TARGET's episodes (a preset or definition: scenario.Name)")
    s.add_argument("target", help="a preset or task definition, e.g. cube.PickPlace")
    s.add_argument("--seeds", default="0", help="comma-separated seeds, one item each (default 0)")
    s.add_argument("--randomized", action="store_true", help="draw each seed's object names")
    s.add_argument("--slots", type=int, default=4, help="engine slots = concurrent sessions (default 4)")
    s.add_argument("--group-size", type=int, default=4, help="members of a group by default (default 4)")
    s.add_argument("--reward-mode", choices=REWARD_MODES, default="terminal",
                   help="an observation's reward: the rl env's terminal reward, or each step's credit")
    s.add_argument("--out", default="runs", help="the run store folder (default runs)")
    s.add_argument("--name", default=None, help="the run name (default rl.TARGET)")
    s.add_argument("--host", default="127.0.0.1", choices=LOOPBACK, help="loopback address")
    s.add_argument("--port", type=int, default=8000)
    s.add_argument("--backend", default="auto", choices=("auto", "cpu", "gpu"))
    return p


def seeds_of(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UserError(f"--seeds takes comma-separated integers, got {text!r}") from None


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        source = TaskSource.target(args.target, seeds_of(args.seeds), randomized=args.randomized)
        with TrainingEnv(source, slots=args.slots, out=args.out, name=args.name, backend=args.backend) as env:
            server = MagmaOpenEnvServer(env, group_size=args.group_size, reward_mode=args.reward_mode)
            print(f"serving {source.name} ({len(source)} items, {env.num_slots} sessions) as OpenEnv "
                  f"environment on ws://{args.host}:{args.port}/ws; rollouts stored in {args.out} "
                  f"(run {env.name})", flush=True)
            serve(server, args.host, args.port)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
