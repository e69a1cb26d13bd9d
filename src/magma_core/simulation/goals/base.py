"""``BaseGoal``: the per-env stage check, and the helpers goals share."""

from __future__ import annotations

from abc import ABC, abstractmethod

import torch

from magma_core.serialization import SpecSerializable, contract_base

SCORE_DTYPE = torch.int64
SCORE_VALUES = (-1, 0, 1)


@contract_base
class BaseGoal(SpecSerializable, ABC):
    """A check of the world: ``verify(obs)`` gives a ``Tensor[N]`` of -1/0/1, one per env.

    ``obs`` is the raw observation of the envs being verified (batch dimension first). A goal
    is pure: it never changes the world. It serialises through its own
    ``_to_spec_arguments()`` when the class defines one, else through its constructor
    arguments read from same-named attributes.
    """

    @abstractmethod
    def verify(self, obs: dict[str, object]) -> torch.Tensor:
        """One score per env: 1 satisfied, 0 pending, -1 failed."""

    def get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        try:
            args = ", ".join(f"{k}={v!r}" for k, v in self._spec_arguments().items())
        except ValueError:
            args = "..."
        return f"{type(self).__name__}({args})"


def object_xy(obs: dict[str, object], name: str) -> torch.Tensor:
    """The ``[N, 2]`` XY positions of ``obs["extra"][name]`` (a pose tensor or ``{"pose": ...}``)."""
    extra = obs.get("extra") if isinstance(obs, dict) else None
    if not isinstance(extra, dict):
        raise KeyError("Goals read obs['extra'], which this observation lacks")
    if name not in extra:
        raise KeyError(f"obs['extra'] has no entry {name!r}; it has {sorted(extra)}")
    entry = extra[name]
    if isinstance(entry, dict):
        entry = entry.get("pose")
    if not isinstance(entry, torch.Tensor) or entry.ndim != 2 or entry.shape[1] < 2:
        raise ValueError(
            f"obs['extra'][{name!r}] must be a [N, 7] pose tensor or a dict with one under 'pose'"
        )
    return entry[:, :2]


def check_score(score: object, num_envs: int | None, where: str) -> torch.Tensor:
    """Normalise a goal's output to a ``Tensor[N]`` of -1/0/1 (``ValueError`` otherwise)."""
    expected = f"an int tensor of length {num_envs if num_envs is not None else 'N'} with -1/0/1"
    if not isinstance(score, torch.Tensor) or score.ndim != 1:
        raise ValueError(f"{where} must return a 1-D tensor, got {_describe(score)}; "
                         f"expected {expected}")
    if num_envs is not None and score.shape[0] != num_envs:
        raise ValueError(f"{where} returned {score.shape[0]} scores for {num_envs} envs; "
                         f"expected {expected}, one per row of the observation")
    if score.dtype == torch.bool or score.dtype.is_floating_point or score.dtype.is_complex:
        raise ValueError(
            f"{where} returned a {str(score.dtype).removeprefix('torch.')} tensor; expected "
            f"{expected} (e.g. `(...).to(torch.int64)` or `.long()`)")
    score = score.to(SCORE_DTYPE)
    if not torch.isin(score, torch.tensor(SCORE_VALUES, device=score.device)).all():
        raise ValueError(f"{where} returned scores outside -1/0/1: {score.tolist()}")
    return score


def _describe(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)}"
    return type(value).__name__
