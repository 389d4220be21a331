"""What a model is asked and how its answer is read: the prompt wording and the answer parsers."""
