"""Whether a rule after is a rule: `rule_after_problem(rule)` is None for a sentence that names what
decides view or copy, else the one sentence that tells the student what is missing.

A student writes a rule after for each item they mispredicted: the rule that would have predicted
the op. It earns only when it says *why*, and the lab's answer to why is always one of a few
things (README: "strides, storage, contiguity, dtype and device decide"). So the judgement is two
questions, asked of each clause of the sentence:

1. **Does the clause name what decides?** `DECIDERS` is that vocabulary, one named regex per
   concept, matched on whole words (an underscore counts as a word's edge, so `is_contiguous`,
   `storage_offset` and `data_ptr` match; `broadcast` does not contain `cast`):

   - *strides*: stride, strides, strided, a step (not "step by step"), a size-1 or singleton
     dimension;
   - *storage*: storage, memory (not "from memory"), buffer, bytes, allocation, the data pointer
     and the storage offset as concepts, aliasing, shared/same/underlying/own/new data;
   - *contiguity*: contiguous, non-contiguous, contiguity, memory layout or format, channels_last,
     row- or column-major, C or Fortran order;
   - *dtype*: dtype, (data) type (not "type of"), casts, conversions, float16/32/64, fp16, bf16,
     half or double as a dtype ("to half", "half precision"; not "half right"), int8-64, precision;
   - *device*: device, CUDA, GPU, CPU, MPS;
   - *behaviour*: what the op's documentation says it does, in the forms students write it: always
     or never then a verdict ("always copies", "is never a view", "never allocates"; not "I always
     mix up view and copy"), a verdict when possible or needed ("a view when it can", "copies only
     if it has to", "else a copy"), raises instead of copying, basic slicing against advanced
     indexing (a list, a tensor, a mask), returns self or its input, a no-op, broadcasting,
     metadata only, or only changing the shape and dims.

   The verdict words "view" and "copy" are not in it: "copy" says what happened, not why. Nor is
   the op's own code: `x.contiguous()`, `x.float()` and `x.to(torch.float16)` carry concept words
   in their names and arguments, so calls of `OP_CALLS` are masked first ("x.contiguous() is a
   view" names nothing), while `is_contiguous()` and `stride()`, which ask a concept, are not.

2. **Is the clause a report of running or looking?** A report says what the student did or saw,
   never why; naming the thing looked at ("I ran it and the strides were the same", "I checked
   data_ptr") does not make it a rule. `REPORTS` are its marks: a first-person action or perception
   verb in the past (I ran, tried, tested, checked, printed, looked, saw, observed, compared,
   guessed, ...; the present "I check the strides first now" is a habit and "I guess" means "I
   think"; a modal "I should have checked the strides" is advice, like the imperative "check the
   strides"), such a verb opening a clause ("tested in the notebook"), a lab
   surface that said or showed ("the reveal said copy", "the explorer showed new storage"), a
   sameness or a value read off in the past ("it was the same object", "the strides were (1, 6)",
   "they matched"). Cognition verbs (thought, forgot, learned, realised) are not reports: "I forgot
   that .t() only swaps strides" states the rule.

A clause joined to a report by "and", a comma or "then" continues the report (what was seen),
unless it states something general in the present tense of its own ("I ran it, transpose just
swaps strides"; a sameness or a value read off is never general); a clause after a reason or a
break (because, since, so, but, a colon, a semicolon, a full stop, a dash, an arrow) starts
afresh. So "I ran it: transpose only swaps strides, so reshape must copy" earns, by its second
clause, and "I ran it and the storage was shared" does not.

A rule earns when **some clause names a decider and is not a report**. Past tense alone is no
report: "reshape had to copy because the transposed strides could not express the new shape"
explains. "It depends on the strides" earns (it names what it depends on); "it depends" does not.
A bare concept ("strides", "stride 0 → view") earns: it names what decides, and where a next op
of the family is drawn the rule is then tested there. The corpus `tests/data/rules/` holds the
phrasings this is held to.
"""

from __future__ import annotations

import re

from viewcopy.exercise.part import RAN_IT

DECIDES = (
    "strides, storage (shared or new memory), contiguity, dtype, device, "
    "or the op's documented behaviour"
)
"""What a rule after names, as the refusals say it."""
EXAMPLE = (
    '"transpose only swaps the strides, so the result is not contiguous and reshape must copy"'
)


def _words(*alternatives: str) -> re.Pattern[str]:
    """Any of `alternatives` (regexes) as whole words: letters or digits never touch their edges,
    underscores and punctuation may (`is_contiguous`, `x.stride()`, `stride-0`)."""
    return re.compile(r"(?<![a-z0-9])(?:" + "|".join(alternatives) + r")(?![a-z0-9])")


VERDICT = r"(?:views?|cop(?:y|ies|ied|ying)|allocat\w*|rais\w*|errors?|shares?|touch\w*)"
DECIDERS: dict[str, re.Pattern[str]] = {
    "strides": _words(
        r"strid(?:e|es|ed|ing)", r"(?<!by )steps?(?! by)", r"size[- ]?(?:1|one)", r"singletons?"
    ),
    "storage": _words(
        r"(?:untyped_)?storage", r"(?<!from )(?<!to )(?<!my )memory", r"buffers?", r"bytes?",
        r"nbytes", r"itemsize", r"element[ _]size", r"allocat\w*", r"malloc", r"data_?ptrs?",
        r"data pointers?", r"pointers?", r"offsets?", r"alias\w*",
        r"shar(?:e|es|ed|ing)\s+(?:[\w']+\s+){0,2}?data",
        r"(?:same|underlying|own|new|fresh)\s+data",
    ),
    "contiguity": _words(
        r"(?:non-?)?contig\w*", r"memory[ _]format", r"channels[ _]last", r"layouts?",
        r"laid out", r"(?:row|column|col)[- ]major", r"[cf][- ]order", r"fortran",
    ),
    "dtype": _words(
        r"d?types?(?!\s+of\b)", r"data[ _]types?", r"cast(?:s|ing|ed)?", r"float(?:16|32|64)",
        r"fp(?:16|32|64)", r"b(?:float)?16", r"half[- ]precision", r"double[- ]precision",
        r"(?:to|into|as|in|from|is|are)\s+(?:a\s+)?(?:half|double)(?!\s+(?:the|of|a|an|its|right)\b)",
        r"int(?:8|16|32|64)", r"precision", r"conver(?:t|ts|ted|ting|sion|sions)",
    ),
    "device": _words(r"devices?", r"cuda", r"gpus?", r"cpus?", r"mps"),
    "behaviour": _words(
        rf"(?:always|never)\s+(?:(?:is|gives|returns|makes|creates|produces|be|a|an|new)\s+){{0,2}}"
        rf"{VERDICT}",
        rf"{VERDICT}(?:\W+[\w']+){{0,3}}?\W+(?:when(?:ever)?|if|where|unless)\s+"
        r"(?:it\s+|that\s+|is\s+|it's\s+)?(?:can|possible|needed|necessary|required|has to|must)",
        r"(?:else|otherwise)\W+(?:it\s+|a\s+)?cop(?:y|ies)",
        r"(?:rais\w*|throws?|errors?|fails?)(?:\W+[\w']+){0,4}?\W+(?:instead|rather than)",
        r"(?:instead of|rather than)\s+cop\w+",
        r"slic(?:e|es|ed|ing)", r"(?:basic|advanced|fancy) index\w*", r"index_select",
        r"index\w*\s+with\s+(?:a\s+|an\s+)?(?:lists?|tensors?|arrays?|masks?|bool\w*|ints?)",
        r"(?:bool(?:ean)?\s+)?mask(?:s|ed|ing)?",
        r"returns?\s+(?:self|itself|x(?!')|its input|the (?:same|original|input) "
        r"(?:tensor|object))",
        r"(?:gives|hands)\s+back\s+(?:x|self|itself|the same tensor)(?!')",
        r"no[- ]op", r"does nothing", r"nothing (?:changes|to (?:do|change|convert))",
        r"broadcast\w*", r"meta-?data",
        r"(?:only|just|merely|simply|purely)(?:\W+[\w']+){0,4}?\W+"
        r"(?:shape|sizes?|dims?|dimensions?|ax[ie]s|indices)",
    ),
}  # fmt: skip
"""What decides view or copy, by concept; a clause that matches one names what decides."""

PAST_ACTS = (
    r"(?:double-|re-)?(?:ran|tried|tested|checked|printed|looked|saw|observed|compared|guessed|"
    r"measured|verified|confirmed|noticed|inspected|executed|profiled)"
)
"""What a student did or perceived at the keyboard, in the past (not what they think or know; the
present "I check the strides" is a habit, "I guess" is "I think")."""
ACTS = rf"(?:{PAST_ACTS}|got|seen|watched|plotted|timed|experimented|(?:(?<=have )|(?<='ve ))run)"
MODAL = r"(?:should|would|could|will|must|need|needs|can|might|shall|always)"
SURFACES = (
    r"(?:output|outputs|reveal|explorer|diagrams?|table|notebook|profiler|printout|answer key|"
    r"cell|screen|spreadsheet|plot|figure)"
)
REPORTS: dict[str, re.Pattern[str]] = {
    "I did": re.compile(rf"\b(?:i|we)(?:'ve|'d|'m)?(?:\s+(?!{MODAL}\b)[\w'-]+){{0,2}}?\s+{ACTS}\b"),
    "did": re.compile(rf"^\W*(?:(?:just|also|then|quickly|first|actually|again)\s+)?{PAST_ACTS}\b"),
    "it showed": re.compile(r"\b(?:came out|turned out|showed|shown|displayed|printed)\b"),
    "the tool said": re.compile(
        rf"\b{SURFACES}(?:\s+[\w']+){{0,2}}?\s+(?:said|says|showed|shows|told|tells|gave|gives|"
        r"displayed|displays|reported|reports|marked|printed|prints)\b"
    ),
    "it was the same": re.compile(
        r"\b(?:was|were|looked|seemed|stayed|remained)\s+(?:[\w']+\s+){0,2}?"
        r"(?:same|identical|equal|different|unchanged)\b|\bmatched\b"
    ),
    "it was (1, 6)": re.compile(r"\b(?:was|were)\s+(?:\(|\[|-?\d|true\b|false\b|none\b)"),
}
"""What marks a clause as a report of running or looking, by kind."""
GENERAL = re.compile(
    r"\b(?:is|are|isn't|aren't|it's|that's|there's|they're|does|doesn't|do|don't|can|can't|cannot|"
    r"must|has|have|hasn't|haven't|needs?|will|won't|would|swaps|shares|keeps|changes|copies|makes|"
    r"gives|returns|moves|uses|sets|adds|removes|drops|inserts|allocates|reads|points|stays|means|"
    r"works|creates|reorders|flips|reuses|touches|owns|depends|decides|requires|raises)\b"
)
"""A verb of its own in the present tense: the clause states something general."""
READ_OFF = re.compile(
    r"\b(?:is|are|was|were|it's|they're|looks?|looked|seems?|seemed|stays?|stayed)\s+"
    r"(?:[\w']+\s+){0,2}?(?:same|identical|equal|different|unchanged)\b|\bmatch(?:es|ed)?\b"
    r"|\b(?:is|are|was|were)\s+(?:\(|\[|-?\d|true\b|false\b|none\b)"
)
"""A sameness or a value read off, in any tense: never general."""

OP_NAMES = r"(?:contiguous|float|half|double|bfloat16|to|cuda|cpu|mps|type|int|long)"
ARGUMENTS = r"\((?:[^()]|\([^()]*\))*\)"
OP_CALLS = re.compile(rf"\.{OP_NAMES}\b(?:{ARGUMENTS})?|(?<![\w.]){OP_NAMES}{ARGUMENTS}")
"""Ops whose names or arguments carry a concept word: `.contiguous()`, `to(torch.float16)`."""
SEPARATOR = re.compile(
    r"(?P<reset>[.!?;](?=\s|$)|:(?=\s|$)|->|=>|→|⇒|\s--?\s|—|–"
    r"|\b(?:because|since|so|therefore|hence|thus|but|though|although|whereas|meaning|cause|cuz|"
    r"as a result|which means|that means|this means|which is why|that's why)\b)"
    r"|(?P<continued>,|&|\band\b|\bthen\b)"
)
"""Where one clause ends: a reason or a break (`reset`), or a list (`continued`)."""


def rule_after_problem(rule: object) -> str | None:
    """None where `rule` names what decides view or copy in a clause that is not a report of
    running or looking (the module's docstring says how); else why not, in one sentence a student
    can act on: what is missing and an example of a rule."""
    if rule is None:
        return f"no rule in RULES_AFTER: write one that names {DECIDES}, e.g. {EXAMPLE}"
    if not isinstance(rule, str):
        kind = type(rule).__name__
        return (
            f"the rule must be a string, got {kind}: write one that names {DECIDES}, e.g. {EXAMPLE}"
        )
    if not rule.strip():
        return f"the rule is empty: name what decides view or copy ({DECIDES}), e.g. {EXAMPLE}"
    plain = _plain(rule)
    clauses = _clauses(plain)
    if any(not reported and _names_decider(clause) for clause, reported in clauses):
        return None
    said = _quoted(rule)
    if any(reported for _, reported in clauses):
        looked_at = any(_names_decider(clause) for clause, _ in clauses)
        what = " (what you looked at is not why it came out so)" if looked_at else ""
        return f"{said}: {RAN_IT}{what}; say why, naming {DECIDES}, e.g. {EXAMPLE}"
    if re.search(r"\b(?:views?|cop(?:y|ies|ied|ying))\b", plain):
        return f"{said} gives a verdict, not what decides it: name {DECIDES}, e.g. {EXAMPLE}"
    return f"{said} names nothing that decides view or copy: name {DECIDES}, e.g. {EXAMPLE}"


def _plain(rule: str) -> str:
    """The rule lower-cased, with typographic quotes made plain, backticks dropped and the calls
    that name an op rather than a concept (`x.contiguous()`, `.to(torch.float16)`) masked."""
    text = rule.lower().replace("\u2019", "'").replace("\u2018", "'").replace("`", "")
    return OP_CALLS.sub(" op ", text)


def _clauses(text: str) -> list[tuple[str, bool]]:
    """Each clause of `text` and whether it reports running or looking: by its own words, or by
    continuing a report it is joined to by "and", a comma or "then"."""
    found: list[tuple[str, bool]] = []
    reporting, start, joined = False, 0, "reset"
    for match in [*SEPARATOR.finditer(text), None]:
        clause = text[start : match.start() if match else len(text)]
        carried = joined == "continued" and reporting and not _general(clause)
        reporting = carried or _reports(clause)
        if clause.strip():
            found.append((clause.strip(), reporting))
        if match:
            start, joined = match.end(), match.lastgroup or "reset"
    return found


def _reports(clause: str) -> bool:
    """Whether the clause says what the student ran, saw or read off (`REPORTS`)."""
    clause = re.sub(r"\bcompared (?:to|with)\b", "versus", clause.strip())
    return any(mark.search(clause) for mark in REPORTS.values())


def _general(clause: str) -> bool:
    """Whether the clause states something general (present tense, not a sameness or a value
    read off): after a comma or "and" it starts afresh rather than continuing a report."""
    return bool(GENERAL.search(clause)) and not READ_OFF.search(clause)


def _names_decider(clause: str) -> bool:
    return any(concept.search(clause) for concept in DECIDERS.values())


def _quoted(rule: str, width: int = 80) -> str:
    flat = " ".join(rule.split())
    return repr(flat if len(flat) <= width else flat[: width - 3] + "...")
