"""A course declares its own graded parts and next ops (`c.CourseDeclaration`): each entry that
cannot be used is one error naming it and the fix, an op of its own is measured like the pool's
(its verdict checked here against oracles that do not go through viewcopy), drawn from beside the
pool, and a course that declares nothing draws exactly as before."""

from __future__ import annotations

import nbformat
import pytest
from support.course_notebook import SOURCE
from support.oracles import in_place_oracle, numpy_oracle
from traitlets.config import Config

from viewcopy import notebook as lab
from viewcopy.course.assignment import CourseSettingError, grade_id, graded_points
from viewcopy.course.check import declaration_problems, own_op_failures, release_declaration
from viewcopy.course.settings import course_settings
from viewcopy.exercise import next_ops
from viewcopy.exercise.graded_parts import GRADED_PARTS, DeclarationError, declared_parts
from viewcopy.exercise.next_ops import declared_ops, draw, measure_pool, op_by_id, pool
from viewcopy.plugins.points import parts_call

OWN = [
    {"op": "x.t().unflatten(0, (3, 2))", "family": "strides"},
    {"op": "x.narrow(1, 0, 3).contiguous()", "family": "index", "parent": "x_colmajor"},
    {"op": "x.mT.view(torch.float64)", "family": "dtype"},
]
"""Three ops of a course's own: a view, a copy and one PyTorch refuses, by the oracles below."""
PARTS = [
    {"name": "predict", "cells": ["score_predictions", "check_rules_after"], "what": "the twenty",
     "minutes": 25},
    {"name": "transfer", "cells": ["score_next"], "what": "ten unseen ops", "minutes": 10},
    {"name": "explain", "cells": [f"{kind}_{n}" for n in range(21, 26)
                                  for kind in ("answer", "specific")],
     "what": "the five", "minutes": 20},
    {"name": "production", "cells": ["score_production"], "what": "the model", "minutes": 10},
    {"name": "classify", "cells": ["test_classify_visible", "test_classify_hidden"],
     "what": "classify", "minutes": 10, "stretch": True},
]  # fmt: skip


@pytest.fixture
def course_ops():
    """The course's own ops drawn from in this process; the shipped pool alone again after."""
    ops = declared_ops(OWN)
    next_ops.use_course_ops(ops)
    yield ops
    next_ops.use_course_ops(())


def config(**declaration) -> Config:
    return Config({"CourseDeclaration": declaration})


@pytest.mark.parametrize(
    ("entries", "said"),
    [
        ([{"name": "a", "cells": ["x"], "what": "w"}], "part 1 ('a'): missing minutes"),
        ([{**PARTS[0], "points": 3}], "part 1 ('predict'): unknown points"),
        ([{**PARTS[0], "minutes": "20"}], "minutes is '20'; it must be a whole number"),
        ([{**PARTS[0], "cells": []}], "cells must list the grade ids"),
        ([PARTS[0], {**PARTS[1], "cells": ["score_predictions"]}], "already in part 'predict'"),
        ([PARTS[0], {**PARTS[1], "name": "predict"}], "another part has that name"),
        (["predictions"], "part 1 is a str, not a dict"),
    ],
)
def test_a_part_that_cannot_be_used_is_named_with_the_fix(entries, said):
    with pytest.raises(DeclarationError, match="^part ") as caught:
        declared_parts(entries)
    assert said in str(caught.value)
    with pytest.raises(CourseSettingError, match=r"c\.CourseDeclaration\.parts in nbgrader_"):
        course_settings(config(parts=entries))


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ({"op": "x.t()", "family": "stride"}, "family 'stride' is not one of index, gather"),
        ({"op": "x.t()", "family": "strides", "parent": "y"}, "parent 'y' is not one of x, "),
        ({"op": "x.t(", "family": "strides"}, "is not a valid Python expression"),
        ({"op": "x.t()", "family": "strides"}, "already in the twenty or the pool"),
        ({"op": "x.flatten()", "family": "flatten"}, "already in the twenty or the pool"),
        ({"op": "x.t()", "family": "strides", "why": "?"}, "must be a dict of op, family, parent"),
    ],
)
def test_an_own_op_that_cannot_be_used_is_named_with_the_fix(entry, said):
    with pytest.raises(DeclarationError, match="^next op C01") as caught:
        declared_ops([entry])
    assert said in str(caught.value)
    with pytest.raises(CourseSettingError, match=r"next_ops in nbgrader_config\.py: next op C01"):
        course_settings(config(next_ops=[entry]))


def test_own_ops_are_measured_like_the_pools_and_drawn_beside_it(course_ops):
    assert [op.id for op in course_ops] == ["C01", "C02", "C03"]
    assert pool()[-3:] == course_ops and op_by_id("C02") is course_ops[1]
    measured = measure_pool()
    for op in course_ops:
        oracle = numpy_oracle(op.op, op.parent_expr)
        assert oracle == in_place_oracle(op.op, op.parent_expr), op
        assert measured[op.id].verdict == oracle, op
    assert sorted(measured[op.id].verdict for op in course_ops) == ["copy", "error", "view"]
    drawn = [draw(f"key {n}") for n in range(60)]
    assert any(op in course_ops for ten in drawn for op in ten)
    assert all(len(ten) == 10 for ten in drawn)


def test_a_course_that_declares_nothing_draws_as_before(course_ops):
    keys = [f"key {n}" for n in range(40)]
    with_own = [draw(key) for key in keys]
    next_ops.use_course_ops(())
    shipped = [draw(key) for key in keys]
    assert all(op.id.startswith("N") for ten in shipped for op in ten)
    assert with_own != shipped  # the course's own change the course's draws, only its own
    assert course_settings(Config()).next_ops == () and pool() == next_ops.POOL


def test_an_own_op_that_does_not_run_is_named_and_a_refusal_is_a_verdict():
    ops = declared_ops([{"op": "x.no_such_method()", "family": "strides"}, OWN[2]])
    (failure,) = own_op_failures(ops)
    assert failure.startswith("next op C01 ('x.no_such_method()' on x) does not run: ")
    assert "no_such_method" in failure


def test_declared_parts_are_checked_against_the_master():
    points = graded_points(nbformat.read(SOURCE, 4))
    settings = course_settings(config(parts=PARTS))
    assert declaration_problems(settings, points, "cfg") == []
    wrong = [*PARTS[:3], {**PARTS[3], "cells": ["score_model"]}, {**PARTS[4], "cells": [
        "test_classify_visible", "test_classify_hidden", "test_classify_extra"]}]  # fmt: skip
    said = [str(p) for p in declaration_problems(course_settings(config(parts=wrong)), points, "c")]
    assert said == [
        "c: part 'production' holds none of the master's graded cells (score_model); name its "
        "cells' grade ids, or remove the part",
        "c: part 'classify' names 'test_classify_extra', which the master does not grade; remove "
        "it from the part, or give the master that graded cell",
        "c: graded cell 'score_production' is in no part of c.CourseDeclaration.parts; add it "
        "to the part it belongs to",
    ]


def test_the_release_carries_the_declaration_and_its_kernel_shows_and_draws_it():
    master = nbformat.read(SOURCE, 4)
    points = graded_points(master)
    settings = course_settings(config(parts=PARTS, next_ops=OWN))
    assert parts_call(points, course_settings(Config())) == "lab.parts()"
    call = parts_call(points, settings)
    for cell in master.cells:
        if grade_id(cell) == "parts":
            cell.source = call
    assert release_declaration(master) == (settings.parts, settings.next_ops)
    assert release_declaration(nbformat.read(SOURCE, 4)) == (GRADED_PARTS, ())
    try:
        table = eval(call, {"lab": lab}).frame  # the cell as the student's kernel runs it
        assert pool()[-3:] == settings.next_ops
    finally:
        next_ops.use_course_ops(())
    assert list(table.index) == ["predict", "transfer", "explain", "production",
                                 "classify (stretch)", "total"]  # fmt: skip
    assert table.loc["predict", "points"] == 7 and table.loc["total", "points"] == 36
    assert table.loc["total", "minutes"] == 75
