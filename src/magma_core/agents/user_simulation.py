"""User simulation: instructions put in other words, and ``TemplateInstruction`` filled in, by a
model in the user role or by the built-in deterministic paraphraser (no model: tests and CI).

- :class:`RuleParaphraser` (spec ``builtin``): a template per kind of sentence: an imperative
  clause gets a polite frame ("Could you ...?", "I would like you to ...") and maybe a synonym
  of its leading verb, a question a lead-in ("Quick question: ..."); other sentences are kept
  as written. Never a name, number or underscore token changes; chosen with a seed: the same
  text and seed always give the same variant.
- :class:`ModelUser` (spec ``openai:MODEL@URL``, several backends allowed, see
  :mod:`magma_core.agents.backends`): asks the model, with the seed sent as the sampling seed;
  a reply that drops a name of the original (an underscore token, a number) is refused and the
  original kept, so a paraphrase never changes what is asked.

Both remember the variants they gave (:attr:`variants`: original, seed, variant), which the
callers store with what they produce (the bench's ``paraphrase`` condition keeps them in the
item's interventions).
"""

from __future__ import annotations

import copy
import json
import random
import re
from typing import TYPE_CHECKING, Protocol

from magma_core.agents.backends import chat_client
from magma_core.agents.chat_client import ChatError
from magma_core.agents.spec import parse_spec
from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures import TemplateInstruction, UserInstruction
from magma_core.user_error import UserError

if TYPE_CHECKING:  # named for the annotations only
    import httpx

    from magma_core.simulation.tasks import BaseTask

#: frames of an imperative clause (``{}``: the clause, lower-cased, without its full stop)
IMPERATIVE_FRAMES = ("Please {}.", "Could you {}?", "Can you {}?", "I would like you to {}.", "{}, please.")
#: frames of a question (``{}``: the question as written, with its question mark)
QUESTION_FRAMES = ("Quick question: {}", "I would like to know: {}", "Tell me, {}")
#: verbs an instruction may start with (an imperative clause); others are left as they are
VERBS = frozenset("""put place move pick grab take press push bring set stack sort open close turn
switch tell give answer count find clean store fetch deliver empty fill go remember check list
hand get make return swap arrange start stop do keep leave use show say name report describe
wait continue carry lift drop slide rotate load unload pour wipe match group collect gather
line""".split())
#: synonyms of a clause's leading verb, each keeping the rest of the clause grammatical
VERB_SYNONYMS = {"put": ("place", "put"), "place": ("put", "place"), "pick up": ("grab", "take", "pick up"),
                 "press": ("push", "press"), "push": ("press", "push"), "tell me": ("let me know", "tell me")}
#: words a paraphrase must keep: names (underscores), numbers, quoted text
KEPT = re.compile(r"[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+|\d+(?:\.\d+)?|'[^']*'|\"[^\"]*\"")
MAX_VARIANTS = 1000
_LEADS = ("now", "then", "first", "next", "also", "finally")  # openers an imperative may have


class User(Protocol):
    """A simulated user: puts instructions in its own words."""

    variants: list[JSONDict]

    def paraphrase(self, text: str, seed: int, context: str = "") -> str: ...

    def fill_template(self, template: JSONDict, context: str, seed: int) -> str: ...


def kept_words(text: str) -> list[str]:
    """The names and numbers of ``text`` a paraphrase must keep."""
    return KEPT.findall(text)


class RuleParaphraser:
    """The built-in deterministic paraphraser (see the module)."""

    name = "builtin"

    def __init__(self) -> None:
        self.variants: list[JSONDict] = []

    def paraphrase(self, text: str, seed: int, context: str = "") -> str:
        """``text`` in other words: its first sentence framed by the kind it is (an imperative
        clause: "Could you ...?", a question: "Quick question: ...?"), the leading verb of
        an imperative maybe a synonym; a sentence of any other kind is kept as written, so a
        variant is always a sentence a person would say. Names, numbers and quoted text
        never change (else the original is kept)."""
        rng = random.Random(f"{seed}:{text}")
        sentences = re.split(r"(?<=[.!?])\s+", text.strip())
        for index, sentence in enumerate(sentences):
            varied = _vary(sentence, rng)
            if varied != sentence:
                sentences[index] = varied
                break  # one varied sentence per instruction: the rest as the user wrote it
        variant = " ".join(sentences)
        return self._remember(text, seed, variant if kept_words(variant) == kept_words(text) else text)

    def fill_template(self, template: JSONDict, context: str, seed: int) -> str:
        """The template in words: its ``text`` (or ``instruction``) when it has one, else its
        fields as ``name: value`` clauses, paraphrased with ``seed``."""
        base = template.get("text") or template.get("instruction")
        if not isinstance(base, str) or not base.strip():
            base = "; ".join(f"{str(k).replace('_', ' ')}: {v}" for k, v in sorted(template.items())) + "."
        return self.paraphrase(base, seed, context)

    def _remember(self, original: str, seed: int, variant: str) -> str:
        if len(self.variants) < MAX_VARIANTS:
            self.variants.append({"original": original, "seed": seed, "variant": variant, "user": self.name})
        return variant


def _case(word: str, like: str) -> str:
    return word[0].upper() + word[1:] if like[:1].isupper() else word


def _lower_first(text: str) -> str:
    """``text`` with its first letter lower-cased, unless it starts a name (``Zone_a``)."""
    return text if KEPT.match(text) or text[:2] == "I " else text[:1].lower() + text[1:]


def _imperative(clause: str) -> bool:
    """Whether ``clause`` is an imperative: it starts with a verb (after an opener such as
    "Now" or "First,")."""
    words = re.findall(r"[A-Za-z']+", clause.lower())
    while words and words[0] in _LEADS:
        words = words[1:]
    return bool(words) and words[0] in VERBS


def _with_synonym(clause: str, rng: random.Random) -> str:
    """``clause`` with its leading verb (after any opener) maybe replaced by a synonym."""
    match = re.match(r"((?:(?:now|then|first|next|also|finally),?\s+)*)(pick up|tell me|\w+)\b",
                     clause, re.IGNORECASE)
    if not match or match.group(2).lower() not in VERB_SYNONYMS:
        return clause
    verb = match.group(2)
    other = _case(rng.choice(VERB_SYNONYMS[verb.lower()]), verb)
    return clause[: match.start(2)] + other + clause[match.end(2):]


def _vary(sentence: str, rng: random.Random) -> str:
    """One sentence in other words, by its kind (see :meth:`RuleParaphraser.paraphrase`)."""
    body = sentence.rstrip()
    if body.endswith("?"):
        return rng.choice(QUESTION_FRAMES).format(_lower_first(body))
    stripped = body.rstrip(".!")
    head, colon, tail = stripped.partition(": ")
    if colon and not _imperative(head) and _imperative(tail):  # "Someone moved it: put it back."
        return f"{head}: {_lower_first(_frame(tail, rng))}"
    polite = re.match(r"please,?\s+", stripped, re.IGNORECASE)
    if polite and _imperative(stripped[polite.end():]):  # "Please move ...": framed anew
        return _frame(stripped[polite.end():], rng, IMPERATIVE_FRAMES[1:])
    if not _imperative(stripped):
        return sentence
    return _frame(stripped, rng)


def _frame(clause: str, rng: random.Random, frames: tuple[str, ...] = IMPERATIVE_FRAMES) -> str:
    clause = _with_synonym(clause, rng)
    frame = rng.choice(frames)
    if frame.startswith("{}"):
        return frame.format(clause[:1].upper() + clause[1:])
    return frame.format(_lower_first(clause))


PARAPHRASE_PROMPT = (
    "You are the user of a robot operator. Rewrite the user's instruction in other words, as a "
    "person would say it. Keep every object, place and robot name, every number and every "
    "constraint exactly. Answer with the rewritten instruction only."
)
TEMPLATE_PROMPT = (
    "You are the user of a robot operator. Say the request described below in one or two "
    "sentences, as a person would. Keep every name and number exactly. Answer with the "
    "request only."
)


class ModelUser(RuleParaphraser):
    """A model in the user role (``openai:MODEL[@URL]``, or several backends); its replies are
    checked to keep the original's names and numbers (else the original is kept)."""

    def __init__(self, spec: str, *, temperature: float = 0.7, timeout: float = 60.0, retries: int = 1,
                 transport: httpx.BaseTransport | None = None) -> None:
        super().__init__()
        parsed = parse_spec(spec)
        if parsed.kind != "openai":
            raise UserError(f"a simulated user is 'builtin' or openai:MODEL[@BASE_URL], not {spec!r}")
        self.name = spec
        self.temperature = temperature
        self.client = chat_client(parsed.base_url, parsed.model, parsed.backends, parsed.routing,
                                  timeout=timeout, retries=retries, transport=transport)

    def paraphrase(self, text: str, seed: int, context: str = "") -> str:
        user = text if not context else f"{text}\n\n(Conversation so far: {context})"
        answer = self._ask(PARAPHRASE_PROMPT, user, text, seed)
        return self._remember(text, seed, answer if answer is not None else text)

    def fill_template(self, template: JSONDict, context: str, seed: int) -> str:
        described = json.dumps(template, ensure_ascii=False, sort_keys=True)
        answer = self._ask(TEMPLATE_PROMPT, f"Request: {described}\nContext: {context}", described, seed)
        if answer is None:  # refused: the built-in filling
            return super().fill_template(template, context, seed)
        return self._remember(described, seed, answer)

    def _ask(self, system: str, user: str, original: str, seed: int) -> str | None:
        """The model's text, or None when it drops a name or number of ``original``."""
        try:
            reply = self.client.complete([{"role": "system", "content": system}, {"role": "user", "content": user}],
                                         temperature=self.temperature, seed=seed, max_tokens=300)
        except ChatError as exc:
            raise UserError(f"the simulated user {self.name} did not answer: {exc.message}") from None
        content = reply.message.get("content")
        text = content.strip() if isinstance(content, str) else ""
        needed = [w for w in kept_words(original) if not w.startswith(("'", '"'))]
        return None if not text or any(w not in text for w in needed) else text

    def close(self) -> None:
        self.client.close()


def with_simulated_user(task: BaseTask, user: RuleParaphraser, seed: int) -> BaseTask:
    """A copy of ``task`` whose user instructions the simulated ``user`` put in its words
    (seeded by ``seed`` and the stage index) and whose ``TemplateInstruction`` s it filled in."""
    task = copy.deepcopy(task)
    for index, stage in enumerate(task.stages):
        instruction = getattr(getattr(stage, "stage_input", None), "instruction", None)
        if isinstance(instruction, TemplateInstruction):
            instruction.set_content(user.fill_template(instruction.template, instruction.context,
                                                       seed * 1000 + index))
        elif isinstance(instruction, UserInstruction) and (instruction.content or "").strip():
            instruction.content = user.paraphrase(instruction.content, seed * 1000 + index)
    return task


def user_from_spec(spec: str | None, **options: object) -> RuleParaphraser:
    """``builtin`` (or None) -> :class:`RuleParaphraser`; ``openai:...`` -> :class:`ModelUser`."""
    if spec is None or spec.strip() in ("", "builtin"):
        return RuleParaphraser()
    return ModelUser(spec.strip(), **options)
