"""Coaching in ``magma gen``: validated recovery supervision from failed branches.

At a terminal event of a branch (:mod:`.opportunities`) the generator asks a coach
(:mod:`.coaches`: ``trace``, ``openai:MODEL``, ``http://``; what a coach is: :mod:`.coach_protocol`) to diagnose the decision to repair
among the stage's decisions and to propose a repair; :mod:`.manager` stores every request and
answer, keeps the budgets (:mod:`.budgets`) and hands the repairs back to the generator, which
re-executes them from the diagnosed situation's whole-slot snapshot in a free slot (the failed
branch stays as evidence) and lets the agent continue. A coached candidate is a success only
when the engine validates its continuation's stage success.
"""

from magma_core.gen.coaching.coach_protocol import Coach, CoachContext, CoachReply
from magma_core.gen.coaching.coaches import build_coach
from magma_core.gen.coaching.manager import Coaching, CoachingSettings

__all__ = ["Coach", "CoachContext", "CoachReply", "Coaching", "CoachingSettings", "build_coach"]
