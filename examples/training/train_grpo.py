"""GRPO on MAGMA's ``rl`` environment with the bench's own protocol, on the CPU: TRL's
``GRPOTrainer`` with a ``rollout_func`` over :class:`magma_core.rl.TrainingEnv` groups.

Each optimizer step takes one training task item and plays ``--group-size`` rollouts of it from
one snapshot (bit-identical worlds), all of them to the episode's end: the policy (the model
being trained, sampled) answers every instruction with a plain reply, a message or
``<tool_call>`` blocks, exactly as ``magma bench run --agent openai:...`` would see it answer
(the same system message and tool schemas, MAGMA's ``chatml-tools`` template, the reply parsed as
the ``openai:`` agent parses it). TRL's ``environment_factory`` cannot do this: it ends a
rollout at the first reply without a tool call, so a text stage would need an ``answer`` tool
that neither the exported rows nor the bench use.

A rollout is one token stream: the opening prompt, then the model's own sampled tokens (in the
loss, ``env_mask`` 1) and the environment's replies rendered by the template (tool results and
the next instruction: in the context, out of the loss, ``env_mask`` 0). The reward is the
episode's (:mod:`magma_core.rl.rewards`: success, budget, failed calls), given by the env when
the rollout ends; the advantages are normalised within the group. Rollouts are stored in the
run store (run ``rl-grpo``) like any run. A reply the env cannot parse stays in this stream
with the env's error after it (the bench's ``openai:`` agent would drop it from its memory).

The LoRA adapter (``train_sft.lora_config``) is merged and the model saved with its tokenizer and
``training.json`` (rewards and seconds per step), as ``train_sft.py`` saves one. Run::

    python examples/training/train_grpo.py --init runs/learning-curve/tuned-trace-n48 \\
        --out runs/grpo --steps 8 --definitions sorting.PerturbedPairSortingTrain --seeds 0-31
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from functools import cached_property
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gguf_model import load_model, plain_model  # noqa: E402
from serve_chat import END_MARKERS, parse_reply  # noqa: E402
from train_sft import lora_config, resolve_precision  # noqa: E402


def seed_range(text: str) -> list[int]:
    """``"0-31"`` or ``"0,4,9"`` as seeds."""
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        seeds += list(range(int(low), int(high) + 1)) if high else [int(low)]
    return seeds


def task_source(definitions: list[str], seeds: list[int]) -> Any:
    """One source of every definition's episodes at ``seeds`` (one world: sorting)."""
    from magma_core.rl import TaskSource

    items = [item for definition in definitions for item in TaskSource.target(definition, seeds)]
    return TaskSource("+".join(definitions), items)


class TokenStream:
    """One rollout's tokens: the prompt, then the model's tokens (mask 1) and the env's (mask 0).
    ``conversation`` is what the template renders the env's replies against: the opening
    messages, each reply as the model wrote it, the env's messages."""

    def __init__(self, tokenizer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> None:
        self.tokenizer, self.tools = tokenizer, tools
        self.conversation = [dict(m) for m in messages]
        self.prompt_ids = self._ids(self._render(self.conversation, True))
        self.completion_ids: list[int] = []
        self.env_mask: list[int] = []
        self._ended_turn = False  # whether the last reply ended with its end-of-turn token

    @cached_property
    def calls(self) -> CallTrie | None:
        """The calls a reply to the offered tools is held to once it starts one (as the tuned
        models are evaluated: every tool offered, the server's tool grammar), else None."""
        texts = call_texts(self.tools)
        return CallTrie(self.tokenizer, texts) if texts else None

    @property
    def ids(self) -> list[int]:
        return self.prompt_ids + self.completion_ids

    def _render(self, messages: list[dict[str, Any]], generation_prompt: bool) -> str:
        return self.tokenizer.apply_chat_template(messages, tools=self.tools or None, tokenize=False,
                                                  add_generation_prompt=generation_prompt)

    def _ids(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def add_reply(self, generated: list[int]) -> str:
        """Append the model's ``generated`` tokens; its reply text (end marker cut)."""
        self.completion_ids += generated
        self.env_mask += [1] * len(generated)
        text = self.tokenizer.decode(generated, skip_special_tokens=False)
        for marker in END_MARKERS:
            text = text.split(marker)[0]
        self.conversation.append({"role": "assistant", "content": text})
        self._ended_turn = bool(generated) and generated[-1] == self.tokenizer.eos_token_id
        return text

    def add_env(self, messages: list[dict[str, Any]]) -> None:
        """Append the env's ``messages`` (and the next generation prompt) as the template renders them."""
        before = self._render(self.conversation, False)
        content = self.conversation[-1]["content"]
        end = before.rfind(content) + len(content) if content else before.rfind(self.tokenizer.eos_token)
        if self._ended_turn and before.startswith(self.tokenizer.eos_token, end):
            end += len(self.tokenizer.eos_token)  # the model's own end-of-turn token is in the stream
        self.conversation += [dict(m) for m in messages]
        after = self._render(self.conversation, True)
        if not after.startswith(before):
            raise RuntimeError("the chat template does not render a conversation as a prefix of its continuation")
        ids = self._ids(before[end:] + after[len(before):])
        self.completion_ids += ids
        self.env_mask += [0] * len(ids)


def call_texts(tools: list[dict[str, Any]]) -> list[str] | None:
    """Every well-formed one-call reply to ``tools`` as the template writes a call: the tools
    whose arguments are all enums (a tool with a free value, such as ``add_area``'s new name, is
    left out: it cannot be listed); None when there is none. What the bench's serving engine
    lets a call be: its tool grammar holds it to the offered tools and their enums."""
    import itertools

    texts = []
    for tool in tools:
        function = tool.get("function") or {}
        properties = (function.get("parameters") or {}).get("properties") or {}
        if any(not isinstance(p, dict) or not p.get("enum") for p in properties.values()):
            continue
        for values in itertools.product(*(p["enum"] for p in properties.values())):
            arguments = json.dumps(dict(zip(properties, values, strict=True)))
            texts.append(f'<tool_call>\n{{"name": {json.dumps(function.get("name"))}, "arguments": {arguments}}}'
                         "\n</tool_call>")
    return texts or None


class CallTrie:
    """The token sequences of ``texts`` (each then the end-of-turn token) as a prefix tree, held
    lazily as llama-server holds a reply under ``tool_choice: auto``: the reply is free until it
    writes the calls' common start (``<tool_call>\n{"name": "``), then held to the tree."""

    def __init__(self, tokenizer: Any, texts: list[str]) -> None:
        self.root: dict[int, Any] = {}
        self.end = tokenizer.eos_token_id
        sequences = [[*tokenizer(text, add_special_tokens=False)["input_ids"], self.end] for text in texts]
        for sequence in sequences:
            node = self.root
            for token in sequence:
                node = node.setdefault(token, {})
        self.trigger: list[int] = []
        for column in zip(*sequences, strict=False):
            if len(set(column)) > 1:
                break
            self.trigger.append(column[0])

    def allowed(self, generated: list[int]) -> list[int] | None:
        """The tokens allowed after ``generated``: None while the reply is free."""
        size = len(self.trigger)
        starts = [k for k in range(len(generated) - size + 1) if generated[k:k + size] == self.trigger]
        if not size or not starts:
            return None
        node = self.root
        for token in generated[starts[-1]:]:
            node = node.get(token)
            if not node:
                return [self.end]  # past a call's end: only the end-of-turn token
        return list(node)


def generate(model: Any, tokenizer: Any, streams: list[TokenStream], max_new_tokens: int,
             temperature: float, autocast: bool, tries: list[CallTrie | None] | None = None) -> list[list[int]]:
    """One sampled reply per stream (batched, left-padded); each cut after its end-of-turn token.
    ``tries``: per stream, the calls its reply is held to (None: free)."""
    import torch

    width = max(len(s.ids) for s in streams)
    pad = tokenizer.pad_token_id
    input_ids = torch.tensor([[pad] * (width - len(s.ids)) + s.ids for s in streams])
    attention = torch.tensor([[0] * (width - len(s.ids)) + [1] * len(s.ids) for s in streams])
    was_training = model.training
    model.eval()
    every = list(range(len(tokenizer)))

    def allowed(row: int, ids: Any) -> list[int]:
        trie = tries[row] if tries else None
        held = trie.allowed(ids[width:].tolist()) if trie is not None else None
        return every if held is None else held

    constrained = {"prefix_allowed_tokens_fn": allowed} if tries and any(tries) else {}
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        out = model.generate(input_ids=input_ids, attention_mask=attention, max_new_tokens=max_new_tokens,
                             do_sample=True, temperature=temperature, top_p=1.0, pad_token_id=pad, **constrained)
    if was_training:
        model.train()
    replies = []
    for row in out[:, width:].tolist():
        cut = row.index(tokenizer.eos_token_id) + 1 if tokenizer.eos_token_id in row else len(row)
        replies.append(row[:cut])
    return replies


def rollout_func(env: Any, tokenizer: Any, settings: dict[str, Any], log: list[dict[str, Any]]) -> Any:
    """TRL's ``rollout_func(prompts, trainer)``: each run of equal prompts (``"item N"``, repeated
    ``num_generations`` times) is one group from one snapshot, played to the end."""

    def rollouts(prompts: list[Any], trainer: Any) -> dict[str, Any]:
        started = time.perf_counter()
        output: dict[str, list[Any]] = {"prompt_ids": [], "completion_ids": [], "env_mask": [], "reward": []}
        runs: list[tuple[int, int]] = []
        for prompt in prompts:
            index = int(str(prompt[-1]["content"] if isinstance(prompt, list) else prompt).split()[-1])
            if runs and runs[-1][0] == index:
                runs[-1] = (index, runs[-1][1] + 1)
            else:
                runs.append((index, 1))
        for index, count in runs:
            group = env.group(index, size=count)
            streams = [TokenStream(tokenizer, o.messages, o.tools) for o in group.reset()]
            live = list(range(count))
            while live:
                tries = [streams[i].calls if settings["call_grammar"] else None for i in live]
                replies = generate(trainer.model, tokenizer, [streams[i] for i in live],
                                   settings["max_new_tokens"], settings["temperature"], settings["autocast"], tries)
                messages: list[Any] = [None] * count
                for i, generated in zip(live, replies, strict=True):
                    # as the bench's serving engine answers: <tool_call> blocks parsed into tool_calls
                    messages[i] = parse_reply(streams[i].add_reply(generated), call_prefix=f"call_{i}")
                results = group.step(messages)
                for i in list(live):
                    result = results[i]
                    if result is None or result.done or len(streams[i].ids) >= settings["max_length"]:
                        live.remove(i)
                    else:
                        streams[i].add_env(result.messages)
            group.close()
            for rollout, stream in zip(group.rollouts, streams, strict=True):
                output["prompt_ids"].append(stream.prompt_ids)
                output["completion_ids"].append(stream.completion_ids)
                output["env_mask"].append(stream.env_mask)
                output["reward"].append(float(rollout.reward))
            log.append({"item": env.source[index].id, "rewards": [float(r.reward) for r in group.rollouts],
                        "statuses": [(r.record or {}).get("status") for r in group.rollouts],
                        "tokens": [len(s.ids) for s in streams],
                        "rollout_seconds": round(time.perf_counter() - started, 1)})
        return {**output, "logprobs": None}

    return rollouts


def episode_reward(completions: list[Any], reward: list[float], **_: Any) -> list[float]:
    """The env's reward of each rollout (passed through from the rollout function)."""
    return list(reward)


def train(init: str | Path, out: str | Path, definitions: list[str], seeds: list[int], steps: int = 8,
          group_size: int = 4, learning_rate: float = 1e-4, max_new_tokens: int = 48, temperature: float = 0.7,
          max_decisions: int = 24, max_length: int = 4096, precision: str = "auto", seed: int = 0,
          lora_r: int = 16, threads: int | None = None, slots: int | None = None,
          call_grammar: bool = True, beta: float = 0.0) -> dict[str, Any]:
    """GRPO for ``steps`` optimizer steps from the merged model ``init``; the merged model,
    its tokenizer and ``training.json`` in ``out``; returns what ``training.json`` holds.
    ``beta``: the KL term's weight against ``init`` (0: none, no reference forward pass; with
    the LoRA adapter the reference is ``init`` itself, the adapter switched off)."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from magma_core.rl import TrainingEnv
    from magma_core.runs import LoopLimits

    started = time.perf_counter()
    precision = resolve_precision(precision, dpo=False)
    model, tokenizer = load_model(init)
    tokenizer.padding_side = "left"
    source = task_source(definitions, seeds)
    prompts = Dataset.from_list([{"prompt": [{"role": "user", "content": f"item {i}"}]} for i in range(len(source))])
    config = GRPOConfig(output_dir=str(Path(out) / "trainer"), max_steps=steps, learning_rate=learning_rate,
                        per_device_train_batch_size=group_size, num_generations=group_size,
                        gradient_accumulation_steps=1, beta=beta, logging_steps=1, save_strategy="no",
                        report_to="none", use_cpu=True, bf16=precision == "bf16", seed=seed,
                        dataloader_num_workers=0, lr_scheduler_type="constant", warmup_steps=0,
                        max_completion_length=max_length, temperature=temperature)
    log: list[dict[str, Any]] = []
    settings = {"max_new_tokens": max_new_tokens, "temperature": temperature, "autocast": precision == "bf16",
                "max_length": max_length, "call_grammar": call_grammar}
    default_threads = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    with TrainingEnv(source, slots=slots or group_size, out=Path(out).parent, name=f"rl-grpo-{Path(out).name}",
                     limits=LoopLimits(max_decisions=max_decisions), backend="cpu") as env:
        # --8<-- [start:trainer]
        trainer = GRPOTrainer(model=model, reward_funcs=[episode_reward], args=config, train_dataset=prompts,
                              processing_class=tokenizer, peft_config=lora_config(lora_r),
                              rollout_func=rollout_func(env, tokenizer, settings, log))
        # --8<-- [end:trainer]
        try:
            output = trainer.train()
        finally:
            torch.set_num_threads(default_threads)
    history = trainer.state.log_history
    train_seconds = float(output.metrics["train_runtime"])
    merged = plain_model(trainer.model.merge_and_unload())
    merged.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    facts = {"init": str(init), "grpo": True, "definitions": definitions, "items": len(source),
             "steps": trainer.state.global_step, "group_size": group_size, "learning_rate": learning_rate,
             "temperature": temperature, "max_new_tokens": max_new_tokens, "max_decisions": max_decisions,
             "precision": precision, "lora_r": lora_r, "call_grammar": call_grammar, "beta": beta,
             "kl": [e.get("kl") for e in history if "kl" in e],
             "train_seconds": round(train_seconds, 1),
             "seconds_per_step": round(train_seconds / max(1, trainer.state.global_step), 1),
             "rollout_seconds": round(sum(g["rollout_seconds"] for g in log), 1),
             "reward_mean": [e.get("reward") for e in history if "reward" in e],
             "reward_std": [e.get("reward_std") for e in history if "reward_std" in e],
             "losses": [e.get("loss") for e in history if "loss" in e], "groups": log,
             "seconds": round(time.perf_counter() - started, 1)}
    (Path(out) / "training.json").write_text(json.dumps(facts, indent=2) + "\n")
    return facts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--init", required=True, help="the merged model folder to start from (e.g. trace SFT)")
    parser.add_argument("--out", required=True, help="folder for the merged model")
    parser.add_argument("--definitions", default="sorting.PerturbedPairSortingTrain",
                        help="training definitions, comma-separated (one world)")
    parser.add_argument("--seeds", default="0-31", help="their seeds: 0-31 or 0,4,9 (keep below the held-out 1000)")
    parser.add_argument("--steps", type=int, default=8, help="optimizer steps (one group each)")
    parser.add_argument("--group-size", type=int, default=4, help="rollouts per group (from one snapshot)")
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--temperature", type=float, default=0.7, help="sampling temperature of the rollouts")
    parser.add_argument("--max-new-tokens", type=int, default=48, help="tokens a reply (as the bench's --max-tokens)")
    parser.add_argument("--max-decisions", type=int, default=24, help="decisions an episode (as the bench's)")
    parser.add_argument("--max-length", type=int, default=4096, help="tokens a rollout's stream stops at")
    parser.add_argument("--precision", choices=("auto", "bf16", "f32"), default="auto")
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    parser.add_argument("--call-grammar", action=argparse.BooleanOptionalAction, default=True,
                        help="hold a reply's tool call to the offered tools and their enums once it starts one, "
                             "as the bench's server does (default on; off: free sampling)")
    parser.add_argument("--beta", type=float, default=0.0,
                        help="weight of the KL term to the --init model (default 0: none)")
    args = parser.parse_args()
    seeds = seed_range(args.seeds)
    if max(seeds) >= 1000:
        raise SystemExit("--seeds: training seeds stay below 1000 (the held-out splits' seeds)")
    facts = train(args.init, args.out, [d.strip() for d in args.definitions.split(",") if d.strip()], seeds,
                  steps=args.steps, group_size=args.group_size, learning_rate=args.learning_rate,
                  max_new_tokens=args.max_new_tokens, temperature=args.temperature,
                  max_decisions=args.max_decisions, max_length=args.max_length, precision=args.precision,
                  threads=args.threads, call_grammar=args.call_grammar, beta=args.beta)
    print(f"GRPO {facts['steps']} steps of {facts['group_size']} rollouts in {facts['train_seconds']:.0f}s "
          f"({facts['seconds_per_step']:.0f}s a step, rollouts {facts['rollout_seconds']:.0f}s); "
          f"reward per step {facts['reward_mean']}; merged model in {args.out}")


if __name__ == "__main__":
    main()
