"""Sort a task's world options into construction options and per-episode reset options.

A key the registered world's constructor accepts (its own ``__init__`` keywords, those of
every base class it forwards ``**kwargs`` to, ManiSkill's ``BaseEnv`` ones, and the few that
``gym.make`` consumes) is a construction option; any other key is a reset option, which is
what the predecessor did with every ``env_options`` key.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Mapping

from mani_skill.utils.registration import REGISTERED_ENVS

logger = logging.getLogger(__name__)

GYM_MAKE_KEYS = frozenset(
    {"max_episode_steps", "disable_env_checker", "autoreset", "apply_api_compatibility"}
)


def constructor_keywords(env_cls: type) -> set[str] | None:
    """Keywords ``env_cls(...)`` accepts, following ``**kwargs`` up the MRO; None when a
    constructor takes ``**kwargs`` that no base class names (anything goes)."""
    names: set[str] = set()
    for cls in env_cls.__mro__:
        init = cls.__dict__.get("__init__")
        if init is None:
            continue
        params = inspect.signature(init).parameters.values()
        names |= {
            p.name
            for p in params
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"
        }
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            return names
    return None


def registered_env_class(env_id: str) -> type | None:
    """The class registered under ``env_id`` with ManiSkill, or None."""
    spec = REGISTERED_ENVS.get(env_id)
    return None if spec is None else spec.cls


def split_world_options(
    env_id: str, env_options: Mapping[str, object]
) -> tuple[dict[str, object], dict[str, object]]:
    """``(construction options, reset options)`` from a task's ``env_options``."""
    options = dict(env_options)
    env_cls = registered_env_class(env_id)
    accepted = None if env_cls is None else constructor_keywords(env_cls)
    if accepted is None:
        return options, {}
    accepted |= GYM_MAKE_KEYS
    construction = {k: v for k, v in options.items() if k in accepted}
    reset = {k: v for k, v in options.items() if k not in accepted}
    if reset:
        logger.info(
            "%s does not take env_options %s at construction: they go to every reset",
            env_id, sorted(reset),
        )
    return construction, reset
