"""Thin Qt bindings over the model (app.model)."""
