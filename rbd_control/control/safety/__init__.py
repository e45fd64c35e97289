"""What keeps the loop safe: checks.py (state mapping and checks, watchdog, effort limit, safe
commands), age_guard.py (late states soften the feedback), health.py (loop statistics for
/diagnostics).
"""
