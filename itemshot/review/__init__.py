"""The review web app."""
