"""Exports of an output set for evaluation harnesses (Hugging Face, lmms-eval, VLMEvalKit)."""
