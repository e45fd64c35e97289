"""The controller's model: source.py (the model's lifecycle: where the description comes from,
when it is reloaded or refused), prepass.py (large descriptions parsed in a helper process),
plan.py (what the controller needs of one model, with friction and payload corrections).
"""
