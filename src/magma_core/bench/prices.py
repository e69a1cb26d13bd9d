"""Price tables for the cost rows of ``magma bench report --prices FILE``.

A price table is a YAML or JSON mapping from a model name to its prices in currency per
million tokens, for prompt (``input``) and completion (``output``) tokens::

    gpt-4o-mini: {input: 0.15, output: 0.60}
    qwen2.5-7b-instruct: {input: 0.05, output: 0.10}

A benchmark run's model is the ``MODEL`` of its ``openai:MODEL[@BASE_URL]`` agent; any other
agent is looked up by its whole agent spec (e.g. ``http://127.0.0.1:8000``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from magma_core.agents import parse_spec
from magma_core.user_error import UserError


@dataclass(frozen=True)
class Price:
    """Currency per million prompt (``input``) and completion (``output``) tokens."""

    input: float
    output: float
    model: str = ""

    def cost(self, prompt_tokens: int, completion_tokens: int, unsplit_tokens: int = 0) -> float:
        """The cost of the tokens; tokens stored without the prompt/completion split are
        charged at the input price."""
        return ((prompt_tokens + unsplit_tokens) * self.input + completion_tokens * self.output) / 1e6


def _price_value(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise UserError(f"{where} must be a number >= 0 (currency per million tokens), got {value!r}")
    return float(value)


def read_prices(path: str | Path) -> dict[str, Price]:
    """The price table in ``path`` (YAML or JSON); a one-line :class:`UserError` when it is
    unreadable or malformed."""
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text())  # JSON is YAML
    except OSError as exc:
        raise UserError(f"cannot read the price table {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise UserError(f"the price table {path} is neither YAML nor JSON: {exc}") from None
    if not isinstance(data, dict) or not data:
        raise UserError(f"the price table {path} must map model names to {{input, output}} prices")
    table = {}
    for model, entry in data.items():
        if not isinstance(entry, dict) or set(entry) != {"input", "output"}:
            raise UserError(f"{path}: {model!r} needs exactly 'input' and 'output' prices")
        table[str(model)] = Price(_price_value(entry["input"], f"{path}: {model}.input"),
                                  _price_value(entry["output"], f"{path}: {model}.output"), str(model))
    return table


def model_of(agent: str) -> str:
    """The name a price table knows a run's agent by (see the module docstring)."""
    try:
        spec = parse_spec(agent)
    except ValueError:
        return agent
    return spec.model if spec.kind == "openai" else agent


def price_for(table: dict[str, Price], agent: str, tokens: int, run: str) -> Price | None:
    """The price of the run's model; None for a run without a price and without tokens (a
    trace agent); a :class:`UserError` for a run that used tokens but has no price."""
    model = model_of(agent)
    price = table.get(model)
    if price is None and tokens:
        known = ", ".join(sorted(table))
        raise UserError(f"benchmark run {run!r} used {tokens} tokens of {model!r}, which the "
                        f"price table does not list (it lists: {known})")
    return price
