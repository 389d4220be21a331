"""Prediction: requests built from an output set's rows, sent to a model, retried and cached."""
