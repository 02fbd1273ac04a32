"""The measuring engine: evaluate an expression, measure a result against its parent, and model
strided layouts. It knows nothing of the lab: no items, no predictions, no grades."""
