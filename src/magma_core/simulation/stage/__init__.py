"""Stages: what the agent is asked, how completion is verified, budgets and entry effects.

Scenario stages subclass ``BaseTaskStage``; entry transitions live in
``magma_core.simulation.stage.environment_transition``.
"""

from magma_core.simulation.stage.base import BaseTaskStage
from magma_core.simulation.stage.completion import CompletionAnswerStage
from magma_core.simulation.stage.composite import BaseStageComposite
from magma_core.simulation.stage.environment_transition import BaseStageEnvironmentTransition
from magma_core.simulation.stage.parameters import (
    StageErrorParameters,
    StageGlobalParameters,
    TextOnlyValidationMode,
)
from magma_core.simulation.stage.templates import (
    AskingBaseStage,
    ConstraintBaseStage,
    ModifAttributesBaseStage,
    ScoredQuestionStage,
)

__all__ = [
    "AskingBaseStage",
    "BaseStageComposite",
    "BaseStageEnvironmentTransition",
    "BaseTaskStage",
    "CompletionAnswerStage",
    "ConstraintBaseStage",
    "ModifAttributesBaseStage",
    "ScoredQuestionStage",
    "StageErrorParameters",
    "StageGlobalParameters",
    "TextOnlyValidationMode",
]
