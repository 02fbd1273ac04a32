"""Answers grouped by what they say, so that an instructor grades each meaning once.

Answers are normalised (case, Unicode forms, spacing, end punctuation); identical normalised
answers are one group before any similarity is computed, and an empty answer is never grouped
with a written one. The distinct written answers are compared by scikit-learn's TF-IDF over word
stems and character n-grams (cosine), then joined by agglomerative clustering with average linkage
under a distance threshold. A group's id is a hash of its question and members, so the same class
gives the same ids on every run, and a group whose members changed cannot be mistaken for it.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

DEFAULT_THRESHOLD = 0.65
"""Cosine distance (0: same words, 1: nothing shared) under which two answers join a group."""
WORD = re.compile(r"[a-z_][a-z0-9_]*|\d+")
STEM_ENDINGS = ("ing", "ies", "es", "ed", "s")


@dataclass(frozen=True)
class AnswerGroup:
    """One question's answers that say the same thing."""

    question: int
    group: str
    students: tuple[str, ...]
    representative: str
    """The member answer closest to all the others (the one to read)."""

    @property
    def size(self) -> int:
        return len(self.students)


def normalised(answer: str) -> str:
    """The answer as compared: NFKC, case-folded, spacing collapsed, end punctuation dropped."""
    text = unicodedata.normalize("NFKC", answer).casefold()
    return " ".join(text.split()).strip(" .;,!")


def _stems(text: str) -> list[str]:
    words = []
    for word in WORD.findall(text):
        for ending in STEM_ENDINGS:
            if len(word) > len(ending) + 3 and word.endswith(ending):
                word = word[: -len(ending)]
                break
        words.append(word)
    return words


def _distances(texts: Sequence[str]):
    """Pairwise cosine distances of `texts` by word stems and character 3-5-grams."""
    from scipy.sparse import hstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_distances
    from sklearn.preprocessing import normalize

    words = TfidfVectorizer(analyzer=_stems, sublinear_tf=True).fit_transform(texts)
    chars = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True)
    both = normalize(hstack([words, chars.fit_transform(texts)]).tocsr())
    return cosine_distances(both)


def _clusters(texts: Sequence[str], threshold: float) -> list[int]:
    """A cluster label per text (texts distinct and non-empty)."""
    if len(texts) < 2:
        return [0] * len(texts)
    from sklearn.cluster import AgglomerativeClustering

    model = AgglomerativeClustering(
        n_clusters=None, metric="precomputed", linkage="average", distance_threshold=threshold
    )
    return list(model.fit_predict(_distances(texts)))


def _representative(texts: Sequence[str], members: Sequence[int], weights: Sequence[int]) -> int:
    """The member with the least weighted distance to the group's answers (ties: shortest)."""
    if len(members) == 1:
        return members[0]
    distances = _distances([texts[i] for i in members])
    totals = [sum(d * weights[members[j]] for j, d in enumerate(row)) for row in distances.tolist()]
    best = min(range(len(members)), key=lambda k: (round(totals[k], 9), len(texts[members[k]])))
    return members[best]


def group_id(question: int, students: Sequence[str]) -> str:
    """A stable id: the question and a hash of the sorted members."""
    digest = hashlib.sha256("\n".join(sorted(students)).encode()).hexdigest()[:6]
    return f"{question}-{digest}"


def group_answers(
    question: int, answers: Mapping[str, str], threshold: float = DEFAULT_THRESHOLD
) -> list[AnswerGroup]:
    """The groups of one question's answers ({student: answer}), largest first."""
    by_text: dict[str, list[str]] = {}
    for student, answer in sorted(answers.items()):
        by_text.setdefault(normalised(answer), []).append(student)
    written = sorted(t for t in by_text if t)
    members: dict[int, list[int]] = {}
    for index, label in enumerate(_clusters(written, threshold)):
        members.setdefault(int(label), []).append(index)
    sized = [len(by_text[t]) for t in written]
    groups = []
    for indices in members.values():
        students = tuple(sorted(s for i in indices for s in by_text[written[i]]))
        shown = _representative(written, indices, sized)
        original = answers[by_text[written[shown]][0]].strip()
        groups.append(AnswerGroup(question, group_id(question, students), students, original))
    if "" in by_text:
        students = tuple(by_text[""])
        groups.append(AnswerGroup(question, group_id(question, students), students, ""))
    return sorted(groups, key=lambda g: (-g.size, g.representative, g.group))
