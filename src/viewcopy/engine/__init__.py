"""The measuring engine: evaluate an expression, measure a result against its parent, and model
strided layouts. It knows nothing of the lab's content: no predictions, rules or grades, and it
reads no item: an `Evidence` carries the label its caller gives (`item`, the lab's op number)."""
