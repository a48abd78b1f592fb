"""ct: Control Tower's command-line client (the standard library only)."""
