"""Analysis of predictions: accuracy, effects, associations and the reading probe's statistics."""
