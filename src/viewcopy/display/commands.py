"""The commands that measure and show: `viewcopy key` (the twenty measured), `probe` (any
expression), `next` (a draw of the next ops), `copies` (a script's copies, line by line) and
`draw` (a stride/storage diagram). Each is declared here with its arguments; cli.py gathers them.
What measures is imported when the command runs, so their `--help` never loads torch."""

from __future__ import annotations

import argparse
from pathlib import Path

from viewcopy.display.formats import FORMATS, render, render_one
from viewcopy.engine.command import MEASUREMENT_FAILED, Command, UsageError
from viewcopy.engine.devices import KNOWN_DEVICES, resolve_devices
from viewcopy.exercise import catalogue

NEXT_COLUMNS = (
    "id",
    "family",
    "parent",
    "op",
    "verdict",
    "same_storage",
    "bytes_allocated",
    "copy_kernels",
    "shape",
    "stride",
)
"""What `viewcopy next` shows of each op, except as JSON (every field)."""


def add_key_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", default="cpu", choices=(*KNOWN_DEVICES, "all"))
    parser.add_argument("--format", default="table", choices=FORMATS)


def run_key(args: argparse.Namespace) -> str:
    from viewcopy.exercise.measured import measure_catalogue

    devices = resolve_devices(args.device)
    return render([e.record() for e in measure_catalogue(devices)], args.format)


KEY = Command(
    "key",
    "the measured table of the twenty, on x and variants",
    add_key_arguments,
    run_key,
    fails_as=MEASUREMENT_FAILED,
)


def add_probe_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("expr", help="an expression on x, e.g. 'x[::2].t()'")
    parser.add_argument("--parent", default=catalogue.PARENT_EXPR, help="expression bound as x")
    parser.add_argument("--device", default="cpu", choices=KNOWN_DEVICES)
    parser.add_argument("--format", default="table", choices=("json", "table"))


def run_probe(args: argparse.Namespace) -> str:
    from viewcopy.engine.measure import measure

    (device,) = resolve_devices(args.device)
    evidence = measure(args.expr, args.parent, device, parent_name=_parent_label(args.parent))
    return render_one(evidence.record(), args.format)


PROBE = Command(
    "probe",
    "the evidence for any expression on x",
    add_probe_arguments,
    run_probe,
    fails_as=MEASUREMENT_FAILED,
)


def add_next_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", default="0", help="any text; the same seed, the same draw")
    parser.add_argument("--count", type=int, default=10, help="how many ops (default %(default)s)")
    parser.add_argument(
        "--all", action="store_true", help="the whole pool (ignores seed and count)"
    )
    parser.add_argument("--format", default="table", choices=FORMATS)


def run_next(args: argparse.Namespace) -> str:
    from viewcopy.exercise import next_ops

    if args.all:
        ops = next_ops.pool()
    else:
        try:
            ops = next_ops.draw(args.seed, args.count)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    return render(next_ops.draw_table(ops), args.format, NEXT_COLUMNS)


NEXT = Command(
    "next",
    "a draw of the next ops (or the whole pool), measured",
    add_next_arguments,
    run_next,
    fails_as=MEASUREMENT_FAILED,
)


def add_copies_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("script", help="a Python file, run as __main__ under the profiler")
    parser.add_argument("--device", default="cpu", choices=KNOWN_DEVICES)
    parser.add_argument("--format", default="table", choices=("table", "csv", "json"))


def run_copies(args: argparse.Namespace) -> str:
    from viewcopy.engine.copies import COPY_COLUMNS, ScriptFailed, copies_in

    try:
        found = copies_in(Path(args.script), args.device)
    except ScriptFailed as exc:
        raise UsageError(str(exc)) from None
    if not found and args.format == "table":  # say it in words rather than an empty table
        return f"no line of {args.script} ran a copy kernel"
    return render([c.record() for c in found], args.format, COPY_COLUMNS)


COPIES = Command(
    "copies",
    "each line of your script that copied, measured",
    add_copies_arguments,
    run_copies,
    fails_as=MEASUREMENT_FAILED,
)


def add_draw_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("expr")
    parser.add_argument("--parent", default=catalogue.PARENT_EXPR)
    parser.add_argument("--device", default="cpu", choices=KNOWN_DEVICES)
    parser.add_argument("--out", required=True, help="the .svg file to write")


def run_draw(args: argparse.Namespace) -> str:
    from viewcopy.display.diagram import Diagram
    from viewcopy.engine.measure import measure

    (device,) = resolve_devices(args.device)
    evidence = measure(args.expr, args.parent, device, parent_name=_parent_label(args.parent))
    Diagram(evidence).save(args.out)
    return f"{evidence.verdict}: wrote {args.out}"


DRAW = Command(
    "draw",
    "the stride/storage diagram of one expression",
    add_draw_arguments,
    run_draw,
    fails_as=MEASUREMENT_FAILED,
)


def _parent_label(parent_expr: str) -> str:
    return "x" if parent_expr == catalogue.PARENT_EXPR else parent_expr
