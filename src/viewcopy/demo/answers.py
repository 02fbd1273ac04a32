"""What the synthetic class writes for the five questions: a few meanings per question, each in
several paraphrases, and the answers every class has (one word, "it depends", nothing).

A student's `Voice` picks one of these per question, so the demo and the tests know which answers
mean the same thing (the partition answer grouping must find) without reading them.
"""

from __future__ import annotations

from dataclasses import dataclass

RIGHT, MISCONCEPTION, ONE_WORD, IT_DEPENDS, EMPTY = (
    "right", "misconception", "one word", "it depends", "empty",
)  # fmt: skip

PARAPHRASES: dict[int, dict[str, tuple[str, ...]]] = {
    21: {
        RIGHT: (
            "view only works when the strides can describe the new shape over the same "
            "storage; reshape falls back to a copy when they cannot.",
            "When no strides over the existing storage describe the new shape, view raises an "
            "error, while reshape quietly falls back to copying into new storage.",
            "reshape = view when the strides can express the new shape over the same storage, "
            "otherwise a copy; view itself never copies, it raises.",
        ),
        MISCONCEPTION: (
            "reshape always copies the tensor and view never does, so reshape is the slow one.",
            "reshape is the slow one because it always makes a full copy of the tensor; view "
            "never does.",
        ),
        ONE_WORD: ("contiguity",),
    },
    22: {
        RIGHT: (
            "the transpose has strides (1, 6), not contiguous, so reshape must copy all 96 bytes "
            "into new storage without telling you.",
            "x.t() swaps the strides to (1, 6); that is not contiguous, so reshape silently "
            "copies all 96 bytes into new storage.",
            "After t() the strides are (1, 6) and not contiguous, so the reshape cannot be a "
            "view: it copies the 96 bytes into new storage and nothing warns you.",
        ),
        MISCONCEPTION: (
            "because t() already copies the data, so you pay twice for the same transpose.",
            "since transpose already makes a copy of the data, you end up paying for it twice.",
        ),
        ONE_WORD: ("transpose",),
    },
    23: {
        RIGHT: (
            "expand uses stride 0, so every index reads the same storage byte: 4 GB logical, "
            "1 byte of storage.",
            "Broadcast dimensions get stride 0 under expand, so every index reads the same single "
            "byte of storage while the logical size is 4 GB.",
            "with stride 0 on the expanded dims every logical index reads one storage byte: the "
            "tensor looks like 4 GB but its storage stays 1 byte.",
        ),
        MISCONCEPTION: (
            "expand compresses the tensor in memory and decompresses it lazily when you read it.",
            "the tensor is stored compressed by expand and only decompressed lazily when read.",
        ),
        ONE_WORD: ("broadcasting",),
    },
    24: {
        RIGHT: (
            ".numpy() needs CPU storage; .cpu() already copied numel * itemsize bytes from the GPU "
            "and numpy then shares that storage.",
            "numpy only works on CPU storage, so the .cpu() before it is the hidden copy of "
            "numel * itemsize bytes off the GPU; numpy then shares that storage.",
            "The hidden copy is .cpu(): it copies numel * itemsize bytes from the GPU into CPU "
            "storage, which .numpy() then shares, since numpy needs CPU memory.",
        ),
        MISCONCEPTION: (
            "numpy cannot read tensors that require grad, you need detach() first.",
            "you must call detach() first, because numpy cannot read a tensor that requires grad.",
        ),
        ONE_WORD: ("device",),
    },
    25: {
        RIGHT: (
            "channels_last via contiguous(memory_format=torch.channels_last) keeps NCHW with "
            "strides (C*H*W, 1, W*C, C) and copies N*C*H*W*4 bytes; permute alone is a view conv "
            "won't take.",
            "Use contiguous(memory_format=torch.channels_last): NCHW shape with strides "
            "(C*H*W, 1, W*C, C), one copy of N*C*H*W*4 bytes; a bare permute is a view with a "
            "shape conv won't take.",
            "permute alone is only a view with a shape conv won't take; "
            "contiguous(memory_format=torch.channels_last) keeps NCHW, strides (C*H*W, 1, W*C, C), "
            "and costs one copy of N*C*H*W*4 bytes.",
        ),
        MISCONCEPTION: (
            "do both, permute then contiguous, it is free because permute is only a view.",
            "permute then contiguous costs nothing since permute is only a view anyway.",
        ),
        ONE_WORD: ("both",),
    },
}
"""Question -> meaning -> paraphrases of it (each says the same thing in other words)."""

SAID_BY_EVERY_CLASS = {IT_DEPENDS: "it depends", EMPTY: ""}


@dataclass(frozen=True)
class Voice:
    """What a student writes for each question: a meaning and which of its paraphrases (the
    index wraps), for all five unless `per_question` overrides one."""

    meaning: str = RIGHT
    paraphrase: int = 0
    per_question: tuple[tuple[int, str, int], ...] = ()

    def choice(self, item: int) -> tuple[str, int]:
        for question, meaning, paraphrase in self.per_question:
            if question == item:
                return meaning, paraphrase
        return self.meaning, self.paraphrase

    def answer(self, item: int) -> str:
        meaning, paraphrase = self.choice(item)
        if meaning in SAID_BY_EVERY_CLASS:
            return SAID_BY_EVERY_CLASS[meaning]
        said = PARAPHRASES[item][meaning]
        return said[paraphrase % len(said)]


def answer_source(item: int, text: str) -> str:
    """The answer cell as a student fills the release's template: a triple-quoted string, with
    the answer on its own line(s) (as typed: one long line)."""
    return f'ANSWER_{item} = """\n{text}\n"""\n' if text else f'ANSWER_{item} = """\n"""\n'
